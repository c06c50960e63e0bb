package tdset

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/icalendar"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// SourceIndex is the field index of Calendars and ClusterCalendars by the
// ConfigMap their spec.source names ("namespace/name"), so that a change
// to the ConfigMap reaches the TDSets that use them at once.
const SourceIndex = "spec.source.configMapRef"

// sourceNamespace is the namespace a calendar's source is read in: a
// Calendar's own, whatever its spec says (the schema refuses another, and
// an object stored without that check must not read another tenant's
// ConfigMap), a ClusterCalendar's configMapRef.namespace.
func sourceNamespace(obj client.Object, src *schedulev2.CalendarSource) string {
	if obj.GetNamespace() != "" {
		return obj.GetNamespace()
	}
	return src.ConfigMapRef.Namespace
}

// calendarSource is the spec.source of a Calendar or ClusterCalendar, nil
// for none or another kind.
func calendarSource(obj client.Object) *schedulev2.CalendarSource {
	switch c := obj.(type) {
	case *schedulev2.Calendar:
		return c.Spec.Source
	case *schedulev2.ClusterCalendar:
		return c.Spec.Source
	}
	return nil
}

// indexSource is SourceIndex's function.
func indexSource(obj client.Object) []string {
	src := calendarSource(obj)
	if src == nil {
		return nil
	}
	return []string{sourceNamespace(obj, src) + "/" + src.ConfigMapRef.Name}
}

// watchSources indexes the served calendar kinds by their source and
// reconciles, when a watched ConfigMap changes, the TDSets of the
// calendars that import from it.
func (r *Reconciler) watchSources(mgr ctrl.Manager, kinds []schedulev2.CalendarKind) (handler.EventHandler, error) {
	for _, kind := range kinds {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), calendarObject(kind), SourceIndex, indexSource); err != nil {
			return nil, err
		}
	}
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, cm client.Object) []reconcile.Request {
		var out []reconcile.Request
		key := cm.GetNamespace() + "/" + cm.GetName()
		for _, kind := range kinds {
			list := calendarList(kind)
			opts := []client.ListOption{client.MatchingFields{SourceIndex: key}}
			if kind == schedulev2.CalendarKindNamespaced {
				opts = append(opts, client.InNamespace(cm.GetNamespace()))
			}
			if err := r.client.List(ctx, list, opts...); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing the calendars of a ConfigMap", "kind", kind, "configMap", key)
				continue
			}
			_ = apimeta.EachListItem(list, func(obj runtime.Object) error {
				out = append(out, r.usersOf(kind)(ctx, obj.(client.Object))...)
				return nil
			})
		}
		return out
	}), nil
}

// calendarList is an empty list of a calendar kind.
func calendarList(kind schedulev2.CalendarKind) client.ObjectList {
	if kind == schedulev2.CalendarKindCluster {
		return &schedulev2.ClusterCalendarList{}
	}
	return &schedulev2.CalendarList{}
}

// calendarObject is an empty object of a calendar kind.
func calendarObject(kind schedulev2.CalendarKind) client.Object {
	if kind == schedulev2.CalendarKindCluster {
		return &schedulev2.ClusterCalendar{}
	}
	return &schedulev2.Calendar{}
}

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch

// importedDates reads the iCalendar data src names, in namespace, from
// the cache (which holds only ConfigMaps labelled
// multi-operator.dev/watch=true), and converts its events. A ConfigMap
// that is missing or not labelled is a CalendarNotFound SpecError; a key
// that is missing, data over icalendar.DefaultLimits or an event that
// cannot be imported is an InvalidCalendar one: importing part of a file
// would scale on some of its days and silently not on others.
func (r *Reconciler) importedDates(ctx context.Context, namespace string, src *schedulev2.CalendarSource) ([]schedulev2.CalendarDate, error) {
	key := client.ObjectKey{Namespace: namespace, Name: src.ConfigMapRef.Name}
	cm := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, key, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		r.calendars.forget(key)
		return nil, r.sourceNotFound(ctx, key)
	}
	data, ok := cm.Data[src.ConfigMapRef.Key]
	if !ok {
		return nil, &SpecError{Reason: schedulev2.ReasonInvalidCalendar, Err: fmt.Errorf("ConfigMap %s has no key %q in its data (binaryData is not read: an iCalendar file is text)", key, src.ConfigMapRef.Key)}
	}
	res, err := r.calendars.get(key, cm.UID, cm.ResourceVersion, src.ConfigMapRef.Key, data)
	if err != nil {
		return nil, &SpecError{Reason: schedulev2.ReasonInvalidCalendar, Err: fmt.Errorf("ConfigMap %s key %s: %w", key, src.ConfigMapRef.Key, err)}
	}
	if res.Skipped > 0 {
		return nil, &SpecError{Reason: schedulev2.ReasonInvalidCalendar, Err: fmt.Errorf(
			"ConfigMap %s key %s: %d events cannot be imported (only whole-day events, once or FREQ=YEARLY): %s",
			key, src.ConfigMapRef.Key, res.Skipped, strings.Join(res.Errors, "; "))}
	}
	return ImportedDates(res.Events, src.Replicas), nil
}

// sourceNotFound tells a ConfigMap that does not exist from one the cache
// does not hold for lack of the watch label, by reading its metadata from
// the API server.
func (r *Reconciler) sourceNotFound(ctx context.Context, key client.ObjectKey) error {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	switch err := r.reader.Get(ctx, key, meta); {
	case err == nil:
		return &SpecError{Reason: schedulev2.ReasonCalendarNotFound, Err: fmt.Errorf(
			"ConfigMap %s lacks the label %s=%s, without which the manager sees neither it nor its changes: kubectl -n %s label configmap %s %s=%s",
			key, ownership.LabelWatch, ownership.WatchValue, key.Namespace, key.Name, ownership.LabelWatch, ownership.WatchValue)}
	case apierrors.IsNotFound(err):
		return &SpecError{Reason: schedulev2.ReasonCalendarNotFound, Err: fmt.Errorf("ConfigMap %s not found", key)}
	default:
		return err
	}
}

// ImportedDates converts the events of an iCalendar file into calendar
// entries, in the file's order: a yearly event into yearly, an event of
// one day into date, a longer one into from and to. Each entry has
// replicas (nil: the reference's count applies) and the event's summary
// as its name, made fit for a status (EntryName).
func ImportedDates(events []icalendar.Event, replicas *int32) []schedulev2.CalendarDate {
	out := make([]schedulev2.CalendarDate, 0, len(events))
	for _, ev := range events {
		d := schedulev2.CalendarDate{Name: EntryName(ev.Summary)}
		if replicas != nil {
			d.Replicas = ptr.To(*replicas)
		}
		start := ev.Start.UTCMidnight()
		switch {
		case ev.Yearly:
			d.Yearly = start.Format("01-02")
		case ev.Days <= 1:
			d.Date = ev.Start.String()
		default:
			d.From, d.To = ev.Start.String(), start.AddDate(0, 0, ev.Days-1).Format("2006-01-02")
		}
		out = append(out, d)
	}
	return out
}

// EntryName is an imported event's summary as an entry's name: letters,
// digits and " -_.,'" kept, every other character (controls, markup) a
// space, runs of spaces one, at most MaxCalendarDateName characters;
// "unnamed event" for a summary that keeps nothing.
func EntryName(summary string) string {
	var b strings.Builder
	n := 0
	space := false
	for _, c := range summary {
		if n == schedulev2.MaxCalendarDateName {
			break
		}
		keep := unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("-_.,'", c)
		if !keep {
			space = b.Len() > 0
			continue
		}
		if space {
			if n+1 >= schedulev2.MaxCalendarDateName {
				break
			}
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(c)
		n++
	}
	if b.Len() == 0 {
		return "unnamed event"
	}
	return b.String()
}
