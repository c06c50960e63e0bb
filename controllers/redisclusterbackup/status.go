package redisclusterbackup

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/jobstatus"
)

// jobOutcome is what a backup's status reads of its Job.
type jobOutcome struct {
	jobstatus.Outcome
	phase cachev1.BackupPhase
}

// phases are a backup's phases of its Job's states.
var phases = map[jobstatus.State]cachev1.BackupPhase{
	jobstatus.Pending:   cachev1.BackupPending,
	jobstatus.Running:   cachev1.BackupRunning,
	jobstatus.Succeeded: cachev1.BackupComplete,
	jobstatus.Failed:    cachev1.BackupFailed,
}

// outcomeOf reads a Job's status.
func outcomeOf(job *batchv1.Job) jobOutcome {
	o := jobstatus.Of(job)
	return jobOutcome{Outcome: o, phase: phases[o.State]}
}

// finished reports whether phase is final: a backup is taken once.
func finished(phase cachev1.BackupPhase) bool {
	return phase == cachev1.BackupComplete || phase == cachev1.BackupFailed
}

// setRunning sets the status of a backup whose Job has not finished.
func setRunning(b *cachev1.RedisClusterBackup, out jobOutcome) {
	st := &b.Status
	st.Phase, st.StartTime = out.phase, out.StartTime
	if out.phase == cachev1.BackupRunning {
		st.Message = "Job " + st.JobName + " is taking the backup"
		setReady(b, metav1.ConditionFalse, cachev1.ReasonBackupRunning, st.Message)
		return
	}
	st.Message = "Job " + st.JobName + " has not started"
	setReady(b, metav1.ConditionFalse, cachev1.ReasonBackupPending, st.Message)
}

// setRemoving sets the status of a backup whose Job failed while the
// cleanup Job removes what it stored.
func setRemoving(b *cachev1.RedisClusterBackup, out jobOutcome, cleanupJob string) {
	st := &b.Status
	st.Phase, st.StartTime = cachev1.BackupRunning, out.StartTime
	st.Message = "Job " + st.JobName + " failed; Job " + cleanupJob + " removes what it stored at " + st.Location
	setReady(b, metav1.ConditionFalse, cachev1.ReasonRemovingFailedBackup, st.Message)
}

// afterRemoval adds to a failed backup's status and event message what
// became of its files, and returns the event's message.
func afterRemoval(b *cachev1.RedisClusterBackup, rm removal, event string) string {
	note := "; what it stored was removed"
	if !rm.removed {
		note = "; what it stored at " + b.Status.Location + " is left there: " + rm.why
	}
	st := &b.Status
	st.Message = events.Truncate(st.Message+note, backupreport.MaxMessage)
	if ready := conditions.Get(b, conditions.Ready); ready != nil {
		setReady(b, metav1.ConditionFalse, ready.Reason, st.Message)
	}
	return event + note
}

// completion is the final status of a backup whose Job finished, from the
// Job's outcome and the run's result (nil when it could not be read, with
// why in readErr): Complete only when the Job succeeded and the run says
// every file was stored and verified. It returns the event to record.
func completion(b *cachev1.RedisClusterBackup, out jobOutcome, res *backupreport.Result, readErr error) (eventType, reason, message string) {
	st := &b.Status
	st.StartTime, st.CompletionTime = out.StartTime, out.CompletionTime
	switch {
	case out.phase == cachev1.BackupComplete && res != nil && res.Complete:
		st.Phase = cachev1.BackupComplete
		st.Totals = &cachev1.BackupTotals{Keys: res.Keys, Bytes: res.Bytes, Shards: int32(res.Shards)}
		st.Shards = make([]cachev1.BackupShardStatus, 0, len(res.Files))
		for _, f := range res.Files {
			st.Shards = append(st.Shards, cachev1.BackupShardStatus{File: f.Name, Slots: f.Slots, Keys: f.Keys, Bytes: f.Bytes, SHA256: f.SHA256})
		}
		st.ShardsOmitted = int32(res.Omitted)
		st.Message = fmt.Sprintf("stored and verified %d keys in %d shard files (%d bytes) at %s", res.Keys, res.Shards, res.Bytes, st.Location)
		setReady(b, metav1.ConditionTrue, cachev1.ReasonBackupComplete, st.Message)
		return corev1.EventTypeNormal, cachev1.ReasonBackupComplete, "Backup complete: " + st.Message
	case out.phase == cachev1.BackupComplete:
		reason = cachev1.ReasonBackupResultUnreadable
		message = "Job " + st.JobName + " succeeded, but its result cannot be trusted"
		if readErr != nil {
			message += ": " + readErr.Error()
		} else if res != nil {
			message += ": it does not say the backup is complete"
		}
	case res != nil && !res.Complete:
		reason, message = res.Reason, res.Message
	default:
		reason = cachev1.ReasonBackupFailed
		if out.Reason == batchv1.JobReasonDeadlineExceeded {
			reason = cachev1.ReasonBackupTimedOut
		}
		message = fmt.Sprintf("Job %s failed (%s): %s", st.JobName, out.Reason, out.Message)
	}
	st.Phase = cachev1.BackupFailed
	st.Message = events.Truncate(message, backupreport.MaxMessage)
	setReady(b, metav1.ConditionFalse, reason, st.Message)
	return corev1.EventTypeWarning, reason, "Backup failed: " + st.Message
}

// setReady sets Ready.
func setReady(b *cachev1.RedisClusterBackup, status metav1.ConditionStatus, reason, message string) bool {
	return conditions.Set(b, conditions.Ready, status, reason, message)
}

// record emits the event completion returned.
func record(rec events.Recorder, b *cachev1.RedisClusterBackup, eventType, reason, message string) {
	if eventType == corev1.EventTypeWarning {
		rec.Warning(b, reason, events.ActionReconcile, "%s", message)
		return
	}
	rec.Normal(b, reason, events.ActionReconcile, "%s", message)
}
