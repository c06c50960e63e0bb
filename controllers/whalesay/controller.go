// Package whalesay is the WhaleSay controller: it renders a message with
// cowsay in a Job, one Job per distinct spec, and reports the outcome.
package whalesay

import (
	"context"
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/status"
)

// Name is the controller's name in --controllers.
const Name = "whalesay"

// ImageEnv names the environment variable with the default image.
const ImageEnv = "WHALESAY_IMAGE"

// Descriptor registers the controller with the manager.
func Descriptor() manager.Descriptor {
	return manager.Descriptor{
		Name:        Name,
		Description: "WhaleSay (devsectim.io/v1alpha1): prints a message with cowsay in a Job and reports the outcome",
		AddToScheme: v1alpha1.AddToScheme,
		For:         &v1alpha1.WhaleSay{},
		Owns:        []client.Object{&batchv1.Job{}},
		Setup: func(mgr ctrl.Manager) error {
			r, err := NewReconciler(mgr, manager.ImageFromEnv(ImageEnv, DefaultImage))
			if err != nil {
				return err
			}
			return r.SetupWithManager(mgr)
		},
	}
}

// Reconciler reconciles WhaleSays.
type Reconciler struct {
	client client.Client
	// writes tells reads that predate our own status writes.
	writes status.Writes
	// children remembers the children this controller created until the cache has them.
	children     ownership.Children
	logs         *logReader
	events       events.Recorder
	defaultImage string
}

// NewReconciler returns a Reconciler that runs defaultImage unless a
// WhaleSay names its own.
func NewReconciler(mgr ctrl.Manager, defaultImage string) (*Reconciler, error) {
	clientset, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	return &Reconciler{
		client:       mgr.GetClient(),
		logs:         &logReader{clientset: clientset},
		events:       events.NewRecorder(mgr.GetEventRecorder(Name + "-controller")),
		defaultImage: defaultImage,
	}, nil
}

// SetupWithManager watches WhaleSays and the Jobs they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		// Our own status writes bump no generation, so they trigger nothing.
		For(&v1alpha1.WhaleSay{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A Job's progress is reported ahead of new work.
		Watches(&batchv1.Job{}, ownership.EnqueueOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.WhaleSay{})).
		Complete(r)
}

// +kubebuilder:rbac:groups=devsectim.io,resources=whalesays,verbs=get;list;watch
// +kubebuilder:rbac:groups=devsectim.io,resources=whalesays/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the phases fetch, job, old jobs, status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ws := &v1alpha1.WhaleSay{}
	if result, ok, err := r.writes.Fetch(ctx, r.client, req.NamespacedName, ws); !ok {
		return result, err
	}
	if !ws.DeletionTimestamp.IsZero() {
		// Jobs go with their owner through garbage collection; nothing to clean up.
		return ctrl.Result{}, nil
	}
	patcher := r.writes.NewPatcher(r.client, ws)

	r.observeSpec(ws)
	result, err := r.reconcileJob(ctx, ws)
	if err == nil {
		err = r.deleteOldJobs(ctx, ws)
	}
	if _, patchErr := patcher.Patch(ctx, ws); patchErr != nil {
		err = errors.Join(err, patchErr)
	}
	return result, err
}

// observeSpec points the status at the Job of the current spec. When the
// spec changed, the outcome of the previous Job no longer applies.
func (r *Reconciler) observeSpec(ws *v1alpha1.WhaleSay) {
	ws.Status.ObservedGeneration = ws.Generation
	ws.Status.MessagePreview = preview(ws.Spec.Message)
	if name := JobName(ws, r.defaultImage); ws.Status.JobName != name {
		ws.Status = v1alpha1.WhaleSayStatus{
			ObservedGeneration: ws.Generation,
			MessagePreview:     ws.Status.MessagePreview,
			JobName:            name,
			Phase:              v1alpha1.PhasePending,
			Conditions:         ws.Status.Conditions,
		}
	}
}

// reconcileJob creates the Job of the current spec unless it already ran,
// and copies its outcome into the status.
func (r *Reconciler) reconcileJob(ctx context.Context, ws *v1alpha1.WhaleSay) (ctrl.Result, error) {
	if finished(ws.Status.Phase) {
		// The outcome is recorded; a Job that was deleted or cleaned up by a
		// TTL is not run again for the same spec.
		return ctrl.Result{}, nil
	}
	job := DesiredJob(ws, r.defaultImage)
	result, err := r.children.Apply(ctx, r.client, ws, job)
	if err != nil {
		return ownership.ReportApplyError(r.events, ws, err)
	}
	if result == ownership.Created {
		r.events.Normal(ws, "JobCreated", events.ActionCreate, "Created Job %s", job.Name)
	}
	r.recordOutcome(ctx, ws, outcomeOf(job))
	return ctrl.Result{}, nil
}

// recordOutcome sets the status and conditions from the Job's outcome and
// emits an event when the Job finishes.
func (r *Reconciler) recordOutcome(ctx context.Context, ws *v1alpha1.WhaleSay, out jobOutcome) {
	st := &ws.Status
	st.Phase = out.phase
	st.StartTime = out.startTime
	st.CompletionTime = out.completionTime
	switch out.phase {
	case v1alpha1.PhaseSucceeded:
		st.Output = r.logs.output(ctx, ws.Namespace, st.JobName)
		conditions.MarkTrue(ws, conditions.Ready, "Succeeded", "Job "+st.JobName+" succeeded")
		conditions.MarkFalse(ws, v1alpha1.ConditionFailed, "Succeeded", "Job "+st.JobName+" succeeded")
		r.events.Normal(ws, "Succeeded", events.ActionReconcile, "Job %s succeeded", st.JobName)
	case v1alpha1.PhaseFailed:
		conditions.MarkFalse(ws, conditions.Ready, "Failed", "Job "+st.JobName+" failed: "+out.message)
		conditions.MarkTrue(ws, v1alpha1.ConditionFailed, out.reason, out.message)
		r.events.Warning(ws, "Failed", events.ActionReconcile, "Job %s failed (%s): %s", st.JobName, out.reason, out.message)
	default:
		reason := string(out.phase)
		conditions.MarkFalse(ws, conditions.Ready, reason, "Job "+st.JobName+" is "+reason)
		conditions.MarkFalse(ws, v1alpha1.ConditionFailed, reason, "Job "+st.JobName+" is "+reason)
	}
}

// deleteOldJobs removes the Jobs of earlier specs.
func (r *Reconciler) deleteOldJobs(ctx context.Context, ws *v1alpha1.WhaleSay) error {
	jobs := &batchv1.JobList{}
	if err := r.client.List(ctx, jobs, client.InNamespace(ws.Namespace), client.MatchingLabels(ownership.SelectorLabels(appName, ws.Name))); err != nil {
		return err
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.Name == ws.Status.JobName || !metav1.IsControlledBy(job, ws) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
		log.FromContext(ctx).Info("deleted the Job of an earlier spec", "job", job.Name)
		r.events.Normal(ws, "JobDeleted", events.ActionDelete, "Deleted Job %s of an earlier spec", job.Name)
	}
	return nil
}
