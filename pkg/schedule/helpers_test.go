package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// utc parses an instant written in RFC 3339, so that expectations do not
// depend on the zone database under test.
func utc(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// days parses "Mon-Fri", "Mon,Wed,Sat", "Sat-Mon" (wrapping) or "" (every day).
func days(t testing.TB, spec string) schedule.Weekdays {
	t.Helper()
	var w schedule.Weekdays
	if spec == "" {
		return 0
	}
	for part := range strings.SplitSeq(spec, ",") {
		from, to, isRange := strings.Cut(part, "-")
		a, err := schedule.ParseWeekday(from)
		if err != nil {
			t.Fatal(err)
		}
		b := a
		if isRange {
			if b, err = schedule.ParseWeekday(to); err != nil {
				t.Fatal(err)
			}
		}
		for d := a; ; d = (d + 1) % 7 {
			w |= schedule.NewWeekdays(d)
			if d == b {
				break
			}
		}
	}
	return w
}

// win is a window written as users do: win(t, "Mon-Fri", "08:30", "18:00", 5).
func win(t testing.TB, daySpec, start, end string, n int32) schedule.Window {
	t.Helper()
	s, err := schedule.ParseClock(start)
	if err != nil {
		t.Fatal(err)
	}
	e, err := schedule.ParseClock(end)
	if err != nil {
		t.Fatal(err)
	}
	return schedule.Window{Days: days(t, daySpec), Start: s, End: e, Replicas: n}
}

// hours is a v1 window h1→h2 every day, as the conversion webhook writes it.
func hours(start, end int, n int32) schedule.Window {
	return schedule.Window{Start: start * 60, End: end * 60, Replicas: n}
}

func exc(t testing.TB, date string, n int32) schedule.Exception {
	t.Helper()
	d, err := schedule.ParseDate(date)
	if err != nil {
		t.Fatal(err)
	}
	return schedule.Exception{Date: d, Replicas: n}
}

var (
	dflt = schedule.Rule{}
	ovr  = schedule.Rule{Kind: schedule.RuleOverride}
)

func wr(i int) schedule.Rule { return schedule.Rule{Kind: schedule.RuleWindow, Index: i} }
func er(i int) schedule.Rule { return schedule.Rule{Kind: schedule.RuleException, Index: i} }

// span is a window over days written as users do: span(t, "Fri", "18:00",
// "Mon", "06:00", 4) is Friday 18:00 to Monday 06:00.
func span(t testing.TB, startDay, start, endDay, end string, n int32) schedule.Window {
	t.Helper()
	w := win(t, startDay, start, end, n)
	d, err := schedule.ParseWeekday(endDay)
	if err != nil {
		t.Fatal(err)
	}
	w.MultiDay, w.EndDay = true, d
	return w
}
