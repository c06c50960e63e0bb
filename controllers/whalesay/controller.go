// Package whalesay is the WhaleSay controller: it renders a message with
// cowsay in a Job, one Job per distinct spec, and reports the outcome.
package whalesay

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Name is the controller's name in --controllers.
const Name = "whalesay"

// ImageEnv names the environment variable with the default image.
const ImageEnv = "WHALESAY_IMAGE"

// Descriptor registers the controller with the manager.
func Descriptor() reconciler.Descriptor {
	return reconciler.Descriptor{
		Name:         Name,
		Description:  "WhaleSay (devsectim.io/v1alpha1): prints a message with cowsay in a Job and reports the outcome",
		AddToScheme:  whalesayv1alpha1.AddToScheme,
		For:          &whalesayv1alpha1.WhaleSay{},
		Managed:      []client.Object{&batchv1.Job{}},
		ImageEnv:     ImageEnv,
		DefaultImage: DefaultImage,
		Setup:        reconciler.SetupWith(NewReconciler),
	}
}

// Reconciler reconciles WhaleSays.
type Reconciler struct {
	reconciler.Flow[*whalesayv1alpha1.WhaleSay, *whalesayv1alpha1.WhaleSay]
	client client.Client
	// children applies the Jobs and records their events.
	children     reconciler.Children
	logs         *logReader
	events       events.Recorder
	defaultImage string
	// startupGrace is how long a new WhaleSay's first status waits for its
	// Job to finish; see reconcileJob.
	startupGrace time.Duration
}

// NewReconciler returns a Reconciler that runs opts.Image unless a
// WhaleSay names its own.
func NewReconciler(mgr ctrl.Manager, opts reconciler.Options) (*Reconciler, error) {
	// The core group's typed client alone, on the manager's HTTP client:
	// the whole clientset builds a client for every group at start.
	core, err := corev1client.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		client:       mgr.GetClient(),
		logs:         &logReader{core: core},
		events:       reconciler.EventRecorder(mgr, Name),
		defaultImage: opts.ImageOr(DefaultImage),
		startupGrace: opts.StartupGrace,
	}
	r.children = reconciler.Children{Client: r.client, Events: r.events}
	// The phases need nothing but the WhaleSay itself.
	r.Flow = reconciler.Flow[*whalesayv1alpha1.WhaleSay, *whalesayv1alpha1.WhaleSay]{
		Client:    r.client,
		Events:    r.events,
		NewObject: func() *whalesayv1alpha1.WhaleSay { return &whalesayv1alpha1.WhaleSay{} },
		NewScope:  func(ws *whalesayv1alpha1.WhaleSay) *whalesayv1alpha1.WhaleSay { return ws },
		Phases: []reconciler.NamedPhase[*whalesayv1alpha1.WhaleSay]{
			{Name: "spec", Run: r.reconcileSpec},
			{Name: "job", Run: r.reconcileJob},
			{Name: "old jobs", Run: r.deleteOldJobs},
		},
		ObservedGeneration: func(ws *whalesayv1alpha1.WhaleSay) *int64 { return &ws.Status.ObservedGeneration },
		Gone:               func(key types.NamespacedName) { forgetMetrics(key.Namespace, key.Name) },
	}
	return r, nil
}

// SetupWithManager watches WhaleSays and the Jobs they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return reconciler.NewControllerBuilder(mgr, Name, r, &whalesayv1alpha1.WhaleSay{},
		[]reconciler.Reported{reconciler.ReportOf(&batchv1.Job{}, outcomeOf)}, nil).
		Complete(r)
}

// +kubebuilder:rbac:groups=devsectim.io,resources=whalesays,verbs=get;list;watch
// +kubebuilder:rbac:groups=devsectim.io,resources=whalesays/status,verbs=patch
// +kubebuilder:rbac:groups=devsectim.io,resources=whalesays/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// reconcileSpec points the status at the Job of the current spec.
func (r *Reconciler) reconcileSpec(_ context.Context, ws *whalesayv1alpha1.WhaleSay) (reconciler.Result, error) {
	r.observeSpec(ws)
	return reconciler.Result{}, nil
}

// observeSpec points the status at the Job of the current spec. When the
// spec changed, the outcome of the previous Job no longer applies.
func (r *Reconciler) observeSpec(ws *whalesayv1alpha1.WhaleSay) {
	ws.Status.MessagePreview = preview(ws.Spec.Message)
	if name := JobName(ws, r.defaultImage); ws.Status.JobName != name {
		ws.Status = whalesayv1alpha1.WhaleSayStatus{
			// Set by the Flow before the phases.
			ObservedGeneration: ws.Status.ObservedGeneration,
			MessagePreview:     ws.Status.MessagePreview,
			JobName:            name,
			Phase:              whalesayv1alpha1.PhasePending,
			Conditions:         ws.Status.Conditions,
		}
	}
}

// reconcileJob creates the Job of the current spec unless it already ran,
// and copies its outcome into the status. A Job that cannot be applied
// stops the reconcile: the Jobs of earlier specs stay until it can. A new
// WhaleSay's first status waits, for up to the startup grace after its
// Job's creation, for the Job to finish (reconciler.HoldFirstStatus): most
// Jobs of a message do within it, and the WhaleSay then gets one status
// write, Succeeded, instead of Pending first.
func (r *Reconciler) reconcileJob(ctx context.Context, ws *whalesayv1alpha1.WhaleSay) (reconciler.Result, error) {
	if finished(ws.Status.Phase) {
		// The outcome is recorded; a Job that was deleted or cleaned up by a
		// TTL is not run again for the same spec.
		return reconciler.Result{}, nil
	}
	job := DesiredJob(ws, r.defaultImage)
	if _, result, err := r.children.Apply(ctx, ws, reconciler.Child{Object: job, Created: whalesayv1alpha1.ReasonJobCreated}); result.Stop {
		return result, err
	}
	outcome := outcomeOf(job)
	if hold := reconciler.HoldFirstStatus(ws, time.Since(job.CreationTimestamp.Time), r.startupGrace, finished(outcome.phase)); hold.HoldStatus {
		return hold, nil
	}
	r.recordOutcome(ctx, ws, outcome)
	return reconciler.Result{}, nil
}

// recordOutcome sets the status and conditions from the Job's outcome and
// emits an event and counts the Job when it finishes. It runs only while
// the status is not final yet (reconcileJob), so a finished Job is told
// and counted once.
func (r *Reconciler) recordOutcome(ctx context.Context, ws *whalesayv1alpha1.WhaleSay, out jobOutcome) {
	recordFinished(ws, out)
	st := &ws.Status
	st.Phase = out.phase
	st.StartTime = out.startTime
	st.CompletionTime = out.completionTime
	switch out.phase {
	case whalesayv1alpha1.PhaseSucceeded:
		st.Output = r.logs.output(ctx, ws.Namespace, st.JobName)
		conditions.MarkTrue(ws, conditions.Ready, whalesayv1alpha1.ReasonJobSucceeded, "Job "+st.JobName+" succeeded")
		conditions.MarkFalse(ws, whalesayv1alpha1.ConditionFailed, whalesayv1alpha1.ReasonJobSucceeded, "Job "+st.JobName+" succeeded")
		r.events.Normal(ws, whalesayv1alpha1.ReasonJobSucceeded, events.ActionReconcile, "Job %s succeeded", st.JobName)
	case whalesayv1alpha1.PhaseFailed:
		conditions.MarkFalse(ws, conditions.Ready, whalesayv1alpha1.ReasonJobFailed, "Job "+st.JobName+" failed: "+out.message)
		conditions.MarkTrue(ws, whalesayv1alpha1.ConditionFailed, out.reason, out.message)
		r.events.Warning(ws, whalesayv1alpha1.ReasonJobFailed, events.ActionReconcile, "Job %s failed (%s): %s", st.JobName, out.reason, out.message)
	default:
		reason := string(out.phase)
		conditions.MarkFalse(ws, conditions.Ready, reason, "Job "+st.JobName+" is "+reason)
		conditions.MarkFalse(ws, whalesayv1alpha1.ConditionFailed, reason, "Job "+st.JobName+" is "+reason)
	}
}

// deleteOldJobs removes the Jobs of earlier specs.
func (r *Reconciler) deleteOldJobs(ctx context.Context, ws *whalesayv1alpha1.WhaleSay) (reconciler.Result, error) {
	jobs := &batchv1.JobList{}
	if err := r.client.List(ctx, jobs, client.InNamespace(ws.Namespace), client.MatchingLabels(ownership.SelectorLabels(appName, ws.Name))); err != nil {
		return reconciler.Result{}, err
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.Name == ws.Status.JobName || !metav1.IsControlledBy(job, ws) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if err := apply.DeleteControlled(ctx, r.client, job); err != nil {
			return reconciler.Result{}, err
		}
		log.FromContext(ctx).Info("deleted the Job of an earlier spec", "job", job.Name)
		r.events.Normal(ws, whalesayv1alpha1.ReasonJobDeleted, events.ActionDelete, "Deleted Job %s of an earlier spec", job.Name)
	}
	return reconciler.Result{}, nil
}
