package tdset

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// CalendarIndex is the field index of TDSets by the calendars they
// reference (calendarKey), so that a change to a Calendar or
// ClusterCalendar reconciles exactly the TDSets that use it.
const CalendarIndex = "spec.calendars"

// The span of local dates a reconcile expands the calendars' entries
// into: from the day before today (a zone's day may still run in UTC) to
// CalendarHorizonDays ahead. Yearly entries have no end, so the expansion
// needs one; with it, what the schedule sees is bounded by the horizon and
// not by how many entries the calendars hold. A TDSet with calendars is
// reconciled at least every CalendarRefresh, well inside the horizon, so
// a date never comes into reach unexpanded.
const (
	// CalendarHorizonDays is how many days ahead calendar dates are seen.
	CalendarHorizonDays = 35
	// CalendarRefresh caps the requeue of a TDSet that references calendars.
	CalendarRefresh = 7 * 24 * time.Hour
)

// calendarKey is the index value of a reference: kind, the namespace for a
// Calendar, and name.
func calendarKey(kind schedulev2.CalendarKind, namespace, name string) string {
	if kind == schedulev2.CalendarKindCluster {
		return string(kind) + "/" + name
	}
	return string(schedulev2.CalendarKindNamespaced) + "/" + namespace + "/" + name
}

// indexCalendars is CalendarIndex's function.
func indexCalendars(obj client.Object) []string {
	tds, ok := obj.(*schedulev2.TDSet)
	if !ok || len(tds.Spec.Calendars) == 0 {
		return nil
	}
	refs := tds.Spec.Calendars[:min(len(tds.Spec.Calendars), schedulev2.MaxCalendarRefs)]
	keys := make([]string, 0, len(refs))
	for _, ref := range refs {
		keys = append(keys, calendarKey(ref.Kind, tds.Namespace, ref.Name))
	}
	return keys
}

// watchCalendars indexes TDSets by calendar and reconciles the TDSets of a
// Calendar or ClusterCalendar that is created, changed or deleted. Only
// spec changes (and deletions) matter: a label change reconciles nothing.
// In the namespace-scoped mode ClusterCalendars are not watched: its Roles
// grant nothing on cluster-scoped kinds. A kind whose CRD is not installed
// is not watched either (a watch of it would stop the manager), and the
// cache then holds none of it.
func (r *Reconciler) watchCalendars(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &schedulev2.TDSet{}, CalendarIndex, indexCalendars); err != nil {
		return nil, err
	}
	specOnly := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	var served []schedulev2.CalendarKind
	if r.calendarCRDs[schedulev2.CalendarKindNamespaced] {
		b = b.Watches(&schedulev2.Calendar{}, handler.EnqueueRequestsFromMapFunc(r.usersOf(schedulev2.CalendarKindNamespaced)), specOnly)
		served = append(served, schedulev2.CalendarKindNamespaced)
	}
	if r.clusterCalendars && r.calendarCRDs[schedulev2.CalendarKindCluster] {
		b = b.Watches(&schedulev2.ClusterCalendar{}, handler.EnqueueRequestsFromMapFunc(r.usersOf(schedulev2.CalendarKindCluster)), specOnly)
		served = append(served, schedulev2.CalendarKindCluster)
	}
	if len(served) == 0 {
		return b, nil
	}
	// The ConfigMaps calendars import from: the cache holds only those
	// labelled multi-operator.dev/watch=true (Descriptor.Referenced).
	sources, err := r.watchSources(mgr, served)
	if err != nil {
		return nil, err
	}
	return b.Watches(&corev1.ConfigMap{}, sources), nil
}

// usersOf maps a calendar of kind to the TDSets that reference it: those
// of its namespace for a Calendar, those of every namespace for a
// ClusterCalendar.
func (r *Reconciler) usersOf(kind schedulev2.CalendarKind) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		opts := []client.ListOption{client.MatchingFields{CalendarIndex: calendarKey(kind, obj.GetNamespace(), obj.GetName())}}
		if kind == schedulev2.CalendarKindNamespaced {
			opts = append(opts, client.InNamespace(obj.GetNamespace()))
		}
		list := &schedulev2.TDSetList{}
		if err := r.client.List(ctx, list, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the TDSets of a calendar", "kind", kind, "calendar", obj.GetName())
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}

// +kubebuilder:rbac:groups=schedule.rs,resources=calendars;clustercalendars,verbs=get;list;watch

// addCalendars reads tds's calendars from the cache and adds their dates
// from the day before now's local date to CalendarHorizonDays after it to
// cal's exceptions, after the TDSet's own. A Calendar is read in the
// TDSet's namespace only. A calendar that is missing or invalid is a
// SpecError, and nothing of any calendar is added.
func (r *Reconciler) addCalendars(ctx context.Context, tds *schedulev2.TDSet, cal *schedule.Calendar, now time.Time) error {
	refs := tds.Spec.Calendars
	if len(refs) == 0 {
		return nil
	}
	if len(refs) > schedulev2.MaxCalendarRefs {
		return &SpecError{Reason: schedulev2.ReasonInvalidCalendar, Err: fmt.Errorf("spec.calendars: %d calendars, at most %d", len(refs), schedulev2.MaxCalendarRefs)}
	}
	y, m, d := now.In(cal.Location).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	span := DateSpan{From: today.AddDate(0, 0, -1), To: today.AddDate(0, 0, CalendarHorizonDays)}
	sets := make([][]schedule.Exception, 0, len(refs))
	for i, ref := range refs {
		dates, imported, err := r.calendarDates(ctx, tds.Namespace, ref)
		if err != nil {
			return err
		}
		def := tds.Spec.DefaultReplicas
		if ref.Replicas != nil {
			def = *ref.Replicas
		}
		kind := kindOrDefault(ref.Kind)
		source := fmt.Sprintf("calendar %s/%s", kind, ref.Name)
		xs, err := ExpandCalendar(dates, source, def, span)
		if err != nil {
			return &SpecError{Reason: schedulev2.ReasonInvalidCalendar, Err: fmt.Errorf("spec.calendars[%d] (%s %s): %w", i, kind, ref.Name, err)}
		}
		// The imported dates come after the calendar's own, so that an
		// entry of spec.dates wins on a day both hold.
		more, err := ExpandCalendar(imported, source, def, span)
		if err != nil {
			return &SpecError{Reason: schedulev2.ReasonInvalidCalendar, Err: fmt.Errorf("spec.calendars[%d] (%s %s): spec.source: %w", i, kind, ref.Name, err)}
		}
		xs = append(xs, more...)
		if a := tds.Spec.Autoscaling; a != nil {
			// Every count becomes an HPA's minReplicas: at least 1, and at
			// most spec.autoscaling.maxReplicas when it is set (with
			// hpaRef it may not be, and the HPA's own maximum caps the
			// count instead, see reconcileHPA).
			bound := "at least 1 (it becomes the HPA's minReplicas)"
			if a.MaxReplicas != 0 {
				bound = fmt.Sprintf("1 to maxReplicas (%d)", a.MaxReplicas)
			}
			for _, x := range xs {
				if x.Replicas < 1 || (a.MaxReplicas != 0 && x.Replicas > a.MaxReplicas) {
					return &SpecError{Reason: schedulev2.ReasonInvalidCalendar, Err: fmt.Errorf(
						"spec.calendars[%d] (%s %s): %s sets %d replicas; with spec.autoscaling every count must be %s", i, kind, ref.Name, x.Date, x.Replicas, bound)}
				}
			}
		}
		sets = append(sets, xs)
	}
	cal.Exceptions = MergeExceptions(cal.Exceptions, sets...)
	return nil
}

// calendarDates reads the dates of the calendar ref names, a Calendar in
// namespace or a ClusterCalendar: its own, and those imported from its
// spec.source.
func (r *Reconciler) calendarDates(ctx context.Context, namespace string, ref schedulev2.CalendarRef) (own, imported []schedulev2.CalendarDate, err error) {
	kind := kindOrDefault(ref.Kind)
	if !r.calendarCRDs[kind] {
		return nil, nil, &SpecError{Reason: schedulev2.ReasonCalendarsNotInstalled, Err: fmt.Errorf(
			"%s %s cannot be read: the API server did not serve the %s kind when the manager started; install the CRDs of the TDSet component (calendars.schedule.rs and clustercalendars.schedule.rs), then restart the manager", kind, ref.Name, kind)}
	}
	if kind == schedulev2.CalendarKindCluster && !r.clusterCalendars {
		return nil, nil, &SpecError{Reason: schedulev2.ReasonCalendarNotFound, Err: fmt.Errorf(
			"ClusterCalendar %s cannot be read: the manager watches only some namespaces (--watch-namespaces) and reads no cluster-scoped calendar; use a Calendar", ref.Name)}
	}
	obj := calendarObject(kind)
	key := client.ObjectKey{Name: ref.Name}
	if kind == schedulev2.CalendarKindNamespaced {
		key.Namespace = namespace
	}
	if err := r.client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			where := ""
			if key.Namespace != "" {
				where = " in namespace " + key.Namespace
			}
			return nil, nil, &SpecError{Reason: schedulev2.ReasonCalendarNotFound, Err: fmt.Errorf("%s %s not found%s", kind, ref.Name, where)}
		}
		return nil, nil, err
	}
	switch c := obj.(type) {
	case *schedulev2.Calendar:
		own = c.Spec.Dates
	case *schedulev2.ClusterCalendar:
		own = c.Spec.Dates
	}
	if src := calendarSource(obj); src != nil {
		imported, err = r.importedDates(ctx, sourceNamespace(obj, src), src)
		if err != nil {
			var spec *SpecError
			if errors.As(err, &spec) {
				spec.Err = fmt.Errorf("%s %s: spec.source: %w", kind, ref.Name, spec.Err)
			}
			return nil, nil, err
		}
	}
	return own, imported, nil
}

// kindOrDefault is a reference's kind with the schema's default applied.
func kindOrDefault(k schedulev2.CalendarKind) schedulev2.CalendarKind {
	if k == "" {
		return schedulev2.CalendarKindNamespaced
	}
	return k
}

// DateSpan is a span of local dates, both ends included, each at midnight
// UTC so that adding a day is AddDate(0, 0, 1) whatever the zone.
type DateSpan struct {
	From, To time.Time
}

// holds reports whether the span holds day (midnight UTC).
func (s DateSpan) holds(day time.Time) bool { return !day.Before(s.From) && !day.After(s.To) }

// ExpandCalendar turns a calendar's entries into the exceptions they make
// within span, in the order of the entries (so that the first entry on a
// day wins), each named source and its entry. An entry without replicas
// gets def. A date that does not exist, a range that is reversed or longer
// than MaxCalendarRangeDays, or more than MaxCalendarDates entries is an
// error: the API server's schema rejects them, so they come only from
// objects stored without it. A yearly 02-29 makes a date in leap years
// only, as a TDSet exception can name 29 February of a leap year only.
func ExpandCalendar(entries []schedulev2.CalendarDate, source string, def int32, span DateSpan) ([]schedule.Exception, error) {
	if n := len(entries); n > schedulev2.MaxCalendarDates {
		return nil, fmt.Errorf("%d dates, at most %d", n, schedulev2.MaxCalendarDates)
	}
	var out []schedule.Exception
	add := func(e schedulev2.CalendarDate, day time.Time) {
		if !span.holds(day) {
			return
		}
		n := def
		if e.Replicas != nil {
			n = *e.Replicas
		}
		y, m, d := day.Date()
		out = append(out, schedule.Exception{Date: schedule.Date{Year: y, Month: m, Day: d}, Replicas: n, Source: source + " " + e.Name})
	}
	for i, e := range entries {
		if e.Replicas != nil && (*e.Replicas < 0 || *e.Replicas > schedulev2.MaxReplicas) {
			return nil, fmt.Errorf("dates[%d] (%s): replicas must be 0 to %d", i, e.Name, schedulev2.MaxReplicas)
		}
		switch {
		case e.Date != "" && e.Yearly == "" && e.From == "" && e.To == "":
			day, err := midnight(e.Date)
			if err != nil {
				return nil, fmt.Errorf("dates[%d] (%s): %w", i, e.Name, err)
			}
			add(e, day)
		case e.Yearly != "" && e.Date == "" && e.From == "" && e.To == "":
			// Checked against a leap year, so that 02-29 is a day.
			if _, err := schedule.ParseDate("2000-" + e.Yearly); err != nil || len(e.Yearly) != 5 {
				return nil, fmt.Errorf("dates[%d] (%s): yearly %q is no day of the year (want MM-DD)", i, e.Name, e.Yearly)
			}
			for y := span.From.Year(); y <= span.To.Year(); y++ {
				if day, err := midnight(fmt.Sprintf("%04d-%s", y, e.Yearly)); err == nil {
					add(e, day)
				}
			}
		case e.From != "" && e.To != "" && e.Date == "" && e.Yearly == "":
			from, err := midnight(e.From)
			if err != nil {
				return nil, fmt.Errorf("dates[%d] (%s): from: %w", i, e.Name, err)
			}
			to, err := midnight(e.To)
			if err != nil {
				return nil, fmt.Errorf("dates[%d] (%s): to: %w", i, e.Name, err)
			}
			if to.Before(from) || to.After(from.AddDate(0, 0, schedulev2.MaxCalendarRangeDays-1)) {
				return nil, fmt.Errorf("dates[%d] (%s): a range runs forward over at most %d days", i, e.Name, schedulev2.MaxCalendarRangeDays)
			}
			for day := from; !day.After(to); day = day.AddDate(0, 0, 1) {
				add(e, day)
			}
		default:
			return nil, fmt.Errorf("dates[%d] (%s): set exactly one of date, yearly, or from and to", i, e.Name)
		}
	}
	return out, nil
}

// midnight parses a "YYYY-MM-DD" date, as schedule.ParseDate does, to its
// midnight in UTC.
func midnight(s string) (time.Time, error) {
	d, err := schedule.ParseDate(s)
	if err != nil {
		return time.Time{}, err
	}
	return d.UTCMidnight(), nil
}

// MergeExceptions is own followed by the exceptions of the calendars, in
// order, that fall on a date none before has: the TDSet's own exceptions
// win over calendar dates, an earlier calendar over a later one, and an
// earlier entry of a calendar over a later one.
func MergeExceptions(own []schedule.Exception, calendars ...[]schedule.Exception) []schedule.Exception {
	seen := make(map[schedule.Date]bool, len(own))
	for _, x := range own {
		seen[x.Date] = true
	}
	out := own
	for _, xs := range calendars {
		for _, x := range xs {
			if !seen[x.Date] {
				seen[x.Date] = true
				out = append(out, x)
			}
		}
	}
	return out
}
