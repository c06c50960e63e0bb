// Package redisclusterbackup is the RedisClusterBackup controller: it
// takes one backup of a RedisCluster in a Job of the cluster's namespace,
// which runs the manager's own image as `manager backup`, and reports the
// Job's result. The manager itself never holds a snapshot.
package redisclusterbackup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/backupinputs"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Name is the controller's name in --controllers.
const Name = "redisclusterbackup"

// ImageEnv names the environment variable with the Job's image: the
// manager's own, as installed.
const ImageEnv = "BACKUP_IMAGE"

// inputRetry is how soon a backup that waits for its cluster looks again
// where the RedisCluster CRD is not served, so not watched (watch.go):
// every other input is watched. A variable for the tests.
var inputRetry = 30 * time.Second

// maxPods bounds the Job's pods read for its result: backoffLimit+1 run.
const maxPods = 10

// Descriptor registers the controller with the manager.
func Descriptor() reconciler.Descriptor {
	return reconciler.Descriptor{
		Name:         Name,
		Description:  "RedisClusterBackup (cache.example.com/v1): backs up a RedisCluster once, in a Job, to an object store or a volume",
		AddToScheme:  cachev1.AddToScheme,
		For:          &cachev1.RedisClusterBackup{},
		Managed:      []client.Object{&batchv1.Job{}},
		Referenced:   []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		ImageEnv:     ImageEnv,
		DefaultImage: DefaultImage,
		Setup:        reconciler.SetupWith(NewReconciler),
	}
}

// Reconciler reconciles RedisClusterBackups.
type Reconciler struct {
	reconciler.Flow[*cachev1.RedisClusterBackup, *scope]
	client client.Client
	// reader reads the API server: the RedisCluster (which the cache may
	// not hold: its controller may run elsewhere), Secrets and ConfigMaps
	// the cache ignores, and the Job's pods.
	reader   client.Reader
	children reconciler.Children
	events   events.Recorder
	image    string
	// clustersWatched says RedisClusters are watched (watchInputs).
	clustersWatched bool
}

// scope is what the phases share.
type scope struct {
	b   *cachev1.RedisClusterBackup
	job *batchv1.Job
	in  Inputs
	// nameTaken: a Job of the backup's name exists that the backup does
	// not control.
	nameTaken bool
}

// NewReconciler returns a Reconciler whose Jobs run opts.Image.
func NewReconciler(mgr ctrl.Manager, opts reconciler.Options) (*Reconciler, error) {
	r := &Reconciler{
		client: mgr.GetClient(),
		reader: mgr.GetAPIReader(),
		events: reconciler.EventRecorder(mgr, Name),
		image:  opts.ImageOr(DefaultImage),
	}
	r.children = reconciler.Children{Client: r.client, Events: r.events}
	r.Flow = reconciler.Flow[*cachev1.RedisClusterBackup, *scope]{
		Client:    r.client,
		Events:    r.events,
		NewObject: func() *cachev1.RedisClusterBackup { return &cachev1.RedisClusterBackup{} },
		NewScope:  func(b *cachev1.RedisClusterBackup) *scope { return &scope{b: b} },
		Phases: []reconciler.NamedPhase[*scope]{
			{Name: "fetch", Run: r.fetch},
			{Name: "job", Run: r.reconcileJob},
			{Name: "status", Run: r.reconcileStatus},
		},
		ObservedGeneration: func(b *cachev1.RedisClusterBackup) *int64 { return &b.Status.ObservedGeneration },
		Gone:               tracked.forget,
		Finalizer:          Finalizer,
		Cleanup:            r.cleanup,
	}
	return r, nil
}

// SetupWithManager watches RedisClusterBackups, their Jobs, and what a
// waiting backup waits for (watch.go).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := reconciler.NewControllerBuilder(mgr, Name, r, &cachev1.RedisClusterBackup{},
		[]reconciler.Reported{reconciler.ReportOf(&batchv1.Job{}, outcomeOf)}, nil)
	b, watched, err := r.watchInputs(mgr, b)
	if err != nil {
		return err
	}
	r.clustersWatched = watched
	return b.Complete(r)
}

// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusterbackups,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusterbackups/status,verbs=patch
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusterbackups/finalizers,verbs=update
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// fetch finds the backup's Job, or, before it exists, checks what the Job
// needs: the cluster, its backup user's Secret, and the Secrets and
// ConfigMap the spec names. A finished backup reads nothing.
func (r *Reconciler) fetch(ctx context.Context, s *scope) (reconciler.Result, error) {
	b := s.b
	if finished(b.Status.Phase) {
		// At a start, the metrics learn the backups that finished before.
		tracked.observe(b, false)
		return reconciler.Result{Stop: true}, nil
	}
	b.Status.JobName, b.Status.Location = JobName(b), Location(b)
	if b.Status.Phase == "" {
		b.Status.Phase = cachev1.BackupPending
	}
	job := &batchv1.Job{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: JobName(b)}, job)
	if err == nil && metav1.IsControlledBy(job, b) {
		// Made from inputs already checked; they are not read again.
		s.job = job
		return reconciler.Result{}, nil
	}
	// A Job of that name that this backup does not control is someone
	// else's, whose result must not be trusted: the apply below reports
	// the name as taken.
	if err != nil && !apierrors.IsNotFound(err) {
		return reconciler.Result{}, err
	}
	s.nameTaken = err == nil
	in, err := r.inputs(ctx, b)
	var waiting *backupinputs.WaitingError
	if errors.As(err, &waiting) {
		b.Status.Message = waiting.Message
		if setReady(b, metav1.ConditionFalse, waiting.Reason, waiting.Message) {
			r.events.Warning(b, waiting.Reason, events.ActionReconcile, "%s; the backup waits", waiting.Message)
		}
		if waiting.Reason == cachev1.ReasonClusterNotFound && !r.clustersWatched {
			return reconciler.StopAndRequeue(inputRetry), nil
		}
		// What it waits for is watched (watch.go).
		return reconciler.Result{Stop: true}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	s.in = in
	return reconciler.Result{}, nil
}

// inputs reads the cluster and checks every Secret and ConfigMap the Job
// will mount: the backup user's, and the destination's (pkg/backupinputs,
// whose rules a restore's Job follows too).
func (r *Reconciler) inputs(ctx context.Context, b *cachev1.RedisClusterBackup) (Inputs, error) {
	rc := &cachev1.RedisCluster{}
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ClusterName}, rc)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return Inputs{}, backupinputs.WaitFor(cachev1.ReasonClusterNotFound, "RedisCluster %s does not exist in namespace %s", b.Spec.ClusterName, b.Namespace)
	}
	if err != nil {
		return Inputs{}, err
	}
	// The backup user's Secret must be the one rc's controller generated.
	secret := &corev1.Secret{}
	name := rediscluster.BackupSecretName(rc)
	err = r.client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, secret)
	if client.IgnoreNotFound(err) != nil {
		return Inputs{}, err
	}
	if _, uid, ok := backupinputs.GeneratedFor(secret); err != nil || !ok || uid != string(rc.UID) || len(secret.Data[rediscluster.PasswordKey]) == 0 {
		return Inputs{}, backupinputs.WaitFor(cachev1.ReasonBackupUserMissing,
			"Secret %s, with the password of RedisCluster %s's backup user, is not generated yet: the rediscluster controller makes it", name, rc.Name)
	}
	if err := r.checker().Destination(ctx, b.Namespace, b.Spec.Destination); err != nil {
		return Inputs{}, err
	}
	return Inputs{Cluster: rc}, nil
}

// checker checks the destination's Secrets and ConfigMaps.
func (r *Reconciler) checker() backupinputs.Checker {
	return backupinputs.Checker{Cache: r.client, API: r.reader}
}

// reconcileJob creates the Job once its inputs are there, after it
// recorded on the backup that it does (markJobCreated).
func (r *Reconciler) reconcileJob(ctx context.Context, s *scope) (reconciler.Result, error) {
	// While another Job holds the name, none of the backup's can start: it
	// is not marked, so that a schedule may still supersede it.
	if !s.nameTaken {
		if err := r.markJobCreated(ctx, s.b); err != nil {
			return reconciler.Result{}, err
		}
	}
	if s.job != nil {
		return reconciler.Result{}, nil
	}
	job := DesiredJob(s.b, s.in, r.image)
	if _, result, err := r.children.Apply(ctx, s.b, reconciler.Child{Object: job, Created: cachev1.ReasonBackupJobCreated}); result.Stop {
		return result, err
	}
	s.job = job
	return reconciler.Result{}, nil
}

// markJobCreated sets cachev1.AnnotationBackupJobCreated on b unless it
// is there: before the Job is created, so that whatever status write is
// lost later, b's deletion knows files may exist (neverStarted), and a
// schedule knows b is not merely waiting. A backup whose Job an earlier
// release created gets it too. The patch carries b's UID: a backup
// recreated under the same name is not marked by a stale read.
func (r *Reconciler) markJobCreated(ctx context.Context, b *cachev1.RedisClusterBackup) error {
	if b.JobCreated() {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         b.UID,
		"annotations": map[string]string{cachev1.AnnotationBackupJobCreated: "true"},
	}})
	if err != nil {
		return err
	}
	// A copy, so that the status this reconcile computed stays.
	marked := &cachev1.RedisClusterBackup{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: b.Name}}
	if err := r.client.Patch(ctx, marked, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("recording on the backup that Job %s is created: %w", JobName(b), err)
	}
	metav1.SetMetaDataAnnotation(&b.ObjectMeta, cachev1.AnnotationBackupJobCreated, "true")
	return nil
}

// reconcileStatus copies the Job's progress into the status and, once it
// finished, its result, with an event.
func (r *Reconciler) reconcileStatus(ctx context.Context, s *scope) (reconciler.Result, error) {
	out := outcomeOf(s.job)
	if !finished(out.phase) {
		setRunning(s.b, out)
		return reconciler.Result{}, nil
	}
	res, readErr := backupreport.FromJob(ctx, r.reader, s.job, ContainerName, out.phase == cachev1.BackupComplete, maxPods)
	if readErr != nil && !errors.Is(readErr, backupreport.ErrUnreadable) {
		// The API server failed the read: read again rather than call the
		// backup unreadable.
		return reconciler.Result{}, readErr
	}
	final := s.b.DeepCopy()
	eventType, reason, message := completion(final, out, res, readErr)
	if final.Status.Phase == cachev1.BackupFailed {
		// A run killed hard (out of memory, its node lost, its deadline)
		// could not remove what it stored: the cleanup Job does, before
		// the backup says Failed, so that a Failed backup leaves no files.
		rm, err := r.removeFiles(ctx, s.b)
		if err != nil {
			return reconciler.Result{}, err
		}
		if !rm.done {
			setRemoving(s.b, out, rm.job)
			return reconciler.Result{}, nil
		}
		message = afterRemoval(final, rm, message)
	}
	s.b.Status = final.Status
	record(r.events, s.b, eventType, reason, message)
	tracked.observe(s.b, true)
	return reconciler.Result{}, nil
}
