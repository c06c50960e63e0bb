// Package tdset is the TDSet controller: it scales a Deployment by a weekly
// calendar in a time zone (or sets the floor of a HorizontalPodAutoscaler),
// and puts a Service in front of it on request; or, with
// spec.scaleTargetRef, it scales a workload that already runs through its
// scale subresource (target.go).
//
// It reconciles schedule.rs/v2 only; v1 objects reach it converted by the
// manager's /convert webhook (see webhook.go). It does not poll. Each
// reconcile computes, with pkg/schedule, the count for now and the instant
// that count next changes, and asks to be requeued exactly then (sooner only
// when spec.resyncInterval says so). The Deployment, the HPA and the Service
// are watched, and so are scale targets, so drift is corrected as soon as it
// happens.
package tdset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
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
func Descriptor() reconciler.Descriptor {
	return reconciler.Descriptor{
		Name:        Name,
		Description: "TDSet (schedule.rs/v2, v1 converted): scales a Deployment, or a workload that already runs, by a weekly calendar in a time zone",
		AddToScheme: addToScheme,
		For:         &schedulev2.TDSet{},
		Managed:     []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &autoscalingv2.HorizontalPodAutoscaler{}},
		Read:        []client.Object{&schedulev2.Calendar{}, &schedulev2.ClusterCalendar{}},
		// The ConfigMaps calendars import their dates from.
		Referenced: []client.Object{&corev1.ConfigMap{}},
		Setup:      reconciler.SetupWith(NewReconciler),
		Webhooks:   SetupWebhooks,
		Conversion: true,
	}
}

// addToScheme registers both versions: the conversion webhook needs v1
// beside the hub.
func addToScheme(s *runtime.Scheme) error {
	if err := schedulev1.AddToScheme(s); err != nil {
		return err
	}
	return schedulev2.AddToScheme(s)
}

// Reconciler reconciles TDSets.
type Reconciler struct {
	reconciler.Flow[*schedulev2.TDSet, *scope]
	client client.Client
	// calendars keeps the parse of each imported iCalendar file's current
	// version.
	calendars *parsedCalendars
	// reader reads from the API server, not the cache: a scale target of
	// any kind, which the manager's cache does not hold.
	reader client.Reader
	// targets reads the scale targets' cache (targetwatch.go); nil when it
	// watches no kind, then targets are read with reader.
	targets client.Reader
	// autoscalers reads the HPAs' cache (hpawatch.go); nil on an uncached
	// client, then HPAs are read with reader.
	autoscalers client.Reader
	// calendarCRDs says, of each calendar kind, whether the API server
	// served it when the manager started: a kind that is not served is
	// neither watched nor read, so the manager runs without the calendars'
	// CRDs and only TDSets that name calendars are not Ready.
	calendarCRDs map[schedulev2.CalendarKind]bool
	// clusterCalendars is whether ClusterCalendars are watched and read:
	// not in the namespace-scoped mode, whose Roles grant nothing on
	// cluster-scoped kinds.
	clusterCalendars bool
	// scalableKinds are the kinds a scaleTargetRef may name.
	scalableKinds []schema.GroupKind
	// children applies the Deployment, the HPA and the Service and records
	// their events.
	children reconciler.Children
	events   events.Recorder
	// clock says what time it is; tests inject a fake one to cross window
	// boundaries without waiting for them.
	clock clock.PassiveClock
	// startupGrace is how long a new TDSet's first status waits for its
	// Deployment to be available (reconciler.HoldFirstStatus).
	startupGrace time.Duration
}

// scope is what the phases of one reconcile share.
type scope struct {
	tds *schedulev2.TDSet
	// now is the instant the schedule is evaluated at.
	now time.Time
	// calendar is the spec's schedule.
	calendar *schedule.Calendar
	// plan is what the schedule asks for at now.
	plan schedule.Result
	// deployment is the Deployment as the API server has it, once applied.
	deployment *appsv1.Deployment
	// target is the scaleTargetRef as the schedule phase read it, for a
	// kind whose growth it estimates (estimatedLeadTime); nil otherwise.
	target *unstructured.Unstructured
	// estimatedLead is the lead time the target's growth needs, when
	// estimated and longer than spec.scaleUpLeadTime.
	estimatedLead *time.Duration
}

// NewReconciler returns a Reconciler that reads the time from opts.Clock.
// TDSets name their own image, so opts.Image is not used.
func NewReconciler(mgr ctrl.Manager, opts reconciler.Options) (*Reconciler, error) {
	r := newReconciler(mgr.GetClient(), reconciler.EventRecorder(mgr, Name), opts)
	r.reader = mgr.GetAPIReader()
	r.clusterCalendars = manager.WatchesAllNamespaces(mgr)
	for kind, obj := range map[schedulev2.CalendarKind]client.Object{
		schedulev2.CalendarKindNamespaced: &schedulev2.Calendar{},
		schedulev2.CalendarKindCluster:    &schedulev2.ClusterCalendar{},
	} {
		served, err := manager.Serves(mgr, obj)
		if err != nil {
			return nil, fmt.Errorf("asking whether the API server serves %s: %w", kind, err)
		}
		r.calendarCRDs[kind] = served
	}
	return r, nil
}

// newReconciler is NewReconciler on any client, which lets a test drive
// Reconcile itself through an uncached client.
func newReconciler(c client.Client, rec events.Recorder, opts reconciler.Options) *Reconciler {
	r := &Reconciler{client: c, reader: c, events: rec, clock: opts.ClockOrReal(), startupGrace: opts.StartupGrace, scalableKinds: opts.ScalableKinds, clusterCalendars: true,
		calendarCRDs: map[schedulev2.CalendarKind]bool{schedulev2.CalendarKindNamespaced: true, schedulev2.CalendarKindCluster: true}}
	if r.scalableKinds == nil {
		r.scalableKinds = DefaultScalableKinds()
	}
	r.children = reconciler.Children{Client: c, Events: rec}
	r.calendars = newParsedCalendars()
	r.Flow = reconciler.Flow[*schedulev2.TDSet, *scope]{
		Client:    r.client,
		Events:    r.events,
		NewObject: func() *schedulev2.TDSet { return &schedulev2.TDSet{} },
		NewScope:  func(tds *schedulev2.TDSet) *scope { return &scope{tds: tds, now: r.clock.Now()} },
		// Only a TDSet with a scale target has something to hand back.
		Finalizer:      Finalizer,
		NeedsFinalizer: needsFinalizer,
		Cleanup:        r.handBack,
		Phases: []reconciler.NamedPhase[*scope]{
			{Name: "schedule", Run: r.reconcileSchedule},
			// With a scaleTargetRef this is the last phase.
			{Name: "target", Run: r.reconcileTarget},
			{Name: "deployment", Run: r.reconcileDeployment},
			{Name: "autoscaler", Run: r.reconcileAutoscaler},
			{Name: "service", Run: r.reconcileService},
			{Name: "status", Run: r.reconcileStatus},
		},
		ObservedGeneration: func(tds *schedulev2.TDSet) *int64 { return &tds.Status.ObservedGeneration },
		Gone:               func(key types.NamespacedName) { forgetMetrics(key.Namespace, key.Name) },
	}
	return r
}

// SetupWithManager watches TDSets, the Deployments, HPAs and Services they
// own, the scale targets they name (indexed by TargetIndex), the
// calendars they reference (indexed by CalendarIndex) and every HPA of the
// watched namespaces (hpawatch.go; TDSets indexed by HPARefIndex).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &schedulev2.TDSet{}, TargetIndex, indexTarget); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &schedulev2.TDSet{}, HPARefIndex, indexHPARef); err != nil {
		return err
	}
	b := reconciler.NewControllerBuilder(mgr, Name, r, &schedulev2.TDSet{},
		[]reconciler.Reported{reconciler.ReportOf(&appsv1.Deployment{}, reportOf)}, []client.Object{&corev1.Service{}, &autoscalingv2.HorizontalPodAutoscaler{}})
	b, err := r.watchTargets(mgr, b)
	if err != nil {
		return err
	}
	if b, err = r.watchCalendars(mgr, b); err != nil {
		return err
	}
	if b, err = r.watchAutoscalers(mgr, b); err != nil {
		return err
	}
	return b.Complete(r)
}

// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets/status,verbs=patch
// +kubebuilder:rbac:groups=schedule.rs,resources=tdsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// reconcileSchedule evaluates the schedule at the reconcile's instant and
// asks for a reconcile at its next transition. A spec that cannot be
// evaluated leaves the children alone and stops here: only a spec change
// can fix it, and a spec change triggers a reconcile, so no requeue.
func (r *Reconciler) reconcileSchedule(ctx context.Context, s *scope) (reconciler.Result, error) {
	markSuspended(s.tds)
	cal, err := Calendar(s.tds)
	if err == nil {
		err = r.addCalendars(ctx, s.tds, cal, s.now)
	}
	if err != nil {
		var spec *SpecError
		if !errors.As(err, &spec) {
			return reconciler.Result{}, err
		}
		r.invalid(s.tds, spec.Reason, spec.Error())
		return reconciler.Result{Stop: true}, r.observeDeployment(ctx, s.tds)
	}
	if err := r.estimateLeadTime(ctx, s, cal); err != nil {
		return reconciler.Result{}, err
	}
	s.calendar, s.plan = cal, cal.At(s.now)
	wasRule := s.tds.Status.ActiveRule
	recordPlan(s.tds, cal, s.plan)
	recordPlanMetrics(s.tds, s.plan, wasRule)
	resync := resyncCap(s.tds)
	if len(s.tds.Spec.Calendars) > 0 && (resync == 0 || resync > CalendarRefresh) {
		resync = CalendarRefresh
	}
	return reconciler.Requeue(requeueAfter(resync, s.plan.Next, s.now)), nil
}

// recordPlan records in the status and the Scheduled condition what the
// schedule asks for now and what comes next.
func recordPlan(tds *schedulev2.TDSet, cal *schedule.Calendar, plan schedule.Result) {
	st := &tds.Status
	st.CurrentReplicas = ptr.To(plan.Replicas)
	st.ActiveRule = describe(cal, plan.Rule, plan.Early)
	st.ActiveWindow = nil
	if plan.Rule.Kind == schedule.RuleWindow && !plan.Early {
		st.ActiveWindow = ptr.To(int32(plan.Rule.Index))
	}
	st.NextTransitionTime, st.NextReplicas = nil, nil
	next := "; the schedule never changes it"
	if !plan.Next.IsZero() {
		st.NextTransitionTime = &metav1.Time{Time: plan.Next}
		st.NextReplicas = ptr.To(plan.NextReplicas)
		next = fmt.Sprintf(" until %s, then %d (%s)", plan.Next.UTC().Format(time.RFC3339), plan.NextReplicas, describe(cal, plan.NextRule, plan.NextEarly))
	}
	if tds.Spec.Suspend {
		conditions.MarkFalse(tds, schedulev2.ConditionScheduled, schedulev2.ReasonSuspended, fmt.Sprintf(
			"spec.suspend is true: the schedule's %d replicas (%s) are not applied", plan.Replicas, st.ActiveRule))
		return
	}
	conditions.MarkTrue(tds, schedulev2.ConditionScheduled, ruleReason(cal, plan), fmt.Sprintf(
		"%s sets %d replicas%s", capitalize(st.ActiveRule), plan.Replicas, next))
}

// ruleReason is the Scheduled condition's reason for what sets the count.
func ruleReason(cal *schedule.Calendar, plan schedule.Result) string {
	switch plan.Rule.Kind {
	case schedule.RuleOverride:
		return schedulev2.ReasonOverrideActive
	case schedule.RuleException:
		if i := plan.Rule.Index; i >= 0 && i < len(cal.Exceptions) && cal.Exceptions[i].Source != "" {
			return schedulev2.ReasonCalendarDateActive
		}
		return schedulev2.ReasonExceptionActive
	case schedule.RuleWindow:
		return schedulev2.ReasonWindowActive
	default:
		return schedulev2.ReasonDefaultReplicas
	}
}

// describe names a rule as the status and events show it; a rule applied
// early by spec.scaleUpLeadTime says so.
func describe(cal *schedule.Calendar, rule schedule.Rule, early bool) string {
	name := cal.Describe(rule)
	if early {
		name += " (early by scaleUpLeadTime)"
	}
	return name
}

// capitalize upper-cases the first letter of an ASCII message.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// invalid reports a spec that cannot be evaluated. The Warning event is
// emitted when the condition changes, not on every resync.
func (r *Reconciler) invalid(tds *schedulev2.TDSet, reason, message string) {
	st := &tds.Status
	st.CurrentReplicas, st.ActiveWindow, st.NextTransitionTime, st.NextReplicas = nil, nil, nil, nil
	st.ActiveRule = ""
	forgetPlanMetrics(tds)
	conditions.MarkFalse(tds, schedulev2.ConditionScheduled, reason, message)
	left := "; the Deployment is left as it is"
	if ref := tds.Spec.ScaleTargetRef; ref != nil {
		left = fmt.Sprintf("; %s %s is left as it is", ref.Kind, ref.Name)
	}
	if conditions.MarkFalse(tds, conditions.Ready, reason, message+left) {
		r.events.Warning(tds, reason, events.ActionReconcile, "%s%s", message, left)
	}
}

// markSuspended sets the Suspended condition from spec.suspend.
func markSuspended(tds *schedulev2.TDSet) {
	if tds.Spec.Suspend {
		conditions.MarkTrue(tds, schedulev2.ConditionSuspended, schedulev2.ReasonSuspended, suspendedMessage(tds))
		return
	}
	conditions.MarkFalse(tds, schedulev2.ConditionSuspended, schedulev2.ReasonNotSuspended, "The schedule is applied")
}

// suspendedMessage says what a suspended TDSet leaves its workload with:
// its own Deployment or a scale target keeps the replicas it has (and an
// HPA the TDSet created, the bounds it has); an HPA named by hpaRef gets
// the bounds it had before the TDSet back.
func suspendedMessage(tds *schedulev2.TDSet) string {
	const prefix = "spec.suspend is true: "
	ref, as := tds.Spec.ScaleTargetRef, tds.Spec.Autoscaling
	switch {
	case ref != nil && as != nil && as.HPARef != nil:
		bounds := "the bounds it had before this TDSet"
		if a := tds.Status.Target; a != nil && a.Autoscaler != nil && a.Autoscaler.OriginalMinReplicas != nil && a.Autoscaler.OriginalMaxReplicas != nil {
			bounds = fmt.Sprintf("minReplicas %d and maxReplicas %d back, the bounds it had before this TDSet", *a.Autoscaler.OriginalMinReplicas, *a.Autoscaler.OriginalMaxReplicas)
		}
		return fmt.Sprintf("%sHorizontalPodAutoscaler %s has %s, and scales %s %s by its own metrics", prefix, as.HPARef.Name, bounds, ref.Kind, ref.Name)
	case ref != nil:
		return fmt.Sprintf("%s%s %s keeps its current replica count", prefix, ref.Kind, ref.Name)
	case as != nil:
		return fmt.Sprintf("%sHorizontalPodAutoscaler %s keeps its current minReplicas, and scales Deployment %s by CPU", prefix, tds.Name, tds.Name)
	default:
		return fmt.Sprintf("%sDeployment %s keeps its current replica count", prefix, tds.Name)
	}
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
	replicas := ptr.To(plan.Replicas)
	switch {
	case tds.Spec.Autoscaling != nil && found:
		// The HPA owns the replicas; the schedule is its minReplicas. The
		// count it has is kept rather than left out: a correction of the
		// template replaces the whole spec, and a spec without replicas
		// would be defaulted to 1.
		replicas = existing.Spec.Replicas
	case tds.Spec.Suspend && found && existing.Spec.Replicas != nil:
		replicas = existing.Spec.Replicas
	}

	why := describe(s.calendar, plan.Rule, plan.Early)
	if tds.Spec.Suspend {
		why = "suspended"
	}
	dep := DesiredDeployment(tds, replicas)
	// An update is told below: as a scale, a new pod template, or both.
	applied, result, err := r.children.Apply(ctx, tds, reconciler.Child{
		Object: dep, Created: schedulev2.ReasonDeploymentCreated, CreatedNote: fmt.Sprintf(" with %d replicas (%s)", ptr.Deref(replicas, 1), why),
	})
	if result.Stop {
		countScaleError(tds)
		return result, err
	}
	if applied.Result == apply.Updated {
		change := apply.DiffDeployment(existing, dep)
		if change.Scaled() {
			r.events.Normal(tds, schedulev2.ReasonDeploymentScaled, events.ActionScale, "Scaled Deployment %s from %d to %d (%s)", dep.Name, change.FromReplicas, change.ToReplicas, why)
		}
		if change.TemplateChanged {
			r.events.Normal(tds, schedulev2.ReasonDeploymentUpdated, events.ActionUpdate, "Updated the pod template of Deployment %s to the TDSet's container; it rolls out", dep.Name)
		}
	}
	s.deployment = dep
	tds.Status.AvailableReplicas = ptr.To(reportOf(dep).available)
	recordAvailable(tds)
	return reconciler.Result{}, nil
}

// reconcileAutoscaler creates or corrects the HPA while spec.autoscaling is
// set, with the schedule's count as its minReplicas (kept while suspended),
// and deletes the HPA this TDSet controls once it is not.
func (r *Reconciler) reconcileAutoscaler(ctx context.Context, s *scope) (reconciler.Result, error) {
	tds := s.tds
	existing := &autoscalingv2.HorizontalPodAutoscaler{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tds.Namespace, Name: tds.Name}, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconciler.Result{}, err
	}
	found := err == nil && metav1.IsControlledBy(existing, tds)
	minReplicas, why := ptr.To(s.plan.Replicas), describe(s.calendar, s.plan.Rule, s.plan.Early)
	if tds.Spec.Suspend && found && existing.Spec.MinReplicas != nil {
		// Kept rather than left out: a correction of maxReplicas or the
		// target replaces the whole spec, and an HPA without minReplicas
		// is defaulted to 1.
		minReplicas, why = existing.Spec.MinReplicas, "suspended"
	}
	hpa := DesiredAutoscaler(tds, minReplicas)
	if hpa == nil {
		return reconciler.Result{}, r.deleteChild(ctx, tds, existing, found, schedulev2.ReasonAutoscalerDeleted, "spec.autoscaling is not set")
	}
	_, result, err := r.children.Apply(ctx, tds, reconciler.Child{
		Object:      hpa,
		Created:     schedulev2.ReasonAutoscalerCreated,
		CreatedNote: fmt.Sprintf(" with minReplicas %d (%s) and maxReplicas %d", ptr.Deref(minReplicas, 1), why, hpa.Spec.MaxReplicas),
		Updated:     schedulev2.ReasonAutoscalerUpdated,
		UpdatedNote: fmt.Sprintf(" to minReplicas %d (%s), maxReplicas %d", ptr.Deref(minReplicas, 1), why, hpa.Spec.MaxReplicas),
	})
	if result.Stop {
		countScaleError(tds)
	}
	return result, err
}

// reconcileService creates or corrects the Service while spec.service.port
// is set, and deletes the Service this TDSet controls once it is not.
func (r *Reconciler) reconcileService(ctx context.Context, s *scope) (reconciler.Result, error) {
	tds := s.tds
	svc := DesiredService(tds)
	if svc == nil {
		return reconciler.Result{}, r.deleteService(ctx, tds)
	}
	_, result, err := r.children.Apply(ctx, tds, reconciler.Child{
		Object:      svc,
		Created:     schedulev2.ReasonServiceCreated,
		CreatedNote: fmt.Sprintf(" on port %d", tds.Spec.Service.Port),
		Updated:     schedulev2.ReasonServiceUpdated,
		UpdatedNote: fmt.Sprintf(" to port %d", tds.Spec.Service.Port),
	})
	return result, err
}

// reconcileStatus sets Ready from the Deployment.
//
// A new TDSet's first status waits, for up to the startup grace after the
// Deployment's creation, for the Deployment to be available
// (reconciler.HoldFirstStatus): a status written before would be replaced
// a moment later. The grace is measured on the wall clock, as the
// Deployment's creation time is, not on the schedule's clock.
func (r *Reconciler) reconcileStatus(_ context.Context, s *scope) (reconciler.Result, error) {
	deployment := reportOf(s.deployment)
	if hold := reconciler.HoldFirstStatus(s.tds, time.Since(s.deployment.CreationTimestamp.Time), r.startupGrace, available(deployment)); hold.HoldStatus {
		return hold, nil
	}
	reportReady(s.tds, deployment)
	return reconciler.Result{}, nil
}

// deleteService removes the TDSet's Service.
func (r *Reconciler) deleteService(ctx context.Context, tds *schedulev2.TDSet) error {
	svc := &corev1.Service{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tds.Namespace, Name: tds.Name}, svc)
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	return r.deleteChild(ctx, tds, svc, err == nil && metav1.IsControlledBy(svc, tds), schedulev2.ReasonServiceDeleted, "spec.service.port is not set")
}

// deleteChild deletes obj, read from the cache, when found says tds
// controls it: an object of the same name that the TDSet does not control
// is someone else's and stays.
func (r *Reconciler) deleteChild(ctx context.Context, tds *schedulev2.TDSet, obj client.Object, found bool, reason, why string) error {
	if !found || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if err := apply.DeleteControlled(ctx, r.client, obj); err != nil {
		return err
	}
	r.events.Normal(tds, reason, events.ActionDelete, "Deleted %s %s: %s", apply.KindOf(r.client, obj), obj.GetName(), why)
	return nil
}

// observeDeployment records the available replicas of the TDSet's Deployment
// without changing it.
func (r *Reconciler) observeDeployment(ctx context.Context, tds *schedulev2.TDSet) error {
	tds.Status.AvailableReplicas = nil
	defer recordAvailable(tds)
	dep := &appsv1.Deployment{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tds.Namespace, Name: tds.Name}, dep)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if metav1.IsControlledBy(dep, tds) {
		tds.Status.AvailableReplicas = ptr.To(reportOf(dep).available)
	}
	return nil
}

// deploymentReport is all a TDSet's status reads of its Deployment. The
// status code takes it instead of the Deployment, so that the watch, which
// reconciles a TDSet only when its Deployment's report changed, cannot miss
// a field the status reads.
type deploymentReport struct {
	generation, observedGeneration int64
	// replicas is the count the Deployment should run.
	replicas           int32
	updated, available int32
}

// reportOf reads a Deployment's report.
func reportOf(dep *appsv1.Deployment) deploymentReport {
	return deploymentReport{
		generation:         dep.Generation,
		observedGeneration: dep.Status.ObservedGeneration,
		replicas:           ptr.Deref(dep.Spec.Replicas, 1),
		updated:            dep.Status.UpdatedReplicas,
		available:          dep.Status.AvailableReplicas,
	}
}

// reportReady sets Ready from the Deployment: True once the Deployment has
// seen its spec and has as many updated and available replicas as it should
// run.
func reportReady(tds *schedulev2.TDSet, dep deploymentReport) {
	want := dep.replicas
	msg := fmt.Sprintf("%d/%d replicas available", dep.available, want)
	if tds.Spec.Suspend {
		msg += " (the count kept while suspended)"
	}
	if available(dep) {
		conditions.MarkTrue(tds, conditions.Ready, schedulev2.ReasonAvailable, msg)
		return
	}
	conditions.MarkFalse(tds, conditions.Ready, schedulev2.ReasonProgressing, msg)
}

// available reports whether the Deployment has seen its spec and has as
// many updated and available replicas as it should run.
func available(dep deploymentReport) bool {
	return dep.observedGeneration >= dep.generation && dep.updated >= dep.replicas && dep.available >= dep.replicas
}

// requeueAfter is the time until the next transition (never: no requeue),
// capped by spec.resyncInterval.
func requeueAfter(resync time.Duration, next, now time.Time) time.Duration {
	d := time.Duration(0)
	if !next.IsZero() {
		d = max(next.Sub(now), time.Nanosecond)
	}
	if resync > 0 && (d == 0 || resync < d) {
		d = resync
	}
	return d
}
