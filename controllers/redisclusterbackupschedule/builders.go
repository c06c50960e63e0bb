package redisclusterbackupschedule

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupschedule"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// nameTimeLayout is the tick's part of a backup's name, in UTC, to the
// minute: cron has no finer tick, and the name sorts like the time.
const nameTimeLayout = "200601021504"

// defaultKeepFailed is retention.keepFailed when absent: the newest
// failure stays, so that its status says why.
const defaultKeepFailed = 1

// BackupName is the name of the backup made for tick: <schedule>-<yyyymmddhhmm>
// in UTC, at most 63 characters since admission bounds the schedule's
// name (cachev1.MaxBackupScheduleNameLength). The same tick always gives
// the same name, which makes a create repeated after a crash harmless.
func BackupName(schedule string, tick time.Time) string {
	return schedule + "-" + tick.UTC().Format(nameTimeLayout)
}

// DesiredBackup is the RedisClusterBackup of s for tick: labelled with the
// schedule, annotated with the tick, its spec copied from s.
//
// It has no owner reference, on purpose: a backup outlives its schedule.
// Deleting a schedule (or recreating it with another spec) must not take
// with it, through garbage collection, the backups that are the only copy
// of the data; retention, which keeps the newest complete one, is the only
// way the schedule deletes a backup, and kubectl delete rdcb -l
// cache.example.com/backup-schedule=<name> removes them by hand.
func DesiredBackup(s *cachev1.RedisClusterBackupSchedule, tick time.Time) *cachev1.RedisClusterBackup {
	return &cachev1.RedisClusterBackup{
		ObjectMeta: metav1.ObjectMeta{
			Name:      BackupName(s.Name, tick),
			Namespace: s.Namespace,
			Labels: map[string]string{
				cachev1.LabelBackupSchedule: s.Name,
				ownership.LabelManagedBy:    ownership.ManagedBy,
			},
			Annotations: map[string]string{cachev1.AnnotationScheduledTime: tick.UTC().Format(time.RFC3339)},
		},
		Spec: cachev1.RedisClusterBackupSpec{
			ClusterName: s.Spec.ClusterName,
			Destination: *s.Spec.Destination.DeepCopy(),
		},
	}
}

// RetentionOf is the schedule's retention policy for pkg/backupschedule.
func RetentionOf(spec *cachev1.RedisClusterBackupScheduleSpec) backupschedule.Retention {
	r := backupschedule.Retention{KeepFailed: defaultKeepFailed}
	if spec.Retention == nil {
		return r
	}
	if spec.Retention.KeepLast != nil {
		r.KeepLast = int(*spec.Retention.KeepLast)
	}
	if spec.Retention.KeepWithin != nil {
		r.KeepWithin = spec.Retention.KeepWithin.Duration
	}
	if spec.Retention.KeepFailed != nil {
		r.KeepFailed = int(*spec.Retention.KeepFailed)
	}
	return r
}

// scheduledTime is the tick a backup was made for: its annotation, or,
// when that is missing or unreadable (a user labelled a backup of their
// own), its creation.
func scheduledTime(b *cachev1.RedisClusterBackup) time.Time {
	if t, err := time.Parse(time.RFC3339, b.Annotations[cachev1.AnnotationScheduledTime]); err == nil {
		return t
	}
	return b.CreationTimestamp.Time
}

// finished reports whether a backup is Complete or Failed.
func finished(b *cachev1.RedisClusterBackup) bool {
	return b.Status.Phase == cachev1.BackupComplete || b.Status.Phase == cachev1.BackupFailed
}

// History is what retention needs of the schedule's backups; backups being
// deleted are left out.
func History(backups []cachev1.RedisClusterBackup) []backupschedule.Backup {
	out := make([]backupschedule.Backup, 0, len(backups))
	for i := range backups {
		b := &backups[i]
		if !b.DeletionTimestamp.IsZero() {
			continue
		}
		out = append(out, backupschedule.Backup{
			Name:      b.Name,
			Scheduled: scheduledTime(b),
			Finished:  finished(b),
			Succeeded: b.Status.Phase == cachev1.BackupComplete,
		})
	}
	return out
}

// Active are the names of the backups that are not finished (a backup
// whose controller has not yet given it a phase counts), sorted, at most
// cachev1.MaxScheduleActive.
func Active(backups []cachev1.RedisClusterBackup) []string {
	var names []string
	for i := range backups {
		if !finished(&backups[i]) && backups[i].DeletionTimestamp.IsZero() {
			names = append(names, backups[i].Name)
		}
	}
	slices.Sort(names)
	if len(names) > cachev1.MaxScheduleActive {
		names = names[:cachev1.MaxScheduleActive]
	}
	return names
}

// Stuck are the backups of Active that never started by the tick due:
// made for an earlier tick, already looked at by their controller (it gave
// them a Ready condition) without a Job: nothing durable says their Job
// was created (RedisClusterBackup.MayHaveStarted), and neither does their
// Ready reason (BackupPending, BackupRunning: a Job made by a release
// before that annotation). Such a backup waits for an input that may never
// come (its cluster is gone, a Secret is missing) or for a Job name
// another object holds: it has stored nothing, and a backup of the tick
// due replaces it. A backup its controller has not looked at yet is not
// stuck: that controller is only busy. In doubt a backup is not stuck: the
// tick is skipped, as before.
func Stuck(backups []cachev1.RedisClusterBackup, due time.Time) []*cachev1.RedisClusterBackup {
	var stuck []*cachev1.RedisClusterBackup
	for i := range backups {
		b := &backups[i]
		if finished(b) || !b.DeletionTimestamp.IsZero() || b.MayHaveStarted() || !scheduledTime(b).Before(due) {
			continue
		}
		if ready := conditions.Get(b, conditions.Ready); ready == nil || slices.Contains(withJob, ready.Reason) {
			continue
		}
		stuck = append(stuck, b)
	}
	return stuck
}

// withJob are the Ready reasons of a backup whose Job exists.
var withJob = []string{cachev1.ReasonBackupPending, cachev1.ReasonBackupRunning, cachev1.ReasonRemovingFailedBackup}

// LastHandled is the latest tick the schedule handled: its status's, or a
// later one that a backup's annotation shows, since the status write may
// have been lost after the backup was created. An annotation after now is
// not a tick the schedule made (a backup labelled by hand): it would hold
// back every tick until then.
func LastHandled(status *cachev1.RedisClusterBackupScheduleStatus, backups []cachev1.RedisClusterBackup, now time.Time) time.Time {
	var last time.Time
	if status.LastScheduleTime != nil {
		last = status.LastScheduleTime.Time
	}
	for i := range backups {
		if _, err := time.Parse(time.RFC3339, backups[i].Annotations[cachev1.AnnotationScheduledTime]); err != nil {
			continue
		}
		if t := scheduledTime(&backups[i]); t.After(last) && !t.After(now) {
			last = t
		}
	}
	return last
}

// LastSuccess is when the latest complete backup completed, or prev (the
// status's) when that is later: retention may have deleted none of them,
// but a user may have.
func LastSuccess(prev *metav1.Time, backups []cachev1.RedisClusterBackup) *metav1.Time {
	latest := prev
	for i := range backups {
		st := &backups[i].Status
		if st.Phase == cachev1.BackupComplete && st.CompletionTime != nil && (latest == nil || st.CompletionTime.After(latest.Time)) {
			latest = st.CompletionTime
		}
	}
	if latest == nil {
		return nil
	}
	return latest.DeepCopy()
}

// Action is what a schedule does at a reconcile.
type Action int

// The actions Decide chooses from.
const (
	// Wait: no tick is due.
	Wait Action = iota
	// Create a backup for the due tick.
	Create
	// SkipActive: a backup of the schedule still runs; the tick is not
	// made up later, so that backups never pile up behind a slow one.
	SkipActive
	// Supersede: every backup of the schedule that has not finished is
	// Stuck; they are deleted, and a backup is created for the due tick.
	Supersede
	// SkipMissed: the due tick is older than startingDeadlineSeconds.
	SkipMissed
	// Suspended: spec.suspend; the tick is not recorded, so that the
	// ticks missed while suspended start one backup once resumed, as
	// after an outage.
	Suspended
)

// Decide says what to do about the due tick (zero: none) at now, with
// active backups of the schedule not finished, stuck of them Stuck.
func Decide(spec *cachev1.RedisClusterBackupScheduleSpec, due, now time.Time, active, stuck int) Action {
	switch {
	case due.IsZero():
		return Wait
	case spec.Suspend:
		return Suspended
	case spec.StartingDeadlineSeconds != nil && now.Sub(due) > time.Duration(*spec.StartingDeadlineSeconds)*time.Second:
		return SkipMissed
	case active > stuck:
		return SkipActive
	case active > 0:
		return Supersede
	default:
		return Create
	}
}

// RequeueAfter is when to look again: exactly at the next tick, or, while
// suspended (no tick acts), when keepWithin next lets a backup go; zero
// when nothing will change by itself.
func RequeueAfter(suspended bool, next, expiry, now time.Time) time.Duration {
	at := next
	if suspended {
		at = expiry
	}
	if at.IsZero() {
		return 0
	}
	return max(at.Sub(now), time.Nanosecond)
}
