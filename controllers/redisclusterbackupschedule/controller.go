// Package redisclusterbackupschedule is the RedisClusterBackupSchedule
// controller: at each tick of a cron schedule it creates a
// RedisClusterBackup, which the redisclusterbackup controller takes, one
// at a time, and it deletes the backups its retention no longer keeps. The
// rules (when a tick is due, which backups go) are pkg/backupschedule's.
package redisclusterbackupschedule

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupschedule"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Name is the controller's name in --controllers.
const Name = "redisclusterbackupschedule"

// Descriptor registers the controller with the manager.
//
// It manages RedisClusterBackups, which are another controller's custom
// resources: the manager caches custom resources unfiltered (a label
// filter here would hide the backups users create from that controller),
// so the schedule selects its own by cachev1.LabelBackupSchedule in its
// watch and its lists instead, and Managed stays empty.
func Descriptor() reconciler.Descriptor {
	return reconciler.Descriptor{
		Name:        Name,
		Description: "RedisClusterBackupSchedule (cache.example.com/v1): a RedisClusterBackup at every tick of a cron schedule, one at a time, with retention",
		AddToScheme: cachev1.AddToScheme,
		For:         &cachev1.RedisClusterBackupSchedule{},
		Setup:       reconciler.SetupWith(NewReconciler),
	}
}

// Reconciler reconciles RedisClusterBackupSchedules.
type Reconciler struct {
	reconciler.Flow[*cachev1.RedisClusterBackupSchedule, *scope]
	client client.Client
	events events.Recorder
	clock  clock.PassiveClock
}

// scope is what the phases share.
type scope struct {
	s        *cachev1.RedisClusterBackupSchedule
	now      time.Time
	schedule backupschedule.Schedule
	backups  []cachev1.RedisClusterBackup
	// next is the first tick after now.
	next time.Time
}

// NewReconciler returns a Reconciler. It fails when the API server does
// not serve RedisClusterBackups, whose CRD the redisclusterbackup
// component installs: the schedule has nothing to create without it.
func NewReconciler(mgr ctrl.Manager, opts reconciler.Options) (*Reconciler, error) {
	served, err := manager.Serves(mgr, &cachev1.RedisClusterBackup{})
	if err != nil {
		return nil, fmt.Errorf("asking whether the API server serves RedisClusterBackups: %w", err)
	}
	if !served {
		return nil, fmt.Errorf("CRD redisclusterbackups.cache.example.com is not installed: the %s controller creates RedisClusterBackups (install the redisclusterbackup component too)", Name)
	}
	return newReconciler(mgr.GetClient(), reconciler.EventRecorder(mgr, Name), opts), nil
}

// newReconciler is NewReconciler on any client, which lets a test drive
// Reconcile itself through an uncached client and a fake clock.
func newReconciler(c client.Client, rec events.Recorder, opts reconciler.Options) *Reconciler {
	r := &Reconciler{client: c, events: rec, clock: opts.ClockOrReal()}
	r.Flow = reconciler.Flow[*cachev1.RedisClusterBackupSchedule, *scope]{
		Client:    c,
		Events:    rec,
		NewObject: func() *cachev1.RedisClusterBackupSchedule { return &cachev1.RedisClusterBackupSchedule{} },
		NewScope: func(s *cachev1.RedisClusterBackupSchedule) *scope {
			return &scope{s: s, now: r.clock.Now()}
		},
		Phases: []reconciler.NamedPhase[*scope]{
			{Name: "fetch", Run: r.fetch},
			{Name: "backup", Run: r.reconcileBackup},
			{Name: "retention", Run: r.reconcileRetention},
			{Name: "status", Run: r.reconcileStatus},
		},
		ObservedGeneration: func(s *cachev1.RedisClusterBackupSchedule) *int64 { return &s.Status.ObservedGeneration },
		Gone:               forget,
	}
	return r
}

// SetupWithManager watches schedules and the backups labelled with one.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return reconciler.NewControllerBuilder(mgr, Name, r, &cachev1.RedisClusterBackupSchedule{}, nil, nil).
		Watches(&cachev1.RedisClusterBackup{}, handler.EnqueueRequestsFromMapFunc(scheduleOf),
			builder.WithPredicates(labelled, backupChanged)).
		Complete(r)
}

// scheduleOf maps a backup to the schedule its label names.
func scheduleOf(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[cachev1.LabelBackupSchedule]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// labelled lets through only the backups of a schedule.
var labelled = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	return obj.GetLabels()[cachev1.LabelBackupSchedule] != ""
})

// backupChanged lets through what the schedule acts on: a backup that
// finished (its phase), was relabelled or is deleted. Its create is the
// schedule's own doing, or, after a start, comes with the schedule's own
// first reconcile.
var backupChanged = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldB, okOld := e.ObjectOld.(*cachev1.RedisClusterBackup)
		newB, okNew := e.ObjectNew.(*cachev1.RedisClusterBackup)
		if !okOld || !okNew {
			return true
		}
		return oldB.Status.Phase != newB.Status.Phase ||
			oldB.Labels[cachev1.LabelBackupSchedule] != newB.Labels[cachev1.LabelBackupSchedule] ||
			!oldB.DeletionTimestamp.Equal(newB.DeletionTimestamp)
	},
}

// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusterbackupschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusterbackupschedules/status,verbs=patch
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusterbackups,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// fetch reads the schedule's spec and lists its backups. A schedule that
// cannot be read is reported and waits for a new spec.
func (r *Reconciler) fetch(ctx context.Context, sc *scope) (reconciler.Result, error) {
	s := sc.s
	parsed, err := backupschedule.Parse(s.Spec.Schedule, s.Spec.TimeZone)
	if err != nil {
		s.Status.NextScheduleTime = nil
		if conditions.MarkFalse(s, conditions.Ready, cachev1.ReasonInvalidSchedule, err.Error()) {
			r.events.Warning(s, cachev1.ReasonInvalidSchedule, events.ActionReconcile, "%s; no backup is created until spec.schedule and spec.timeZone are fixed", err)
		}
		observe(s, 0)
		return reconciler.Result{Stop: true}, nil
	}
	sc.schedule = parsed
	list := &cachev1.RedisClusterBackupList{}
	if err := r.client.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingLabels{cachev1.LabelBackupSchedule: s.Name}); err != nil {
		return reconciler.Result{}, fmt.Errorf("listing the schedule's backups: %w", err)
	}
	sc.backups = list.Items
	return reconciler.Result{}, nil
}

// reconcileBackup creates the backup of the due tick, or skips the tick.
func (r *Reconciler) reconcileBackup(ctx context.Context, sc *scope) (reconciler.Result, error) {
	s := sc.s
	due, next := sc.schedule.Due(LastHandled(&s.Status, sc.backups, sc.now), s.CreationTimestamp.Time, sc.now)
	sc.next = next
	stuck := Stuck(sc.backups, due)
	action := Decide(&s.Spec, due, sc.now, unfinished(sc.backups), len(stuck))
	if action == Supersede {
		superseded, err := r.supersede(ctx, sc, due, stuck)
		if err != nil {
			return reconciler.Result{}, err
		}
		if !superseded {
			// A stuck backup changed since it was read (its Job is being
			// made, most likely): the tick is decided again on what the
			// cache holds then, not recorded as skipped now.
			return reconciler.StopAndRequeue(supersedeRetry), nil
		}
		action = Create
	}
	switch action {
	case Create:
		b := DesiredBackup(s, due)
		err := r.client.Create(ctx, b)
		switch {
		case apierrors.IsAlreadyExists(err):
			// Created before a crash that lost the status write: this tick
			// is served, and the backup is in sc.backups once the cache has
			// it. Unless a backup of that name is someone else's.
			if other := r.nameTaken(ctx, b); other != "" {
				r.events.Warning(s, cachev1.ReasonBackupNameTaken, events.ActionCreate, "Skipped the tick of %s: RedisClusterBackup %s exists and %s",
					due.UTC().Format(time.RFC3339), b.Name, other)
			}
		case err != nil:
			r.events.Warning(s, cachev1.ReasonBackupCreated, events.ActionCreate, "creating RedisClusterBackup %s for the tick of %s: %v", b.Name, due.UTC().Format(time.RFC3339), err)
			return reconciler.Result{}, fmt.Errorf("creating RedisClusterBackup %s: %w", b.Name, err)
		default:
			r.events.NormalRelated(s, b, cachev1.ReasonBackupCreated, events.ActionCreate, "Created RedisClusterBackup %s for the tick of %s", b.Name, due.UTC().Format(time.RFC3339))
			sc.backups = append(sc.backups, *b)
		}
		s.Status.LastScheduleTime = &metav1.Time{Time: due}
	case SkipActive:
		r.events.Normal(s, cachev1.ReasonBackupSkipped, events.ActionReconcile, "Skipped the tick of %s: RedisClusterBackup %s has not finished",
			due.UTC().Format(time.RFC3339), Active(sc.backups)[0])
		s.Status.LastScheduleTime = &metav1.Time{Time: due}
	case SkipMissed:
		r.events.Warning(s, cachev1.ReasonBackupMissed, events.ActionReconcile, "Skipped the tick of %s: more than startingDeadlineSeconds (%ds) late",
			due.UTC().Format(time.RFC3339), *s.Spec.StartingDeadlineSeconds)
		s.Status.LastScheduleTime = &metav1.Time{Time: due}
	case Wait, Suspended, Supersede:
	}
	return reconciler.Result{}, nil
}

// unfinished counts the backups that are neither finished nor being
// deleted: Active, unbounded.
func unfinished(backups []cachev1.RedisClusterBackup) int {
	n := 0
	for i := range backups {
		if !finished(&backups[i]) && backups[i].DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

// supersedeRetry is how soon a tick whose superseding met a changed
// backup is decided again.
const supersedeRetry = time.Second

// supersede deletes the Stuck backups so that the tick due goes ahead,
// each with a Warning event, and reports whether it did. Each is deleted
// only as this reconcile read it (its UID and resourceVersion): one whose
// controller has marked it since, to create its Job
// (cachev1.AnnotationBackupJobCreated), fails the precondition and is left
// to run; the tick is then decided again, and skipped as for any running
// backup. A deleted backup that never started goes at once: it stored
// nothing.
func (r *Reconciler) supersede(ctx context.Context, sc *scope, due time.Time, stuck []*cachev1.RedisClusterBackup) (bool, error) {
	s := sc.s
	for _, b := range stuck {
		err := r.client.Delete(ctx, b, client.Preconditions{UID: &b.UID, ResourceVersion: &b.ResourceVersion})
		if apierrors.IsConflict(err) {
			// Those deleted before it stay deleted, and their Warning
			// events say so.
			return false, nil
		}
		if client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("deleting RedisClusterBackup %s, which had not started: %w", b.Name, err)
		}
		if err == nil {
			why := ""
			if ready := conditions.Get(b, conditions.Ready); ready != nil {
				why = fmt.Sprintf(" (%s: %s)", ready.Reason, events.Truncate(ready.Message, 256))
			}
			r.events.Warning(s, cachev1.ReasonBackupSuperseded, events.ActionDelete,
				"Deleted RedisClusterBackup %s, made for the tick of %s, which had not started by the tick of %s%s; a backup of this tick replaces it",
				b.Name, scheduledTime(b).UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339), why)
			s.Status.LastSupersededTime = &metav1.Time{Time: sc.now}
		}
		b.DeletionTimestamp = &metav1.Time{Time: sc.now}
	}
	return true, nil
}

// nameTaken says how the existing backup of want's name is not the
// schedule's, or "" when it is (or the cache does not have it yet: the
// schedule created it before a crash).
func (r *Reconciler) nameTaken(ctx context.Context, want *cachev1.RedisClusterBackup) string {
	existing := &cachev1.RedisClusterBackup{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(want), existing); err != nil {
		return ""
	}
	switch owner := existing.Labels[cachev1.LabelBackupSchedule]; owner {
	case want.Labels[cachev1.LabelBackupSchedule]:
		return ""
	case "":
		return "is not labelled with a schedule"
	default:
		return "belongs to schedule " + owner
	}
}

// reconcileRetention deletes the finished backups retention no longer
// keeps, suspended or not. The backup's own controller removes its files
// before the object goes.
func (r *Reconciler) reconcileRetention(ctx context.Context, sc *scope) (reconciler.Result, error) {
	s := sc.s
	retention := RetentionOf(&s.Spec)
	history := History(sc.backups)
	expired := retention.Expired(history, sc.now)
	byName := map[string]*cachev1.RedisClusterBackup{}
	for i := range sc.backups {
		byName[sc.backups[i].Name] = &sc.backups[i]
	}
	for _, name := range expired {
		b := byName[name]
		// The UID precondition deletes the backup retention judged, not
		// one created since under the same name.
		err := r.client.Delete(ctx, b, client.Preconditions{UID: &b.UID})
		if client.IgnoreNotFound(err) != nil {
			r.events.Warning(s, cachev1.ReasonBackupDeleted, events.ActionDelete, "deleting RedisClusterBackup %s, which retention no longer keeps: %v", name, err)
			return reconciler.Result{}, fmt.Errorf("deleting RedisClusterBackup %s: %w", name, err)
		}
		if err == nil {
			r.events.NormalRelated(s, b, cachev1.ReasonBackupDeleted, events.ActionDelete, "Deleted RedisClusterBackup %s (%s), which retention no longer keeps", name, b.Status.Phase)
		}
		b.DeletionTimestamp = &metav1.Time{Time: sc.now}
	}
	return reconciler.Requeue(RequeueAfter(s.Spec.Suspend, sc.next, retention.NextExpiry(history, sc.now), sc.now)), nil
}

// reconcileStatus sets the status and the metrics.
func (r *Reconciler) reconcileStatus(_ context.Context, sc *scope) (reconciler.Result, error) {
	s := sc.s
	st := &s.Status
	st.Active = Active(sc.backups)
	st.LastSuccessfulTime = LastSuccess(st.LastSuccessfulTime, sc.backups)
	if s.Spec.Suspend || sc.next.IsZero() {
		st.NextScheduleTime = nil
	} else {
		st.NextScheduleTime = &metav1.Time{Time: sc.next}
	}
	var p time.Duration
	reason, message := cachev1.ReasonScheduled, "the schedule fires no more"
	switch {
	case s.Spec.Suspend:
		reason, message = cachev1.ReasonScheduleSuspended, "suspended: no backup is created; retention still applies"
	case !sc.next.IsZero():
		p = sc.schedule.Period(sc.now)
		message = "next backup at " + sc.next.UTC().Format(time.RFC3339)
	}
	// One event when the schedule starts, resumes or is suspended, not one
	// per tick (the message names the next tick).
	if prev := conditions.Get(s, conditions.Ready); prev == nil || prev.Status != metav1.ConditionTrue || prev.Reason != reason {
		r.events.Normal(s, reason, events.ActionReconcile, "%s", message)
	}
	conditions.MarkTrue(s, conditions.Ready, reason, message)
	observe(s, p)
	return reconciler.Result{}, nil
}
