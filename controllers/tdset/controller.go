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
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/schedule"
	"github.com/multi-operator/multi-operator/pkg/status"
)

// Name is the controller's name in --controllers.
const Name = "tdset"

// Descriptor registers the controller with the manager.
func Descriptor() manager.Descriptor {
	return manager.Descriptor{
		Name:        Name,
		Description: "TDSet (schedule.rs/v1): scales a Deployment by the hour of the day in a time zone",
		AddToScheme: v1.AddToScheme,
		For:         &v1.TDSet{},
		Owns:        []client.Object{&appsv1.Deployment{}, &corev1.Service{}},
		Setup: func(mgr ctrl.Manager) error {
			return NewReconciler(mgr, clock.RealClock{}).SetupWithManager(mgr)
		},
	}
}

// Reconciler reconciles TDSets.
type Reconciler struct {
	client client.Client
	// writes tells reads that predate our own status writes.
	writes status.Writes
	// children remembers the children this controller created until the cache has them.
	children ownership.Children
	events   events.Recorder
	// clock says what time it is; tests inject a fake one to cross window
	// boundaries without waiting for them.
	clock clock.PassiveClock
}

// New returns a Reconciler that works through c, records events with rec
// and reads the time from clk.
func New(c client.Client, rec events.Recorder, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{client: c, events: rec, clock: clk}
}

// NewReconciler returns a Reconciler that uses the manager's client and
// event recorder.
func NewReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return New(mgr.GetClient(), events.NewRecorder(mgr.GetEventRecorder(Name+"-controller")), clk)
}

// SetupWithManager watches TDSets and the Deployments and Services they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		// Our own status writes bump no generation, so they trigger nothing.
		For(&v1.TDSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A Deployment's progress is reported ahead of new work.
		Watches(&appsv1.Deployment{}, ownership.EnqueueOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1.TDSet{})).
		Owns(&corev1.Service{}).
		Complete(r)
}

// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets/status,verbs=patch
// Owner references block the owner's deletion, which needs update on finalizers
// where the OwnerReferencesPermissionEnforcement admission plugin runs.
// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the phases fetch, schedule, deployment, service, status,
// and requeues at the next window boundary.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tds := &v1.TDSet{}
	if result, ok, err := r.writes.Fetch(ctx, r.client, req.NamespacedName, tds); !ok {
		return result, err
	}
	if !tds.DeletionTimestamp.IsZero() {
		// The children go with their owner through garbage collection.
		return ctrl.Result{}, nil
	}
	patcher := r.writes.NewPatcher(r.client, tds)
	tds.Status.ObservedGeneration = tds.Generation

	now := r.clock.Now()
	result, err := r.reconcile(ctx, tds, now)
	if _, patchErr := patcher.Patch(ctx, tds); patchErr != nil {
		err = errors.Join(err, patchErr)
	}
	if err != nil {
		// controller-runtime retries errors with backoff and ignores a requeue beside them.
		return ctrl.Result{}, err
	}
	return result, nil
}

// reconcile brings the children in line with the schedule at now.
func (r *Reconciler) reconcile(ctx context.Context, tds *v1.TDSet, now time.Time) (ctrl.Result, error) {
	plan, ok := r.evaluate(tds, now)
	if !ok {
		// Nothing but a spec change can fix the spec, and a spec change
		// triggers a reconcile: no requeue, and the children are left alone.
		return ctrl.Result{}, r.observeDeployment(ctx, tds)
	}
	untilNext := requeueAfter(tds, plan.Next, now)

	// Errors are retried with backoff; a conflict comes back with a
	// requeue of its own, and the boundary may come sooner.
	dep, result, err := r.reconcileDeployment(ctx, tds, plan)
	if err != nil {
		return ctrl.Result{}, err
	}
	if dep == nil {
		return soonest(result, untilNext), nil
	}
	tds.Status.AvailableReplicas = ptr.To(dep.Status.AvailableReplicas)
	result, err = r.reconcileService(ctx, tds)
	if err != nil {
		return ctrl.Result{}, err
	}
	if result.RequeueAfter > 0 {
		// A conflict over the Service name: Ready already says so.
		return soonest(result, untilNext), nil
	}
	reportReady(tds, dep)
	return ctrl.Result{RequeueAfter: untilNext}, nil
}

// evaluate resolves the time zone and the windows and records in the status
// what the schedule asks for at now. It reports false, with Ready=False and a
// Warning event, when the spec cannot be evaluated.
func (r *Reconciler) evaluate(tds *v1.TDSet, now time.Time) (schedule.Result, bool) {
	markSuspended(tds)
	loc, err := schedule.LoadLocation(tds.Spec.TimeZone)
	if err != nil {
		r.invalid(tds, v1.ReasonInvalidTimeZone, err.Error())
		return schedule.Result{}, false
	}
	windows := Windows(tds)
	if err := schedule.Validate(windows); err != nil {
		r.invalid(tds, v1.ReasonInvalidSchedule, "spec.schedulingConfig: "+err.Error())
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
		conditions.MarkFalse(tds, v1.ConditionScheduled, v1.ReasonSuspended, fmt.Sprintf(
			"spec.suspend is true: the schedule's %d replicas (%s) are not applied", plan.Replicas, source(tds, plan.Window)))
	case plan.Window == schedule.Default:
		conditions.MarkTrue(tds, v1.ConditionScheduled, v1.ReasonDefaultReplica, fmt.Sprintf(
			"No window covers this hour: defaultReplica sets %d replicas until %s, then %d", plan.Replicas, plan.Next.Format(time.RFC3339), plan.NextReplicas))
	default:
		conditions.MarkTrue(tds, v1.ConditionScheduled, v1.ReasonWindowActive, fmt.Sprintf(
			"Window %s (index %d) sets %d replicas until %s, then %d", windows[plan.Window], plan.Window, plan.Replicas, plan.Next.Format(time.RFC3339), plan.NextReplicas))
	}
	return plan, true
}

// invalid reports a spec that cannot be evaluated. The Warning event is
// emitted when the condition changes, not on every resync.
func (r *Reconciler) invalid(tds *v1.TDSet, reason, message string) {
	st := &tds.Status
	st.DesiredReplicas, st.ActiveWindow, st.NextTransitionTime, st.NextReplicas = nil, nil, nil, nil
	conditions.MarkFalse(tds, v1.ConditionScheduled, reason, message)
	if conditions.MarkFalse(tds, conditions.Ready, reason, message+"; the Deployment is left as it is") {
		r.events.Warning(tds, reason, events.ActionReconcile, "%s; the Deployment is left as it is", message)
	}
}

// markSuspended sets the Suspended condition from spec.suspend.
func markSuspended(tds *v1.TDSet) {
	if tds.Spec.Suspend {
		conditions.MarkTrue(tds, v1.ConditionSuspended, v1.ReasonSuspended, "spec.suspend is true: the Deployment keeps its current replica count")
		return
	}
	conditions.MarkFalse(tds, v1.ConditionSuspended, v1.ReasonNotSuspended, "The schedule is applied")
}

// reconcileDeployment creates or corrects the Deployment: the schedule's
// count, or while suspended the count it has. It returns the Deployment as
// the API server has it, or nil when it could not be applied.
func (r *Reconciler) reconcileDeployment(ctx context.Context, tds *v1.TDSet, plan schedule.Result) (*appsv1.Deployment, ctrl.Result, error) {
	existing := &appsv1.Deployment{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tds.Namespace, Name: tds.Name}, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, ctrl.Result{}, err
	}
	found := err == nil && metav1.IsControlledBy(existing, tds)
	replicas := plan.Replicas
	if tds.Spec.Suspend && found && existing.Spec.Replicas != nil {
		replicas = *existing.Spec.Replicas
	}

	dep := DesiredDeployment(tds, replicas)
	applied, err := r.children.Apply(ctx, r.client, tds, dep)
	if err != nil {
		result, err := ownership.ReportApplyError(r.events, tds, err)
		return nil, result, err
	}
	why := source(tds, plan.Window)
	if tds.Spec.Suspend {
		why = "suspended"
	}
	switch applied {
	case ownership.Created:
		r.events.Normal(tds, "Created", events.ActionCreate, "Created deployment %s with %d replicas (%s)", dep.Name, replicas, why)
	case ownership.Updated:
		change := ownership.DiffDeployment(existing, dep)
		if change.Scaled() {
			r.events.Normal(tds, "Scaled", events.ActionScale, "Scaled deployment %s from %d to %d (%s)", dep.Name, change.FromReplicas, change.ToReplicas, why)
		}
		if change.TemplateChanged {
			r.events.Normal(tds, "Updated", events.ActionUpdate, "Updated the pod template of deployment %s to the TDSet's container; it rolls out", dep.Name)
		}
	}
	return dep, ctrl.Result{}, nil
}

// reconcileService creates or corrects the Service while spec.service.port
// is set, and deletes the Service this TDSet controls once it is not.
func (r *Reconciler) reconcileService(ctx context.Context, tds *v1.TDSet) (ctrl.Result, error) {
	svc := DesiredService(tds)
	if svc == nil {
		return ctrl.Result{}, r.deleteService(ctx, tds)
	}
	applied, err := r.children.Apply(ctx, r.client, tds, svc)
	if err != nil {
		return ownership.ReportApplyError(r.events, tds, err)
	}
	switch applied {
	case ownership.Created:
		r.events.Normal(tds, "Created", events.ActionCreate, "Created service %s on port %d", svc.Name, tds.Spec.Service.Port)
	case ownership.Updated:
		r.events.Normal(tds, "Updated", events.ActionUpdate, "Updated service %s to port %d", svc.Name, tds.Spec.Service.Port)
	}
	return ctrl.Result{}, nil
}

// deleteService removes the TDSet's Service. A Service of the same name that
// the TDSet does not control is someone else's and stays.
func (r *Reconciler) deleteService(ctx context.Context, tds *v1.TDSet) error {
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
	r.events.Normal(tds, "Deleted", events.ActionDelete, "Deleted service %s: spec.service.port is not set", svc.Name)
	return nil
}

// observeDeployment records the available replicas of the TDSet's Deployment
// without changing it.
func (r *Reconciler) observeDeployment(ctx context.Context, tds *v1.TDSet) error {
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
func reportReady(tds *v1.TDSet, dep *appsv1.Deployment) {
	want := ptr.Deref(dep.Spec.Replicas, 1)
	st := dep.Status
	msg := fmt.Sprintf("%d/%d replicas available", st.AvailableReplicas, want)
	if tds.Spec.Suspend {
		msg += " (the count kept while suspended)"
	}
	if st.ObservedGeneration >= dep.Generation && st.UpdatedReplicas >= want && st.AvailableReplicas >= want {
		conditions.MarkTrue(tds, conditions.Ready, v1.ReasonAvailable, msg)
		return
	}
	conditions.MarkFalse(tds, conditions.Ready, v1.ReasonProgressing, msg)
}

// Windows converts the spec's windows for pkg/schedule.
func Windows(tds *v1.TDSet) []schedule.Window {
	out := make([]schedule.Window, len(tds.Spec.SchedulingConfig))
	for i, w := range tds.Spec.SchedulingConfig {
		out[i] = schedule.Window{StartHour: int(w.StartTime), EndHour: int(w.EndTime), Replicas: w.Replica}
	}
	return out
}

// source names what sets the count, "window 17-19" or "defaultReplica",
// as events and conditions show it.
func source(tds *v1.TDSet, window int) string {
	if window == schedule.Default {
		return "defaultReplica"
	}
	w := tds.Spec.SchedulingConfig[window]
	return fmt.Sprintf("window %d-%d", w.StartTime, w.EndTime)
}

// requeueAfter is the time until the next window boundary, capped by
// spec.intervalMint.
func requeueAfter(tds *v1.TDSet, next, now time.Time) time.Duration {
	d := next.Sub(now)
	if m := tds.Spec.IntervalMint; m > 0 {
		d = min(d, time.Duration(m)*time.Minute)
	}
	return d
}

// soonest keeps the earlier of result's requeue and d.
func soonest(result ctrl.Result, d time.Duration) ctrl.Result {
	if result.RequeueAfter == 0 || d < result.RequeueAfter {
		result.RequeueAfter = d
	}
	return result
}
