package schedule_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// 2026-03-13 is a Friday, 2026-03-16 a Monday.
func TestAtMultiDay(t *testing.T) {
	weekend := schedule.Calendar{Default: 1, Windows: []schedule.Window{span(t, "Fri", "18:00", "Mon", "06:00", 4)}}
	with := func(c schedule.Calendar, x ...schedule.Exception) schedule.Calendar {
		c.Exceptions = x
		return c
	}
	satHoliday := with(weekend, exc(t, "2026-03-14", 2))
	friHoliday := with(weekend, exc(t, "2026-03-13", 2))
	monHoliday := with(weekend, exc(t, "2026-03-16", 2))
	wrap := schedule.Calendar{Default: 1, Windows: []schedule.Window{span(t, "Sat", "18:00", "Mon", "06:00", 3)}}
	almostWeek := schedule.Calendar{Default: 1, Windows: []schedule.Window{span(t, "Mon", "10:00", "Mon", "09:00", 5)}}
	sameDay := schedule.Calendar{Default: 1, Windows: []schedule.Window{span(t, "Wed", "09:00", "Wed", "17:00", 6)}}
	untilMidnight := schedule.Calendar{Default: 1, Windows: []schedule.Window{span(t, "Fri", "18:00", "Mon", "00:00", 4)}}
	adjacent := schedule.Calendar{Default: 1, Windows: []schedule.Window{span(t, "Fri", "18:00", "Mon", "06:00", 4), span(t, "Mon", "06:00", "Fri", "18:00", 7)}}
	runAt(t, []atCase{
		{name: "before it starts", cal: weekend, now: "2026-03-13T17:00:00Z", replicas: 1, rule: dflt, next: "2026-03-13T18:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "Friday night: one change, on Monday", cal: weekend, now: "2026-03-13T18:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-16T06:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "midnight between its days is no change", cal: weekend, now: "2026-03-14T23:59:59Z", replicas: 4, rule: wr(0), next: "2026-03-16T06:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Sunday is inside", cal: weekend, now: "2026-03-15T12:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-16T06:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "after Monday 06:00: next Friday", cal: weekend, now: "2026-03-16T06:00:00Z", replicas: 1, rule: dflt, next: "2026-03-20T18:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "Friday morning is not inside", cal: weekend, now: "2026-03-13T05:00:00Z", replicas: 1, rule: dflt, next: "2026-03-13T18:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "an exception inside cuts its date out", cal: satHoliday, now: "2026-03-13T20:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-14T00:00:00Z", nextRep: 2, nextRule: er(0)},
		{name: "and the window applies again after it", cal: satHoliday, now: "2026-03-14T12:00:00Z", replicas: 2, rule: er(0), next: "2026-03-15T00:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "an exception on its start day: it begins at the next midnight", cal: friHoliday, now: "2026-03-13T19:00:00Z", replicas: 2, rule: er(0), next: "2026-03-14T00:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "an exception on its end day: it ends at that midnight", cal: monHoliday, now: "2026-03-15T23:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-16T00:00:00Z", nextRep: 2, nextRule: er(0)},
		{name: "across the end of the week: Sunday", cal: wrap, now: "2026-03-15T12:00:00Z", replicas: 3, rule: wr(0), next: "2026-03-16T06:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "across the end of the week: Saturday evening", cal: wrap, now: "2026-03-14T17:00:00Z", replicas: 1, rule: dflt, next: "2026-03-14T18:00:00Z", nextRep: 3, nextRule: wr(0)},
		{name: "almost a week: the hour it is off", cal: almostWeek, now: "2026-03-16T09:30:00Z", replicas: 1, rule: dflt, next: "2026-03-16T10:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "almost a week: from Monday 10:00 to the next Monday 09:00", cal: almostWeek, now: "2026-03-16T10:00:00Z", replicas: 5, rule: wr(0), next: "2026-03-23T09:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "ending on its start day later is one day", cal: sameDay, now: "2026-03-11T12:00:00Z", replicas: 6, rule: wr(0), next: "2026-03-11T17:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "end 00:00 is the midnight that begins the end day", cal: untilMidnight, now: "2026-03-15T23:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-16T00:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "adjacent windows hand over", cal: adjacent, now: "2026-03-16T05:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-16T06:00:00Z", nextRep: 7, nextRule: wr(1)},
		{name: "and back", cal: adjacent, now: "2026-03-18T05:00:00Z", replicas: 7, rule: wr(1), next: "2026-03-20T18:00:00Z", nextRep: 4, nextRule: wr(0)},
	})
}

// New York springs forward on Sunday 2026-03-08 (02:00 EST becomes 03:00
// EDT at 07:00Z) and falls back on Sunday 2026-11-01 (02:00 EDT becomes
// 01:00 EST at 06:00Z). Apia skipped Friday 2011-12-30: Thursday 23:59:59
// -10 was followed by Saturday 00:00 +14, at 2011-12-30T10:00Z.
func TestAtMultiDayDST(t *testing.T) {
	one := func(w schedule.Window) schedule.Calendar {
		return schedule.Calendar{Default: 1, Windows: []schedule.Window{w}}
	}
	over := one(span(t, "Sat", "01:30", "Mon", "02:30", 8))
	intoRepeated := one(span(t, "Sat", "18:00", "Sun", "01:30", 8))
	friday := one(span(t, "Fri", "18:00", "Sat", "06:00", 5))
	thursday := one(span(t, "Thu", "20:00", "Sat", "02:00", 5))
	runAt(t, []atCase{
		{name: "spring: starts Saturday 01:30 EST", zone: "America/New_York", cal: over, now: "2026-03-07T06:00:00Z", replicas: 1, rule: dflt, next: "2026-03-07T06:30:00Z", nextRep: 8, nextRule: wr(0)},
		{name: "spring: nothing happens at the jump, it ends Monday 02:30 EDT", zone: "America/New_York", cal: over, now: "2026-03-08T06:59:59Z", replicas: 8, rule: wr(0), next: "2026-03-09T06:30:00Z", nextRep: 1, nextRule: dflt},
		{name: "spring: next Saturday 01:30 EDT", zone: "America/New_York", cal: over, now: "2026-03-09T06:30:00Z", replicas: 1, rule: dflt, next: "2026-03-14T05:30:00Z", nextRep: 8, nextRule: wr(0)},
		{name: "fall: starts Saturday 01:30 EDT", zone: "America/New_York", cal: over, now: "2026-10-31T05:00:00Z", replicas: 1, rule: dflt, next: "2026-10-31T05:30:00Z", nextRep: 8, nextRule: wr(0)},
		{name: "fall: nothing happens at the jump, it ends Monday 02:30 EST", zone: "America/New_York", cal: over, now: "2026-11-01T05:59:59Z", replicas: 8, rule: wr(0), next: "2026-11-02T07:30:00Z", nextRep: 1, nextRule: dflt},
		{name: "fall: ending in repeated time ends at the first 01:30", zone: "America/New_York", cal: intoRepeated, now: "2026-11-01T05:00:00Z", replicas: 8, rule: wr(0), next: "2026-11-01T05:30:00Z", nextRep: 1, nextRule: dflt},
		{name: "fall: and holds the repeated 01:00-01:30 again", zone: "America/New_York", cal: intoRepeated, now: "2026-11-01T05:30:00Z", replicas: 1, rule: dflt, next: "2026-11-01T06:00:00Z", nextRep: 8, nextRule: wr(0)},
		{name: "fall: until the second 01:30", zone: "America/New_York", cal: intoRepeated, now: "2026-11-01T06:00:00Z", replicas: 8, rule: wr(0), next: "2026-11-01T06:30:00Z", nextRep: 1, nextRule: dflt},
		{name: "Apia: a window starting on the skipped Friday starts at the jump", zone: "Pacific/Apia", cal: friday, now: "2011-12-30T09:00:00Z", replicas: 1, rule: dflt, next: "2011-12-30T10:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "Apia: and ends Saturday 06:00 +14", zone: "Pacific/Apia", cal: friday, now: "2011-12-30T10:00:00Z", replicas: 5, rule: wr(0), next: "2011-12-30T16:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Apia: a window over the skipped Friday goes on across the jump", zone: "Pacific/Apia", cal: thursday, now: "2011-12-30T06:00:00Z", replicas: 5, rule: wr(0), next: "2011-12-30T12:00:00Z", nextRep: 1, nextRule: dflt},
	})
}

// A lead time reaches back across midnight and the end of the week into
// the day before a window starts. 2026-03-15 is a Sunday.
func TestAtMultiDayLeadTime(t *testing.T) {
	monday := schedule.Calendar{Default: 1, Windows: []schedule.Window{span(t, "Mon", "00:30", "Wed", "00:00", 6)}, LeadTime: 2 * time.Hour}
	sunHoliday := monday
	sunHoliday.Exceptions = []schedule.Exception{exc(t, "2026-03-15", 3)}
	runAt(t, []atCase{
		{name: "early on Sunday evening", cal: monday, now: "2026-03-15T22:00:00Z", replicas: 1, rule: dflt, next: "2026-03-15T22:30:00Z", nextRep: 6, nextRule: wr(0), nextEarly: true},
		{name: "early over midnight", cal: monday, now: "2026-03-15T23:59:00Z", replicas: 6, rule: wr(0), early: true, next: "2026-03-16T00:30:00Z", nextRep: 6, nextRule: wr(0)},
		{name: "down on time on Wednesday", cal: monday, now: "2026-03-17T23:00:00Z", replicas: 6, rule: wr(0), next: "2026-03-18T00:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "early also during an exception the day before", cal: sunHoliday, now: "2026-03-15T12:00:00Z", replicas: 3, rule: er(0), next: "2026-03-15T22:30:00Z", nextRep: 6, nextRule: wr(0), nextEarly: true},
	})
}

func TestValidateMultiDay(t *testing.T) {
	weekend := span(t, "Fri", "18:00", "Mon", "06:00", 1)
	for _, tc := range []struct {
		name string
		wins []schedule.Window
		errs []string
	}{
		{name: "a weekend and the week around it", wins: []schedule.Window{weekend, span(t, "Mon", "06:00", "Fri", "18:00", 2)}},
		{name: "a weekend and the working days' windows", wins: []schedule.Window{weekend, win(t, "Mon-Fri", "08:00", "17:00", 2), win(t, "Fri", "17:00", "18:00", 3), win(t, "Mon", "06:00", "08:00", 3)}},
		{name: "almost a week", wins: []schedule.Window{span(t, "Mon", "10:00", "Mon", "09:00", 1), win(t, "Mon", "09:00", "10:00", 2)}},
		{name: "overlap with a window every day", wins: []schedule.Window{weekend, win(t, "", "05:00", "07:00", 2)},
			errs: []string{"windows Fri 18:00-Mon 06:00 and every day 05:00-07:00 overlap on Mon,Sat,Sun"}},
		{name: "overlap of two windows over days", wins: []schedule.Window{weekend, span(t, "Sun", "12:00", "Tue", "00:00", 2)},
			errs: []string{"windows Fri 18:00-Mon 06:00 and Sun 12:00-Tue 00:00 overlap on Mon,Sun"}},
		{name: "overlap across the end of the week", wins: []schedule.Window{span(t, "Sat", "18:00", "Mon", "06:00", 1), win(t, "Mon", "05:00", "08:00", 2)},
			errs: []string{"windows Sat 18:00-Mon 06:00 and Mon 05:00-08:00 overlap on Mon"}},
		{name: "overlap with the wrapped tail of a night", wins: []schedule.Window{weekend, win(t, "Thu", "22:00", "19:00", 2)},
			errs: []string{"windows Fri 18:00-Mon 06:00 and Thu 22:00-19:00 overlap on Fri"}},
		{name: "almost a week overlaps itself nowhere, but a window in its hour off does not fit beside it", wins: []schedule.Window{span(t, "Mon", "10:00", "Mon", "09:00", 1), win(t, "Mon", "08:30", "09:30", 2)},
			errs: []string{"windows Mon 10:00-Mon 09:00 and Mon 08:30-09:30 overlap on Mon"}},
		{name: "a whole week is empty", wins: []schedule.Window{span(t, "Mon", "09:00", "Mon", "09:00", 1)},
			errs: []string{"window Mon 09:00-Mon 09:00 is empty: it ends on the day and at the time it starts (a window lasts less than a week)"}},
		{name: "more than one start day", wins: []schedule.Window{span(t, "Fri,Sat", "18:00", "Mon", "06:00", 1)},
			errs: []string{"window Fri,Sat 18:00-Mon 06:00: a window with an end day starts on exactly one day"}},
		{name: "every day is not one start day", wins: []schedule.Window{{MultiDay: true, Start: 60, End: 120, EndDay: time.Monday}},
			errs: []string{"window every day 01:00-Mon 02:00: a window with an end day starts on exactly one day"}},
		{name: "unknown end day", wins: []schedule.Window{{Days: schedule.NewWeekdays(time.Friday), MultiDay: true, Start: 60, End: 120, EndDay: 9}},
			errs: []string{"window Fri 01:00-day(9) 02:00: unknown end day 9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := (&schedule.Calendar{Windows: tc.wins}).Validate()
			if len(tc.errs) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			for _, want := range tc.errs {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
		})
	}
}

func TestMultiDayString(t *testing.T) {
	g := NewWithT(t)
	g.Expect(span(t, "Fri", "18:00", "Mon", "06:00", 4).String()).To(Equal("Fri 18:00-Mon 06:00"))
	cal := schedule.Calendar{Windows: []schedule.Window{span(t, "Sat", "01:30", "Mon", "02:30", 4)}}
	g.Expect(cal.Describe(wr(0))).To(Equal("window Sat 01:30-Mon 02:30"))
}

// pieces splits a window over days into plain windows of one day each
// that together cover the same minutes of the week: the part of each day
// the window holds, a whole day as two halves (a plain window cannot hold
// a whole day).
func pieces(w schedule.Window) []schedule.Window {
	const week = 7 * schedule.MinutesPerDay
	var start time.Weekday
	for d := time.Sunday; d <= time.Saturday; d++ {
		if w.Days == schedule.NewWeekdays(d) {
			start = d
		}
	}
	length := (int(w.EndDay-start+7)%7)*schedule.MinutesPerDay + w.End - w.Start
	if length <= 0 {
		length += week
	}
	var out []schedule.Window
	add := func(d time.Weekday, from, to int) {
		end := to % schedule.MinutesPerDay
		out = append(out, schedule.Window{Days: schedule.NewWeekdays(d), Start: from, End: end, Replicas: w.Replicas})
	}
	// Minutes from the start day's midnight; a near-week window's end lies
	// in the eighth day, which is the start day again.
	from, to := w.Start, w.Start+length
	for k := range 8 {
		a, b := max(from, k*schedule.MinutesPerDay), min(to, (k+1)*schedule.MinutesPerDay)
		if a >= b {
			continue
		}
		d := (start + time.Weekday(k)) % 7
		a, b = a-k*schedule.MinutesPerDay, b-k*schedule.MinutesPerDay
		if a == 0 && b == schedule.MinutesPerDay {
			add(d, 0, 720)
			add(d, 720, schedule.MinutesPerDay)
			continue
		}
		add(d, a, b)
	}
	return out
}

// TestMultiDayIsTheUnionOfItsDays checks, for random windows over days in
// several zones, that at every minute of a week (from a random instant,
// half of them just before an offset change) the window holds the same
// minutes as its pieces of one day each, with the same count, and that
// At's next change is the first minute at which the pieces' count
// changes.
func TestMultiDayIsTheUnionOfItsDays(t *testing.T) {
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago", "Pacific/Apia"}
	cases := 70
	if testing.Short() {
		cases = 14
	}
	rng := rand.New(rand.NewPCG(44, 2026))
	for i := range cases {
		loc := mustZone(t, zones[i%len(zones)])
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))).Truncate(time.Minute)
		if zones[i%len(zones)] == "Pacific/Apia" && i%2 == 0 {
			now = time.Date(2011, 12, 27, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(4 * 24 * time.Hour)))).Truncate(time.Minute)
		} else if i%2 == 0 {
			if _, end := now.In(loc).ZoneBounds(); !end.IsZero() {
				now = end.Add(-time.Duration(rng.Int64N(int64(4 * 24 * time.Hour)))).Truncate(time.Minute)
			}
		}
		var w schedule.Window
		for {
			w = schedule.Window{Days: schedule.NewWeekdays(time.Weekday(rng.IntN(7))), MultiDay: true, EndDay: time.Weekday(rng.IntN(7)), Start: rng.IntN(48) * 30, End: rng.IntN(48) * 30, Replicas: 5}
			if (&schedule.Calendar{Windows: []schedule.Window{w}}).Validate() == nil {
				break
			}
		}
		whole := schedule.Calendar{Location: loc, Default: 1, Windows: []schedule.Window{w}}
		split := schedule.Calendar{Location: loc, Default: 1, Windows: pieces(w)}
		t.Run(fmt.Sprintf("%d %s %s %s", i, loc, w, now.In(loc).Format(time.RFC3339)), func(t *testing.T) {
			if err := split.Validate(); err != nil {
				t.Fatalf("pieces %v: %v", split.Windows, err)
			}
			const n = 7*schedule.MinutesPerDay + 1
			counts := make([]int32, n)
			for k := range counts {
				x := now.Add(time.Duration(k) * time.Minute)
				a, b := whole.At(x), split.At(x)
				if a.Replicas != b.Replicas || a.Rule.Kind != b.Rule.Kind {
					t.Fatalf("at %s: %d from %s, the pieces %v say %d from %s", x.In(loc), a.Replicas, whole.Describe(a.Rule), split.Windows, b.Replicas, split.Describe(b.Rule))
				}
				counts[k] = b.Replicas
			}
			got := whole.At(now)
			k := 1
			for k < n && counts[k] == counts[0] {
				k++
			}
			if k == n {
				t.Fatalf("a window over days changes nothing in a week: %v", w)
			}
			if want := now.Add(time.Duration(k) * time.Minute); !got.Next.Equal(want) {
				t.Fatalf("Next %s, want %s", got.Next, want.In(loc))
			}
		})
	}
}
