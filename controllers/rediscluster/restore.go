package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupinputs"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/jobstatus"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// maxRestorePods bounds the restore Job's pods read for its result:
// restoreBackoffLimit+1 run.
const maxRestorePods = 10

// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusterbackups,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch

// restoring reports whether rc waits for, or runs, the restore of
// spec.restoreFrom: until it is Complete, the client Service is not
// created and the cluster is not Ready.
func restoring(rc *cachev1.RedisCluster) bool {
	return rc.Spec.RestoreFrom != nil && (rc.Status.Restore == nil || rc.Status.Restore.Phase != cachev1.RestoreComplete)
}

// restoreUserWanted reports whether rc's nodes must have the restore's
// user (redisadmin.RestoreUser): from the moment the cluster is to restore
// until its restore is Complete or Failed. A cluster restores once, so
// the user is never wanted again after that.
func restoreUserWanted(rc *cachev1.RedisCluster) bool {
	return restoring(rc) && (rc.Status.Restore == nil || rc.Status.Restore.Phase != cachev1.RestoreFailed)
}

// readRestorePassword puts the restore's password in s.access while rc
// restores, generating <name>-restore. Once the restore is over it leaves
// RestorePassword empty, so that the access phase has the nodes drop the
// user, and the restore phase empties the Secret (retireRestoreSecret).
func (r *Reconciler) readRestorePassword(ctx context.Context, s *scope) error {
	rc := s.rc
	if !restoreUserWanted(rc) {
		return nil
	}
	secret, err := r.generatedPassword(ctx, rc, RestoreSecretName(rc))
	if err != nil {
		return err
	}
	s.access.RestorePassword = string(secret.Data[PasswordKey])
	return nil
}

// retireRestoreSecret removes the password from <name>-restore once the
// restore is over: no pod will mount it again, and a password that opens
// nothing once the nodes dropped its user need not be kept. The Secret is
// emptied rather than deleted, with the patch the role already has, and
// goes with the cluster. It runs in the restore phase, after the access
// phase, and a write it cannot make is retried without holding up the
// rollout; a Secret of that name the cluster does not control is left
// alone.
func (r *Reconciler) retireRestoreSecret(ctx context.Context, s *scope) error {
	rc := s.rc
	secret := &corev1.Secret{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: RestoreSecretName(rc)}, secret)
	if apierrors.IsNotFound(err) || (err == nil && (!metav1.IsControlledBy(secret, rc) || len(secret.Data) == 0)) {
		return nil
	}
	if err != nil {
		return err
	}
	emptied := secret.DeepCopy()
	emptied.Data = nil
	if err := r.client.Patch(ctx, emptied, client.MergeFromWithOptions(secret, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			// Gone, or changed since the cache read it: the next
			// reconcile looks again.
			return nil
		}
		return fmt.Errorf("emptying Secret %s: %w", secret.Name, err)
	}
	r.events.Normal(rc, cachev1.ReasonSecretEmptied, events.ActionUpdate, "Removed the password from Secret %s: the restore is over and the nodes drop its user", secret.Name)
	return nil
}

// restoreStatus is rc's status.restore, made Pending when missing, with
// the backup spec.restoreFrom names (a schedule's is chosen once, in
// reconcileRestoreSource, and kept: in the status, and on the restore Job
// once it exists).
func restoreStatus(rc *cachev1.RedisCluster) *cachev1.RestoreStatus {
	if rc.Status.Restore == nil {
		rc.Status.Restore = &cachev1.RestoreStatus{Phase: cachev1.RestorePending}
	}
	if name := rc.Spec.RestoreFrom.BackupName; name != "" {
		rc.Status.Restore.BackupName = name
	}
	return rc.Status.Restore
}

// newestComplete is the Complete backup of list that completed last (by
// name between equal times, for a stable choice), or nil.
func newestComplete(list []cachev1.RedisClusterBackup) *cachev1.RedisClusterBackup {
	var newest *cachev1.RedisClusterBackup
	for i := range list {
		b := &list[i]
		if b.Status.Phase != cachev1.BackupComplete || b.Status.CompletionTime == nil || b.DeletionTimestamp != nil {
			continue
		}
		if newest == nil || newest.Status.CompletionTime.Before(b.Status.CompletionTime) ||
			(newest.Status.CompletionTime.Equal(b.Status.CompletionTime) && newest.Name < b.Name) {
			newest = b
		}
	}
	return newest
}

// reconcileRestoreSource, first of the phases, finds the restore Job of a
// cluster that is restoring, or, before it exists, the backup it loads:
// until that backup is Complete nothing else is done (the watch on
// RedisClusterBackups wakes the cluster when it changes). A missing or
// Failed backup is a Warning event, once.
func (r *Reconciler) reconcileRestoreSource(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	if !restoring(rc) {
		return reconciler.Result{}, nil
	}
	st := restoreStatus(rc)
	if st.Phase == cachev1.RestoreFailed {
		return reconciler.Result{}, nil
	}
	job := &batchv1.Job{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: RestoreJobName(rc)}, job)
	found := err == nil && metav1.IsControlledBy(job, rc)
	if name := backupjob.RestoreJobsBackup(job); found && name != "" && st.BackupName == "" {
		// The status write that recorded the choice was lost after the
		// Job was created: the Job's choice stands, rather than a new one.
		st.BackupName = name
	}
	// Not Ready until the restore completes, whatever a later phase finds.
	origin := "RedisClusterBackup " + st.BackupName
	if st.BackupName == "" {
		origin = "the newest backup of RedisClusterBackupSchedule " + rc.Spec.RestoreFrom.ScheduleName
	}
	conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonRestorePending, "restoring from "+origin)
	if found {
		// Made from a Complete backup: the backup is not read again.
		s.restoreJob = job
		return reconciler.Result{}, nil
	}
	// A Job of that name that rc does not control is someone else's, whose
	// result must not be trusted: the restore phase's apply reports the
	// name as taken.
	if err != nil && !apierrors.IsNotFound(err) {
		return reconciler.Result{}, err
	}
	if !r.backupsServed {
		return r.waitForBackup(rc, cachev1.ReasonRestorePending, true,
			"the API server does not serve RedisClusterBackups: install the redisclusterbackup component and restart the manager"), nil
	}
	if st.BackupName == "" {
		// spec.restoreFrom.scheduleName: its newest complete backup, now.
		list := &cachev1.RedisClusterBackupList{}
		schedule := rc.Spec.RestoreFrom.ScheduleName
		if err := r.client.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels{cachev1.LabelBackupSchedule: schedule}); err != nil {
			return reconciler.Result{}, err
		}
		newest := newestComplete(list.Items)
		if newest == nil {
			return r.waitForBackup(rc, cachev1.ReasonRestorePending, true,
				fmt.Sprintf("RedisClusterBackupSchedule %s has no complete backup yet; the restore waits for one", schedule)), nil
		}
		st.BackupName = newest.Name
	}
	b := &cachev1.RedisClusterBackup{}
	err = r.client.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: st.BackupName}, b)
	switch {
	case apierrors.IsNotFound(err):
		return r.waitForBackup(rc, cachev1.ReasonRestorePending, true, fmt.Sprintf("RedisClusterBackup %s does not exist; the restore waits for it", st.BackupName)), nil
	case err != nil:
		return reconciler.Result{}, err
	case b.Status.Phase == cachev1.BackupFailed:
		return r.waitForBackup(rc, cachev1.ReasonRestoreBackupFailed, true,
			fmt.Sprintf("RedisClusterBackup %s failed: there is nothing to restore; delete this RedisCluster and create it naming a complete backup", st.BackupName)), nil
	case b.Status.Phase != cachev1.BackupComplete:
		return r.waitForBackup(rc, cachev1.ReasonRestorePending, false, fmt.Sprintf("waiting for RedisClusterBackup %s to complete", st.BackupName)), nil
	case b.Status.Totals == nil:
		// The restore trusts only what the status recorded (ExpectedOf).
		return r.waitForBackup(rc, cachev1.ReasonRestoreBackupFailed, true,
			fmt.Sprintf("RedisClusterBackup %s is Complete but its status records no totals to check its files against: there is nothing to restore from; delete this RedisCluster and create it naming another backup", st.BackupName)), nil
	}
	// The Job mounts the destination's Secrets and ConfigMap: held to the
	// backup Job's rules, and waited for, woken by their watch
	// (inputToRestores), before it exists.
	checker := backupinputs.Checker{Cache: r.client, API: r.reader}
	var waiting *backupinputs.WaitingError
	if err := checker.Destination(ctx, rc.Namespace, b.Spec.Destination); errors.As(err, &waiting) {
		return r.waitForBackup(rc, waiting.Reason, true, fmt.Sprintf("%s; the restore of RedisClusterBackup %s waits", waiting.Message, st.BackupName)), nil
	} else if err != nil {
		return reconciler.Result{}, err
	}
	s.backup = b
	return reconciler.Result{}, nil
}

// restoreWaitsFor reports whether rc's restore Job, not created yet, would
// mount the Secret or ConfigMap of ReferenceKey key: its backup's
// destination names it.
func (r *Reconciler) restoreWaitsFor(ctx context.Context, rc *cachev1.RedisCluster, key string) bool {
	if !r.backupsServed || !restoring(rc) {
		return false
	}
	name := rc.Spec.RestoreFrom.BackupName
	if st := rc.Status.Restore; st != nil {
		if st.JobName != "" || st.Phase == cachev1.RestoreFailed {
			return false
		}
		if st.BackupName != "" {
			name = st.BackupName
		}
	}
	if name == "" {
		return false
	}
	b := &cachev1.RedisClusterBackup{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: name}, b); err != nil {
		return false // the backup's own watch wakes rc when it comes
	}
	return slices.Contains(backupinputs.References(b.Spec.Destination), key)
}

// inputToRestores finds the RedisClusters of the ConfigMap's namespace
// whose restore waits for it.
func (r *Reconciler) inputToRestores(ctx context.Context, obj client.Object) []reconcile.Request {
	key := backupinputs.ReferenceKey(backupinputs.KindConfigMap, obj.GetName())
	return r.clustersWanting(ctx, obj, func(rc *cachev1.RedisCluster) bool { return r.restoreWaitsFor(ctx, rc, key) })
}

// waitForBackup stops the reconcile until the backup changes: Ready and
// Restored say why, with a Warning event when warn and the reason or
// message is new.
func (r *Reconciler) waitForBackup(rc *cachev1.RedisCluster, reason string, warn bool, msg string) reconciler.Result {
	conditions.MarkFalse(rc, conditions.Ready, reason, msg)
	conditions.MarkTrue(rc, cachev1.ConditionProgressing, reason, msg)
	if conditions.MarkFalse(rc, cachev1.ConditionRestored, reason, msg) && warn {
		r.events.Warning(rc, reason, events.ActionReconcile, "%s", msg)
	}
	return reconciler.Result{Stop: true}
}

// reconcileRestore runs the restore once the cluster has formed: it
// creates the restore Job, follows it, and once it succeeded marks the
// cluster Restored and creates the client Service, so that clients reach
// the cluster only with the backup's keys in it. A failed restore stays
// Failed: the cluster is never Ready and no Job runs again.
func (r *Reconciler) reconcileRestore(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	var retire reconciler.Result
	if !restoreUserWanted(rc) {
		if err := r.retireRestoreSecret(ctx, s); err != nil {
			// Not worth stopping the rollout for: tried again soon.
			ctrl.LoggerFrom(ctx).Error(err, "the restore's password stays in its Secret for now")
			retire.RequeueAfter = progressRetry
		}
	}
	if !restoring(rc) {
		return retire, nil
	}
	st := restoreStatus(rc)
	if st.Phase == cachev1.RestoreFailed {
		msg := "the restore failed; delete this RedisCluster and create it again to retry"
		if c := conditions.Get(rc, cachev1.ConditionRestored); c != nil {
			msg = c.Message
		}
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonRestoreFailed, msg)
		return retire, nil
	}
	if s.restoreJob == nil {
		// The Job logs in as the restore's user, which every node must
		// have first (accessDone).
		if !s.settled || !s.accessDone || s.backup == nil {
			msg := "waiting for the cluster to form before restoring RedisClusterBackup " + st.BackupName
			if s.settled && s.backup != nil {
				msg = "waiting for every node to have the restore's user before restoring RedisClusterBackup " + st.BackupName
			}
			conditions.MarkFalse(rc, cachev1.ConditionRestored, cachev1.ReasonRestorePending, msg)
			return reconciler.Result{}, nil
		}
		job := DesiredRestoreJob(rc, s.backup, r.restoreImage)
		if _, result, err := r.children.Apply(ctx, rc, reconciler.Child{Object: job, Created: cachev1.ReasonRestoreJobCreated}); result.Stop {
			return result, err
		}
		s.restoreJob = job
	}
	st.JobName = s.restoreJob.Name
	if st.StartTime == nil {
		now := metav1.NewTime(r.clock.Now())
		st.StartTime = &now
	}
	out := jobstatus.Of(s.restoreJob)
	if !out.Finished() {
		st.Phase = cachev1.RestorePending
		if out.State == jobstatus.Running {
			st.Phase = cachev1.RestoreRunning
		}
		msg := fmt.Sprintf("Job %s restores RedisClusterBackup %s", st.JobName, st.BackupName)
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonRestoreRunning, msg)
		conditions.MarkFalse(rc, cachev1.ConditionRestored, cachev1.ReasonRestoreRunning, msg)
		conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonRestoreRunning, msg)
		return reconciler.Result{}, nil
	}
	st.CompletionTime = out.CompletionTime
	res, readErr := backupreport.FromJob(ctx, r.reader, s.restoreJob, RestoreContainerName, out.State == jobstatus.Succeeded, maxRestorePods)
	if readErr != nil && !errors.Is(readErr, backupreport.ErrUnreadable) {
		return reconciler.Result{}, readErr // the API server's: read again
	}
	if out.State == jobstatus.Succeeded && readErr == nil && res.Complete {
		return r.restored(ctx, rc, res)
	}
	msg := restoreFailure(out, res, readErr)
	st.Phase = cachev1.RestoreFailed
	conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonRestoreFailed, msg)
	conditions.MarkFalse(rc, cachev1.ConditionProgressing, cachev1.ReasonRestoreFailed, msg)
	conditions.MarkFalse(rc, cachev1.ConditionRestored, cachev1.ReasonRestoreFailed, msg)
	// Announced once the status records it, as the Restored event is. The
	// next reconcile, once the status says Failed, takes the restore's user
	// from the nodes and empties its Secret (retireRestoreSecret).
	warn := func() { r.events.Warning(rc, cachev1.ReasonRestoreFailed, events.ActionReconcile, "%s", msg) }
	return reconciler.Result{RequeueAfter: progressRetry, AfterStatus: []func(){warn}}, nil
}

// restored records a complete restore and creates the client Service:
// from now on the cluster is an ordinary one.
func (r *Reconciler) restored(ctx context.Context, rc *cachev1.RedisCluster, res *backupreport.Result) (reconciler.Result, error) {
	child := reconciler.Child{Object: DesiredClientService(rc), Created: cachev1.ReasonServiceCreated, Updated: cachev1.ReasonServiceUpdated}
	if _, result, err := r.children.Apply(ctx, rc, child); result.Stop {
		// Not Complete yet: the next reconcile comes back here, and the
		// restore ends once the clients have their Service.
		return result, err
	}
	st := rc.Status.Restore
	st.Phase, st.Keys = cachev1.RestoreComplete, res.Keys
	msg := fmt.Sprintf("restored %d keys of RedisClusterBackup %s", res.Keys, st.BackupName)
	conditions.MarkTrue(rc, cachev1.ConditionRestored, cachev1.ReasonRestored, msg)
	// Announced once the status records the restore: a reconcile whose
	// status write was lost comes back here, and would record the event
	// twice.
	announce := func() { r.events.Normal(rc, cachev1.ReasonRestored, events.ActionReconcile, "%s", msg) }
	// The cluster phase left Ready to the restore in this reconcile: the
	// next one finds it as for any cluster.
	return reconciler.Result{RequeueAfter: progressRetry, AfterStatus: []func(){announce}}, nil
}

// restoreFailure says why the restore failed, without a secret: the run's
// own message, else the Job's.
func restoreFailure(out jobstatus.Outcome, res *backupreport.Result, readErr error) string {
	switch {
	case res != nil && !res.Complete:
		return fmt.Sprintf("the restore failed (%s): %s; delete this RedisCluster and create it again to retry", res.Reason, res.Message)
	case out.State == jobstatus.Succeeded:
		return fmt.Sprintf("the restore Job succeeded without a result that says the restore is complete (%v); delete this RedisCluster and create it again to retry", readErr)
	default:
		return fmt.Sprintf("the restore Job failed (%s: %s) without a result; delete this RedisCluster and create it again to retry", out.Reason, out.Message)
	}
}

// backupToClusters finds the RedisClusters of the backup's namespace that
// restore from it and still wait for it.
func (r *Reconciler) backupToClusters(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.clustersWanting(ctx, obj, func(rc *cachev1.RedisCluster) bool {
		from := rc.Spec.RestoreFrom
		return from != nil && restoring(rc) &&
			(from.BackupName == obj.GetName() || (from.ScheduleName != "" && obj.GetLabels()[cachev1.LabelBackupSchedule] == from.ScheduleName))
	})
}
