// Package tdset is the TDSet controller: it scales a Deployment by the hour
// of the day in a time zone, and puts a Service in front of it on request.
//
// It does not poll. Each reconcile computes, with pkg/schedule, the count for
// the current wall-clock hour and the instant that count next changes, and
// asks to be requeued exactly then (sooner only when spec.intervalMint says
// so). The Deployment and the Service are watched, so drift is corrected as
// soon as it happens.
package tdset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// Name is the controller's name in --controllers.
const Name = "tdset"

// Descriptor registers the controller with the manager.
func Descriptor() manager.Descriptor {
	return manager.Descriptor{
		Name:        Name,
		Description: "TDSet (schedule.rs/v1): scales a Deployment by the hour of the day in a time zone",
		AddToScheme: schedulev1.AddToScheme,
		For:         &schedulev1.TDSet{},
		Managed:     []client.Object{&appsv1.Deployment{}, &corev1.Service{}},
		Setup:       manager.SetupWith(NewReconciler),
	}
}

// Reconciler reconciles TDSets.
type Reconciler struct {
	reconciler.Flow[*schedulev1.TDSet, *scope]
	client client.Client
	// children remembers the children this controller created until the cache has them.
	children apply.Children
	events   events.Recorder
	// clock says what time it is; tests inject a fake one to cross window
	// boundaries without waiting for them.
	clock clock.PassiveClock
}

// scope is what the phases of one reconcile share.
type scope struct {
	tds *schedulev1.TDSet
	// now is the instant the schedule is evaluated at.
	now time.Time
	// plan is what the schedule asks for at now.
	plan schedule.Result
	// deployment is the Deployment as the API server has it, once applied.
	deployment *appsv1.Deployment
}

// NewReconciler returns a Reconciler that reads the time from opts.Clock.
// TDSets name their own image, so opts.Image is not used.
func NewReconciler(mgr ctrl.Manager, opts reconciler.Options) (*Reconciler, error) {
	return newReconciler(mgr.GetClient(), reconciler.EventRecorder(mgr, Name), opts), nil
}

// newReconciler is NewReconciler on any client, which lets a test drive
// Reconcile itself through an uncached client.
func newReconciler(c client.Client, rec events.Recorder, opts reconciler.Options) *Reconciler {
	r := &Reconciler{client: c, events: rec, clock: opts.ClockOrReal()}
	r.Flow = reconciler.Flow[*schedulev1.TDSet, *scope]{
		Client:    r.client,
		Events:    r.events,
		NewObject: func() *schedulev1.TDSet { return &schedulev1.TDSet{} },
		NewScope:  func(tds *schedulev1.TDSet) *scope { return &scope{tds: tds, now: r.clock.Now()} },
		Phases: []reconciler.Phase[*scope]{
			r.reconcileSchedule, r.reconcileDeployment, r.reconcileService, r.reconcileStatus,
		},
	}
	return r
}

// SetupWithManager watches TDSets and the Deployments and Services they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return reconciler.NewControllerBuilder(mgr, Name, &schedulev1.TDSet{},
		[]client.Object{&appsv1.Deployment{}}, []client.Object{&corev1.Service{}}).
		Complete(r)
}

// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets/status,verbs=patch
// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// reconcileSchedule evaluates the schedule at the reconcile's instant and
// asks for a reconcile at the next window boundary. A spec that cannot be
// evaluated leaves the children alone and stops here: only a spec change
// can fix it, and a spec change triggers a reconcile, so no requeue.
func (r *Reconciler) reconcileSchedule(ctx context.Context, s *scope) (reconciler.Result, error) {
	s.tds.Status.ObservedGeneration = s.tds.Generation
	plan, ok := r.evaluate(s.tds, s.now)
	if !ok {
		return reconciler.Result{Stop: true}, r.observeDeployment(ctx, s.tds)
	}
	s.plan = plan
	return reconciler.Requeue(requeueAfter(s.tds, plan.Next, s.now)), nil
}

// evaluate resolves the time zone and the windows and records in the status
// what the schedule asks for at now. It reports false, with Ready=False and a
// Warning event, when the spec cannot be evaluated.
func (r *Reconciler) evaluate(tds *schedulev1.TDSet, now time.Time) (schedule.Result, bool) {
	markSuspended(tds)
	loc, err := schedule.LoadLocation(tds.Spec.TimeZone)
	if err != nil {
		r.invalid(tds, schedulev1.ReasonInvalidTimeZone, err.Error())
		return schedule.Result{}, false
	}
	windows := Windows(tds)
	if err := schedule.Validate(windows); err != nil {
		r.invalid(tds, schedulev1.ReasonInvalidSchedule, "spec.schedulingConfig: "+err.Error())
		return schedule.Result{}, false
	}
	plan := schedule.Evaluate(windows, tds.Spec.DefaultReplica, loc, now)

	st := &tds.Status
	st.DesiredReplicas = ptr.To(plan.Replicas)
	st.ActiveWindow = nil
	if plan.Window != schedule.Default {
		st.ActiveWindow = ptr.To(int32(plan.Window))
	}
	st.NextTransitionTime = &metav1.Time{Time: plan.Next}
	st.NextReplicas = ptr.To(plan.NextReplicas)

	switch {
	case tds.Spec.Suspend:
		conditions.MarkFalse(tds, schedulev1.ConditionScheduled, schedulev1.ReasonSuspended, fmt.Sprintf(
			"spec.suspend is true: the schedule's %d replicas (%s) are not applied", plan.Replicas, source(tds, plan.Window)))
	case plan.Window == schedule.Default:
		conditions.MarkTrue(tds, schedulev1.ConditionScheduled, schedulev1.ReasonDefaultReplica, fmt.Sprintf(
			"No window covers this hour: defaultReplica sets %d replicas until %s, then %d", plan.Replicas, plan.Next.Format(time.RFC3339), plan.NextReplicas))
	default:
		conditions.MarkTrue(tds, schedulev1.ConditionScheduled, schedulev1.ReasonWindowActive, fmt.Sprintf(
			"Window %s (index %d) sets %d replicas until %s, then %d", windows[plan.Window], plan.Window, plan.Replicas, plan.Next.Format(time.RFC3339), plan.NextReplicas))
	}
	return plan, true
}

// invalid reports a spec that cannot be evaluated. The Warning event is
// emitted when the condition changes, not on every resync.
func (r *Reconciler) invalid(tds *schedulev1.TDSet, reason, message string) {
	st := &tds.Status
	st.DesiredReplicas, st.ActiveWindow, st.NextTransitionTime, st.NextReplicas = nil, nil, nil, nil
	conditions.MarkFalse(tds, schedulev1.ConditionScheduled, reason, message)
	if conditions.MarkFalse(tds, conditions.Ready, reason, message+"; the Deployment is left as it is") {
		r.events.Warning(tds, reason, events.ActionReconcile, "%s; the Deployment is left as it is", message)
	}
}

// markSuspended sets the Suspended condition from spec.suspend.
func markSuspended(tds *schedulev1.TDSet) {
	if tds.Spec.Suspend {
		conditions.MarkTrue(tds, schedulev1.ConditionSuspended, schedulev1.ReasonSuspended, "spec.suspend is true: the Deployment keeps its current replica count")
		return
	}
	conditions.MarkFalse(tds, schedulev1.ConditionSuspended, schedulev1.ReasonNotSuspended, "The schedule is applied")
}

// reconcileDeployment creates or corrects the Deployment: the schedule's
// count, or while suspended the count it has.
func (r *Reconciler) reconcileDeployment(ctx context.Context, s *scope) (reconciler.Result, error) {
	tds, plan := s.tds, s.plan
	existing := &appsv1.Deployment{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tds.Namespace, Name: tds.Name}, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconciler.Result{}, err
	}
	found := err == nil && metav1.IsControlledBy(existing, tds)
	replicas := plan.Replicas
	if tds.Spec.Suspend && found && existing.Spec.Replicas != nil {
		replicas = *existing.Spec.Replicas
	}

	dep := DesiredDeployment(tds, replicas)
	applied, err := r.children.Apply(ctx, r.client, tds, dep)
	if err != nil {
		retryAfter, err := conditions.ReportApplyError(r.events, tds, err)
		return reconciler.StopAndRequeue(retryAfter), err
	}
	why := source(tds, plan.Window)
	if tds.Spec.Suspend {
		why = "suspended"
	}
	switch applied {
	case apply.Created:
		r.events.Normal(tds, schedulev1.ReasonDeploymentCreated, events.ActionCreate, "Created deployment %s with %d replicas (%s)", dep.Name, replicas, why)
	case apply.Updated:
		change := apply.DiffDeployment(existing, dep)
		if change.Scaled() {
			r.events.Normal(tds, schedulev1.ReasonDeploymentScaled, events.ActionScale, "Scaled deployment %s from %d to %d (%s)", dep.Name, change.FromReplicas, change.ToReplicas, why)
		}
		if change.TemplateChanged {
			r.events.Normal(tds, schedulev1.ReasonDeploymentUpdated, events.ActionUpdate, "Updated the pod template of deployment %s to the TDSet's container; it rolls out", dep.Name)
		}
	}
	s.deployment = dep
	tds.Status.AvailableReplicas = ptr.To(dep.Status.AvailableReplicas)
	return reconciler.Result{}, nil
}

// reconcileService creates or corrects the Service while spec.service.port
// is set, and deletes the Service this TDSet controls once it is not.
func (r *Reconciler) reconcileService(ctx context.Context, s *scope) (reconciler.Result, error) {
	tds := s.tds
	svc := DesiredService(tds)
	if svc == nil {
		return reconciler.Result{}, r.deleteService(ctx, tds)
	}
	applied, err := r.children.Apply(ctx, r.client, tds, svc)
	if err != nil {
		retryAfter, err := conditions.ReportApplyError(r.events, tds, err)
		return reconciler.StopAndRequeue(retryAfter), err
	}
	switch applied {
	case apply.Created:
		r.events.Normal(tds, schedulev1.ReasonServiceCreated, events.ActionCreate, "Created service %s on port %d", svc.Name, tds.Spec.Service.Port)
	case apply.Updated:
		r.events.Normal(tds, schedulev1.ReasonServiceUpdated, events.ActionUpdate, "Updated service %s to port %d", svc.Name, tds.Spec.Service.Port)
	}
	return reconciler.Result{}, nil
}

// reconcileStatus sets Ready from the Deployment.
func (r *Reconciler) reconcileStatus(_ context.Context, s *scope) (reconciler.Result, error) {
	reportReady(s.tds, s.deployment)
	return reconciler.Result{}, nil
}

// deleteService removes the TDSet's Service. A Service of the same name that
// the TDSet does not control is someone else's and stays.
func (r *Reconciler) deleteService(ctx context.Context, tds *schedulev1.TDSet) error {
	svc := &corev1.Service{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tds.Namespace, Name: tds.Name}, svc)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(svc, tds) || !svc.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := r.client.Delete(ctx, svc, client.Preconditions{UID: &svc.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting service %s: %w", svc.Name, err)
	}
	r.events.Normal(tds, schedulev1.ReasonServiceDeleted, events.ActionDelete, "Deleted service %s: spec.service.port is not set", svc.Name)
	return nil
}

// observeDeployment records the available replicas of the TDSet's Deployment
// without changing it.
func (r *Reconciler) observeDeployment(ctx context.Context, tds *schedulev1.TDSet) error {
	tds.Status.AvailableReplicas = nil
	dep := &appsv1.Deployment{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tds.Namespace, Name: tds.Name}, dep)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if metav1.IsControlledBy(dep, tds) {
		tds.Status.AvailableReplicas = ptr.To(dep.Status.AvailableReplicas)
	}
	return nil
}

// reportReady sets Ready from the Deployment: True once the Deployment has
// seen its spec and has as many updated and available replicas as it should
// run.
func reportReady(tds *schedulev1.TDSet, dep *appsv1.Deployment) {
	want := ptr.Deref(dep.Spec.Replicas, 1)
	st := dep.Status
	msg := fmt.Sprintf("%d/%d replicas available", st.AvailableReplicas, want)
	if tds.Spec.Suspend {
		msg += " (the count kept while suspended)"
	}
	if st.ObservedGeneration >= dep.Generation && st.UpdatedReplicas >= want && st.AvailableReplicas >= want {
		conditions.MarkTrue(tds, conditions.Ready, schedulev1.ReasonAvailable, msg)
		return
	}
	conditions.MarkFalse(tds, conditions.Ready, schedulev1.ReasonProgressing, msg)
}

// Windows converts the spec's windows for pkg/schedule.
func Windows(tds *schedulev1.TDSet) []schedule.Window {
	out := make([]schedule.Window, len(tds.Spec.SchedulingConfig))
	for i, w := range tds.Spec.SchedulingConfig {
		out[i] = schedule.Window{StartHour: int(w.StartTime), EndHour: int(w.EndTime), Replicas: w.Replica}
	}
	return out
}

// source names what sets the count, "window 17-19" or "defaultReplica",
// as events and conditions show it.
func source(tds *schedulev1.TDSet, window int) string {
	if window == schedule.Default {
		return "defaultReplica"
	}
	w := tds.Spec.SchedulingConfig[window]
	return fmt.Sprintf("window %d-%d", w.StartTime, w.EndTime)
}

// requeueAfter is the time until the next window boundary, capped by
// spec.intervalMint.
func requeueAfter(tds *schedulev1.TDSet, next, now time.Time) time.Duration {
	d := next.Sub(now)
	if m := tds.Spec.IntervalMint; m > 0 {
		d = min(d, time.Duration(m)*time.Minute)
	}
	return d
}
