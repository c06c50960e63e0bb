package redisclusterbackup

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/finalizers"
	"github.com/multi-operator/multi-operator/pkg/jobstatus"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Finalizer holds a RedisClusterBackup until its files are removed: by
// a cleanup Job, after the backup's own Job, if it still ran, stopped.
const Finalizer = "cache.example.com/backup-files"

// podGoneRetry is how soon a deleted backup looks again at a pod of its
// stopped Job that has no deletion time yet (the garbage collector has not
// reached it); a pod that has one is looked at once its grace period ends.
const podGoneRetry = 2 * time.Second

// podStopWait bounds the wait for a stopped Job's pods (waitForPods).
const podStopWait = 10 * time.Minute

// waitingReasons are the Ready reasons of a backup that waits for its
// inputs, before its Job is created.
var waitingReasons = []string{
	cachev1.ReasonClusterNotFound, cachev1.ReasonBackupUserMissing,
	cachev1.ReasonSecretNotFound, cachev1.ReasonSecretNotWatched, cachev1.ReasonSecretKeyMissing, cachev1.ReasonSecretGenerated,
	cachev1.ReasonConfigMapNotFound, cachev1.ReasonConfigMapNotWatched, cachev1.ReasonConfigMapKeyMissing,
}

// waiting reports whether b's Ready condition says it waits for its
// inputs (or says nothing yet). A status can be stale, after a status write
// that was lost: this is a hint for what to wake, never proof that b
// stored nothing (neverStarted).
func waiting(b *cachev1.RedisClusterBackup) bool {
	ready := conditions.Get(b, conditions.Ready)
	return ready == nil || slices.Contains(waitingReasons, ready.Reason)
}

// neverStarted reports whether b surely stored nothing, so that its
// deletion has no files to remove: no Job of b's exists (jobFound is
// false), nothing durable on b says its Job was created
// (RedisClusterBackup.MayHaveStarted: cachev1.AnnotationBackupJobCreated,
// written before the Job, or a status that shows progress, for a Job made
// before that annotation existed), and its Ready condition says it waits.
// The status alone is not enough: a lost status write leaves it saying the
// backup waits while its Job ran, and the Job alone is not either: it may
// have been deleted (by a user, by foreground deletion, by stopBackupJob in
// an earlier try). Every doubt counts as started: wrong that way, a cleanup
// Job finds nothing to remove; wrong the other way, files stay in the store
// unnoticed.
func neverStarted(b *cachev1.RedisClusterBackup, jobFound bool) bool {
	return !jobFound && !b.MayHaveStarted() && waiting(b)
}

// cleanup removes a deleted backup's files before its finalizer goes:
//
//  1. a backup Job that still runs is deleted, and its pods end, so that
//     nothing writes into the folder once it is cleaned;
//  2. a cleanup Job, `manager backup-delete`, removes the backup's folder
//     and nothing else;
//  3. the finalizer goes once that Job succeeded (a Normal event), or
//     failed after its retries and deadline (a Warning event that says
//     where the files are left).
//
// A backup whose Job was surely never created stored nothing and goes at
// once (neverStarted).
// One whose store's credentials Secret is gone cannot be cleaned: it goes
// with a Warning event that says where the files are left, rather than
// staying until someone recreates the Secret. A backup therefore never
// waits longer than podStopWait plus cleanupDeadline.
func (r *Reconciler) cleanup(ctx context.Context, b *cachev1.RedisClusterBackup) error {
	jobFound, err := r.stopBackupJob(ctx, b)
	if err != nil {
		return err
	}
	if neverStarted(b, jobFound) {
		return nil
	}
	// Retention or a user may delete the backup a new cluster restores
	// from: its files stay until that restore ended (watch.go).
	switch user, err := r.restoringFrom(ctx, b); {
	case err != nil:
		return err
	case user != "":
		return finalizers.Wait(0, cachev1.ReasonBackupInUse, "RedisCluster %s restores from this backup: its files are removed once that restore ended", user)
	}
	rm, err := r.removeFiles(ctx, b)
	switch {
	case err != nil:
		return err
	case !rm.done:
		return finalizers.Wait(0, cachev1.ReasonBackupDeleting, "Job %s removes the files at %s", rm.job, Location(b))
	case rm.removed:
		r.events.Normal(b, cachev1.ReasonBackupFilesRemoved, events.ActionFinalize, "Job %s removed the files at %s", rm.job, Location(b))
	default:
		r.events.Warning(b, cachev1.ReasonBackupFilesLeft, events.ActionFinalize,
			"%s: the files at %s are left there; remove them with the store's own tools", rm.why, Location(b))
	}
	return nil
}

// restoringFrom names a RedisCluster of b's namespace that restores from
// b and has not finished, or is empty.
func (r *Reconciler) restoringFrom(ctx context.Context, b *cachev1.RedisClusterBackup) (string, error) {
	if !r.clustersWatched {
		return "", nil
	}
	list := &cachev1.RedisClusterList{}
	if err := r.client.List(ctx, list, client.InNamespace(b.Namespace)); err != nil {
		return "", err
	}
	for i := range list.Items {
		rc := &list.Items[i]
		name, known := restoresFrom(rc)
		if !known && rc.Spec.RestoreFrom.ScheduleName == b.Labels[cachev1.LabelBackupSchedule] {
			var err error
			if name, err = r.restoreJobsBackup(ctx, rc); err != nil {
				return "", err
			}
		}
		if name == b.Name {
			return rc.Name, nil
		}
	}
	return "", nil
}

// restoresFrom is the backup rc restores from while its restore has not
// ended, or empty. known is false when rc restores the newest backup of a
// schedule and its status does not say which one: its restore Job does,
// once it exists (the status write that recorded the choice may be lost
// until the RedisCluster controller takes it back from the Job).
func restoresFrom(rc *cachev1.RedisCluster) (name string, known bool) {
	from, st := rc.Spec.RestoreFrom, rc.Status.Restore
	if from == nil || rc.DeletionTimestamp != nil {
		return "", true
	}
	if st != nil && (st.Phase == cachev1.RestoreComplete || st.Phase == cachev1.RestoreFailed) {
		return "", true
	}
	if from.BackupName != "" {
		return from.BackupName, true
	}
	if st != nil && st.BackupName != "" {
		return st.BackupName, true
	}
	return "", false
}

// restoreJobsBackup is the backup rc's restore Job restores, or empty
// when rc has no restore Job of its own. It reads the API server: a Job
// created a moment ago may not be in the cache yet, and the files would
// go from under it.
func (r *Reconciler) restoreJobsBackup(ctx context.Context, rc *cachev1.RedisCluster) (string, error) {
	job := &batchv1.Job{}
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: backupjob.RestoreJobName(rc.Name)}, job)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	case !metav1.IsControlledBy(job, rc):
		return "", nil
	}
	return backupjob.RestoreJobsBackup(job), nil
}

// stopBackupJob deletes b's backup Job while it runs, and waits until its
// pods ended. It returns once nothing of the backup runs any more, and
// reports whether b's Job exists.
func (r *Reconciler) stopBackupJob(ctx context.Context, b *cachev1.RedisClusterBackup) (bool, error) {
	job := &batchv1.Job{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: JobName(b)}, job)
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	found := err == nil && metav1.IsControlledBy(job, b)
	if found && !jobstatus.Of(job).Finished() && !stoppedLongAgo(b) {
		if job.DeletionTimestamp.IsZero() {
			// In the background: the pods get their grace period, in which
			// `manager backup` removes what it stored itself.
			err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground),
				client.Preconditions{UID: &job.UID})
			if client.IgnoreNotFound(err) != nil {
				return true, fmt.Errorf("stopping Job %s: %w", job.Name, err)
			}
		}
		return true, finalizers.Wait(0, cachev1.ReasonBackupStopping, "Job %s is stopped before the files at %s are removed", job.Name, Location(b))
	}
	return found, r.waitForPods(ctx, b)
}

// stoppedLongAgo reports whether b was deleted more than podStopWait ago:
// a Job or pod that has not gone by then (a lost node, a finalizer of
// someone else's) must not hold the backup for good.
func stoppedLongAgo(b *cachev1.RedisClusterBackup) bool {
	t := b.DeletionTimestamp
	return t != nil && time.Since(t.Time) > podStopWait
}

// waitForPods returns a PendingError while a pod of b's backup Job has not
// ended: pods are not watched, so it looks again when the pod's grace
// period ends, or soon when the garbage collector has not deleted it yet.
// It waits at most podStopWait from the backup's deletion: a pod of a
// lost node stays Terminating until someone removes the node.
func (r *Reconciler) waitForPods(ctx context.Context, b *cachev1.RedisClusterBackup) error {
	if stoppedLongAgo(b) {
		return nil
	}
	pods := &corev1.PodList{}
	if err := r.reader.List(ctx, pods, client.InNamespace(b.Namespace),
		client.MatchingLabels{batchv1.JobNameLabel: JobName(b), ownership.LabelName: appName}, client.Limit(maxPods)); err != nil {
		return fmt.Errorf("listing the pods of Job %s: %w", JobName(b), err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		after := podGoneRetry
		if t := pod.DeletionTimestamp; t != nil {
			after = max(time.Until(t.Time)+time.Second, podGoneRetry)
		}
		return finalizers.Wait(after, cachev1.ReasonBackupStopping, "pod %s of Job %s is stopping before the files at %s are removed", pod.Name, JobName(b), Location(b))
	}
	return nil
}

// removal is where the removal of a backup's files is.
type removal struct {
	// done says nothing more will happen; removed, that the files are gone,
	// and why, when not, why they are left.
	done, removed bool
	why           string
	// job is the cleanup Job's name.
	job string
}

// removeFiles runs b's cleanup Job, `manager backup-delete`, once, and
// says where it is: a deleted backup waits for it, and so does a failed
// one before it reports Failed. A store whose credentials Secret is gone
// cannot be cleaned, and no Job is made.
func (r *Reconciler) removeFiles(ctx context.Context, b *cachev1.RedisClusterBackup) (removal, error) {
	job := &batchv1.Job{}
	name := CleanupJobName(b)
	err := r.client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, job)
	if client.IgnoreNotFound(err) != nil {
		return removal{}, err
	}
	taken := removal{done: true, why: fmt.Sprintf("the cleanup Job's name %s is taken by an object the backup does not own", name)}
	if err == nil && !metav1.IsControlledBy(job, b) {
		// Another object holds the name (a backup named like this
		// cleanup Job): it may never go.
		return taken, nil
	}
	if err == nil {
		switch out := jobstatus.Of(job); out.State {
		case jobstatus.Succeeded:
			return removal{done: true, removed: true, job: name}, nil
		case jobstatus.Failed:
			return removal{done: true, job: name, why: fmt.Sprintf("Job %s failed (%s: %s)", name, out.Reason, events.Truncate(out.Message, 256))}, nil
		}
		return removal{job: name}, nil
	}
	if s3 := b.Spec.Destination.S3; s3 != nil {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := r.reader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: s3.CredentialsSecret}, m)
		if apierrors.IsNotFound(err) {
			return removal{done: true, why: fmt.Sprintf("Secret %s, with the store's credentials, is gone", s3.CredentialsSecret)}, nil
		}
		if err != nil {
			return removal{}, err
		}
	}
	_, result, err := r.children.Apply(ctx, b, reconciler.Child{Object: DesiredCleanupJob(b, r.image), Created: cachev1.ReasonCleanupJobCreated})
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		// A quota or a policy of the namespace that refuses the Job would
		// refuse it at every retry: the backup would never go.
		return removal{done: true, why: fmt.Sprintf("the cleanup Job %s cannot be created: %v", name, events.Truncate(err.Error(), 256))}, nil
	}
	if err != nil {
		return removal{}, err
	}
	if result.Stop {
		return taken, nil
	}
	return removal{job: name}, nil
}
