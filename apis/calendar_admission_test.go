package apis_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
)

// calendar is a Calendar with dates.
func calendar(dates ...schedulev2.CalendarDate) *schedulev2.Calendar {
	return &schedulev2.Calendar{Spec: schedulev2.CalendarSpec{Dates: dates}}
}

// clusterCalendar is a ClusterCalendar named name with dates.
func clusterCalendar(name string, dates ...schedulev2.CalendarDate) *schedulev2.ClusterCalendar {
	return &schedulev2.ClusterCalendar{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulev2.CalendarSpec{Dates: dates}}
}

// days is n fixed dates: the first 28 days of each month from January
// 2030.
func days(n int) []schedulev2.CalendarDate {
	out := make([]schedulev2.CalendarDate, n)
	for i := range out {
		out[i] = schedulev2.CalendarDate{Name: fmt.Sprintf("d%d", i), Date: fmt.Sprintf("%04d-%02d-%02d", 2030+i/(12*28), 1+i/28%12, 1+i%28)}
	}
	return out
}

// An entry is one date, one yearly date or one range of at most 31 days,
// each with a name and replicas within the TDSet's bounds.
func TestCalendarBounds(t *testing.T) {
	one := "exactly one of date (one day), yearly (a day every year) or from and to (a range of days)"
	expectBounds(t, []bound{
		{name: "every kind of entry, at the bounds", obj: calendar(
			schedulev2.CalendarDate{Name: "christmas", Yearly: "12-25", Replicas: ptr.To[int32](0)},
			schedulev2.CalendarDate{Name: "leap day", Yearly: "02-29"},
			schedulev2.CalendarDate{Name: "launch", Date: "2030-06-01", Replicas: ptr.To[int32](1000)},
			schedulev2.CalendarDate{Name: "summer", From: "2030-07-01", To: "2030-07-31"},
		)},
		{name: "366 dates", obj: calendar(days(366)...)},
		{name: "367 dates", obj: calendar(days(367)...), refused: "must have at most 366 items"},
		{name: "no kind", obj: calendar(schedulev2.CalendarDate{Name: "x"}), refused: one},
		{name: "two kinds", obj: calendar(schedulev2.CalendarDate{Name: "x", Date: "2030-01-01", Yearly: "01-01"}), refused: one},
		{name: "from without to", obj: calendar(schedulev2.CalendarDate{Name: "x", From: "2030-01-01"}), refused: "a range of days needs both from and to"},
		{name: "a reversed range", obj: calendar(schedulev2.CalendarDate{Name: "x", From: "2030-01-02", To: "2030-01-01"}), refused: "a range's to must not be before its from"},
		{name: "a range of 32 days", obj: calendar(schedulev2.CalendarDate{Name: "x", From: "2030-07-01", To: "2030-08-01"}), refused: "a range holds at most 31 days"},
		{name: "yearly 02-30", obj: calendar(schedulev2.CalendarDate{Name: "x", Yearly: "02-30"}), refused: "yearly must be a day that exists in some year"},
		{name: "yearly 13-01", obj: calendar(schedulev2.CalendarDate{Name: "x", Yearly: "13-01"}), refused: "spec.dates[0].yearly"},
		{name: "a date not YYYY-MM-DD", obj: calendar(schedulev2.CalendarDate{Name: "x", Date: "2030-1-1"}), refused: "spec.dates[0].date"},
		{name: "replicas 1001", obj: calendar(schedulev2.CalendarDate{Name: "x", Date: "2030-01-01", Replicas: ptr.To[int32](1001)}), refused: atMost1000},
		{name: "no name", obj: calendar(schedulev2.CalendarDate{Date: "2030-01-01"}), refused: "spec.dates[0].name"},
		{name: "a name of 64 characters", obj: calendar(schedulev2.CalendarDate{Name: fmt.Sprintf("%064d", 0), Date: "2030-01-01"}), refused: tooLong + " 63"},
		{name: "a ClusterCalendar has the same rules", obj: clusterCalendar("admission-reversed", schedulev2.CalendarDate{Name: "x", From: "2030-01-02", To: "2030-01-01"}),
			refused: "a range's to must not be before its from"},
	})
}

// spec.calendars: at most 8 references, each once, of a known kind.
func TestTDSetCalendarRefBounds(t *testing.T) {
	refs := func(n int) []schedulev2.CalendarRef {
		out := make([]schedulev2.CalendarRef, n)
		for i := range out {
			out[i] = schedulev2.CalendarRef{Name: fmt.Sprintf("c%d", i)}
		}
		return out
	}
	expectBounds(t, []bound{
		{name: "8 calendars, of both kinds", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Calendars = append(refs(7), schedulev2.CalendarRef{Kind: schedulev2.CalendarKindCluster, Name: "c0", Replicas: ptr.To[int32](1000)})
		})},
		{name: "9 calendars", obj: tdsetV2(func(s *schedulev2.TDSetSpec) { s.Calendars = refs(9) }), refused: "must have at most 8 items"},
		{name: "a calendar twice, once by the default kind", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Calendars = []schedulev2.CalendarRef{{Name: "c"}, {Kind: schedulev2.CalendarKindNamespaced, Name: "c"}}
		}), refused: "each calendar may be named once in spec.calendars"},
		{name: "an unknown kind", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Calendars = []schedulev2.CalendarRef{{Kind: "ConfigMap", Name: "c"}}
		}), refused: `Unsupported value: "ConfigMap"`},
		{name: "a name that is no DNS subdomain", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Calendars = []schedulev2.CalendarRef{{Name: "Holidays"}}
		}), refused: "spec.calendars[0].name"},
		{name: "replicas 1001", obj: tdsetV2(func(s *schedulev2.TDSetSpec) {
			s.Calendars = []schedulev2.CalendarRef{{Name: "c", Replicas: ptr.To[int32](1001)}}
		}), refused: atMost1000},
	})
}

// withSource sets spec.source of a Calendar or ClusterCalendar.
func withSource(obj client.Object, ref schedulev2.ConfigMapKeyRef, replicas *int32) client.Object {
	src := &schedulev2.CalendarSource{ConfigMapRef: ref, Replicas: replicas}
	switch c := obj.(type) {
	case *schedulev2.Calendar:
		c.Spec.Source = src
	case *schedulev2.ClusterCalendar:
		c.Spec.Source = src
	}
	return obj
}

// spec.source: a Calendar imports from a ConfigMap of its own namespace
// (no namespace), a ClusterCalendar names one; names, keys and the count
// are bounded.
func TestCalendarSourceBounds(t *testing.T) {
	ref := func(ns, name, key string) schedulev2.ConfigMapKeyRef {
		return schedulev2.ConfigMapKeyRef{Namespace: ns, Name: name, Key: key}
	}
	expectBounds(t, []bound{
		{name: "a Calendar's source, at the bounds", obj: withSource(calendar(), ref("", strings.Repeat("a", 253), strings.Repeat("k", 253)), ptr.To[int32](1000))},
		{name: "a Calendar's source beside dates", obj: withSource(calendar(schedulev2.CalendarDate{Name: "x", Date: "2030-01-01"}), ref("", "holidays", "holidays.ics"), nil)},
		{name: "a Calendar naming a namespace", obj: withSource(calendar(), ref("other", "holidays", "holidays.ics"), nil),
			refused: "a Calendar imports from a ConfigMap of its own namespace only"},
		{name: "a ClusterCalendar's source", obj: withSource(clusterCalendar("admission-source"), ref("calendars", "holidays", "holidays.ics"), ptr.To[int32](0))},
		{name: "a ClusterCalendar without a namespace", obj: withSource(clusterCalendar("admission-no-ns"), ref("", "holidays", "holidays.ics"), nil),
			refused: "a ClusterCalendar names the namespace of the ConfigMap it imports from"},
		{name: "a name of 254 characters", obj: withSource(calendar(), ref("", strings.Repeat("a", 254), "k"), nil), refused: tooLong + " 253"},
		{name: "a key of 254 characters", obj: withSource(calendar(), ref("", "holidays", strings.Repeat("k", 254)), nil), refused: tooLong + " 253"},
		{name: "a key with a slash", obj: withSource(calendar(), ref("", "holidays", "a/b"), nil), refused: "spec.source.configMapRef.key"},
		{name: "no key", obj: withSource(calendar(), ref("", "holidays", ""), nil), refused: "spec.source.configMapRef.key"},
		{name: "a namespace of 64 characters", obj: withSource(clusterCalendar("admission-long-ns"), ref(strings.Repeat("n", 64), "holidays", "k"), nil), refused: tooLong + " 63"},
		{name: "replicas 1001", obj: withSource(calendar(), ref("", "holidays", "k"), ptr.To[int32](1001)), refused: atMost1000},
	})
}
