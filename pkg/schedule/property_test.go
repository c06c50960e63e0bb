package schedule_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// bruteRaw is the raw count at x straight from the definition, with the
// standard library's local time: override, then the exception on the local
// date, then the first window holding the local weekday and minute (a
// wrapping window's tail on the day after it starts), then the default.
func bruteRaw(c *schedule.Calendar, x time.Time) (int32, schedule.Rule) {
	if c.Override != nil && x.Before(c.Override.Until) {
		return c.Override.Replicas, ovr
	}
	loc := c.Location
	if loc == nil {
		loc = time.UTC
	}
	l := x.In(loc)
	y, m, d := l.Date()
	for i, e := range c.Exceptions {
		if e.Date == (schedule.Date{Year: y, Month: m, Day: d}) {
			return e.Replicas, er(i)
		}
	}
	wd, minute := l.Weekday(), l.Hour()*60+l.Minute()
	for i, w := range c.Windows {
		if covers(w, wd, minute) {
			return w.Replicas, wr(i)
		}
	}
	return c.Default, dflt
}

type effState struct {
	replicas int32
	rule     schedule.Rule
	early    bool
}

// bruteMinutes evaluates the calendar at every minute mark from start for
// n minutes, applying the lead time (a whole number of minutes) by looking
// at the raw counts of the minutes in reach. In zones whose offsets are
// whole minutes, with an override that ends on a minute mark, nothing
// changes between minute marks, so this is the exact answer.
func bruteMinutes(c *schedule.Calendar, start time.Time, n int) []effState {
	lead := int(c.LeadTime / time.Minute)
	raw := make([]effState, n+lead)
	for k := range raw {
		r, rule := bruteRaw(c, start.Add(time.Duration(k)*time.Minute))
		raw[k] = effState{replicas: r, rule: rule}
	}
	out := make([]effState, n)
	for k := range out {
		v := raw[k]
		for j := k + 1; j <= k+lead; j++ {
			if raw[j].replicas > v.replicas {
				v = effState{replicas: raw[j].replicas, rule: raw[j].rule, early: true}
			}
		}
		out[k] = v
	}
	return out
}

// propertyZones have whole-minute offsets in the years tested: whole-hour,
// half-hour and 45-minute offsets and DST shifts, DST at midnight
// (Santiago, Havana), negative DST (Dublin), Ramadan changes (Casablanca).
var propertyZones = []string{
	"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago",
	"America/Havana", "Asia/Kathmandu", "America/St_Johns", "Europe/Dublin", "Africa/Casablanca", "Pacific/Auckland",
}

// randomCalendar is a calendar with up to 4 windows on random days or over
// days (times
// often on the half hour, or near the hot minutes, the local times of an
// offset change), up to 3 exceptions and an override near now, and a lead
// time of up to 3 hours.
func randomCalendar(rng *rand.Rand, loc *time.Location, now time.Time, hot []int) schedule.Calendar {
	clock := func() int {
		switch {
		case len(hot) > 0 && rng.IntN(2) == 0:
			return (hot[rng.IntN(len(hot))] + (rng.IntN(9)-4)*15 + schedule.MinutesPerDay) % schedule.MinutesPerDay
		case rng.IntN(2) == 0:
			return rng.IntN(48) * 30
		}
		return rng.IntN(schedule.MinutesPerDay)
	}
	c := schedule.Calendar{Location: loc, Default: rng.Int32N(5)}
	for range rng.IntN(5) {
		w := schedule.Window{Start: clock(), End: clock(), Replicas: rng.Int32N(5)}
		switch rng.IntN(4) {
		case 0:
		case 1:
			// A window over days.
			w.Days, w.MultiDay, w.EndDay = schedule.NewWeekdays(time.Weekday(rng.IntN(7))), true, time.Weekday(rng.IntN(7))
		default:
			w.Days = schedule.Weekdays(rng.IntN(127) + 1)
		}
		c.Windows = append(c.Windows, w)
	}
	for range rng.IntN(4) {
		y, m, d := now.In(loc).AddDate(0, 0, rng.IntN(12)-2).Date()
		c.Exceptions = append(c.Exceptions, schedule.Exception{Date: schedule.Date{Year: y, Month: m, Day: d}, Replicas: rng.Int32N(5)})
	}
	if rng.IntN(2) == 0 {
		until := now.Truncate(time.Minute).Add(time.Duration(rng.IntN(5*24*60)-2*24*60) * time.Minute)
		c.Override = &schedule.Override{Replicas: rng.Int32N(5), Until: until}
	}
	if rng.IntN(2) == 0 {
		c.LeadTime = time.Duration(rng.IntN(180)+1) * time.Minute
	}
	return c
}

// TestAtMatchesBruteForce compares At, its count and rule now and its next
// change, with a minute-by-minute evaluation of the definition over 9 days,
// for random calendars in several zones at random instants, half of them
// within 36 hours before one of the zone's offset changes.
func TestAtMatchesBruteForce(t *testing.T) {
	const horizon = 9 * 24 * 60
	cases := 400
	if testing.Short() {
		cases = 60
	}
	rng := rand.New(rand.NewPCG(20260308, 1))
	for i := range cases {
		loc := mustZone(t, propertyZones[i%len(propertyZones)])
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour))))
		var hot []int
		if rng.IntN(2) == 0 {
			if _, end := now.In(loc).ZoneBounds(); !end.IsZero() {
				now = end.Add(-time.Duration(rng.Int64N(int64(36 * time.Hour))))
				before, after := end.Add(-time.Minute).In(loc), end.In(loc)
				hot = []int{before.Hour()*60 + before.Minute() + 1, after.Hour()*60 + after.Minute()}
			}
		}
		cal := randomCalendar(rng, loc, now, hot)
		name := fmt.Sprintf("%d %s %s", i, loc, now.In(loc).Format(time.RFC3339))
		t.Run(name, func(t *testing.T) {
			got := cal.At(now)
			start := now.Truncate(time.Minute)
			want := bruteMinutes(&cal, start, horizon)
			report := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("%s\ncalendar: default %d, windows %v, exceptions %v, override %+v, lead %s\ngot %+v", fmt.Sprintf(format, args...),
					cal.Default, cal.Windows, cal.Exceptions, cal.Override, cal.LeadTime, got)
			}
			if cur := (effState{got.Replicas, got.Rule, got.Early}); cur != want[0] {
				report("now: got %+v, want %+v", cur, want[0])
			}
			k := 1
			for k < horizon && want[k] == want[0] {
				k++
			}
			if k == horizon {
				if !got.Next.IsZero() && !got.Next.After(start.Add(horizon*time.Minute-time.Minute)) {
					report("nothing changes within %d minutes, but Next is %s", horizon, got.Next)
				}
				return
			}
			if wantNext := start.Add(time.Duration(k) * time.Minute); !got.Next.Equal(wantNext) {
				report("Next %s, want %s (%s)", got.Next, wantNext, wantNext.In(loc))
			}
			if next := (effState{got.NextReplicas, got.NextRule, got.NextEarly}); next != want[k] {
				report("at Next: got %+v, want %+v", next, want[k])
			}
		})
	}
}

// TestAtSparseMatchesBruteForce covers calendars without windows, whose
// next change may lie years ahead, so that At skips the zone's offset
// changes on the way: it compares Next with an hour-by-hour evaluation of
// the definition (refined to the minute in the hour of a change) up to a
// day after the last exception date or override instant, in DST zones, also
// beyond 2037 where Go computes offsets from the zone's POSIX rule.
func TestAtSparseMatchesBruteForce(t *testing.T) {
	zones := []string{"America/New_York", "America/Santiago", "Australia/Lord_Howe", "Pacific/Chatham", "Pacific/Auckland", "America/Havana", "Africa/Casablanca", "Europe/Berlin", "Australia/Sydney"}
	cases := 90
	if testing.Short() {
		cases = 18
	}
	rng := rand.New(rand.NewPCG(99, 7))
	for i := range cases {
		loc := mustZone(t, zones[i%len(zones)])
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if i%3 == 0 {
			base = time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		now := base.Add(time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))
		cal := schedule.Calendar{Location: loc, Default: rng.Int32N(3)}
		if rng.IntN(4) == 0 {
			// A window that covers nothing is no window.
			cal.Windows = []schedule.Window{{Start: 600, End: 600, Replicas: 7}}
		}
		// The local dates just before and after the zone's offset changes
		// in the next 3 years, where midnight may be skipped or repeated.
		var shifts []time.Time
		for x := now.In(loc); x.Before(now.AddDate(3, 0, 0)); {
			_, next := x.ZoneBounds()
			if !next.After(x) {
				break
			}
			shifts = append(shifts, next.Add(-time.Second), next)
			x = next
		}
		last := now
		for range rng.IntN(5) {
			day := now.In(loc).AddDate(0, 0, rng.IntN(3*365)-10)
			if len(shifts) > 0 && rng.IntN(2) == 0 {
				day = shifts[rng.IntN(len(shifts))]
			}
			y, m, d := day.Date()
			cal.Exceptions = append(cal.Exceptions, schedule.Exception{Date: schedule.Date{Year: y, Month: m, Day: d}, Replicas: rng.Int32N(3)})
			if day.After(last) {
				last = day
			}
		}
		if rng.IntN(2) == 0 {
			until := now.Truncate(time.Minute).Add(time.Duration(rng.Int64N(int64(2*365*24*time.Hour))) - 24*time.Hour).Truncate(time.Minute)
			cal.Override = &schedule.Override{Replicas: rng.Int32N(3), Until: until}
			if until.After(last) {
				last = until
			}
		}
		end := last.Add(48 * time.Hour)
		t.Run(fmt.Sprintf("%d %s %s", i, loc, now.In(loc).Format(time.RFC3339)), func(t *testing.T) {
			got := cal.At(now)
			state := func(x time.Time) effState {
				r, rule := bruteRaw(&cal, x)
				return effState{replicas: r, rule: rule}
			}
			cur := state(now)
			if (effState{got.Replicas, got.Rule, got.Early}) != cur {
				t.Fatalf("now: got %+v, want %+v", got, cur)
			}
			var want time.Time
			prev := now.Truncate(time.Minute)
			for x := prev.Add(time.Hour); x.Before(end) && want.IsZero(); prev, x = x, x.Add(time.Hour) {
				if state(x) == cur {
					continue
				}
				for m := prev.Add(time.Minute); !m.After(x); m = m.Add(time.Minute) {
					if state(m) != cur {
						want = m
						break
					}
				}
			}
			if !got.Next.Equal(want) {
				t.Fatalf("Next %s, want %s; exceptions %v, override %+v", got.Next, want, cal.Exceptions, cal.Override)
			}
			if !want.IsZero() && (effState{got.NextReplicas, got.NextRule, got.NextEarly}) != state(want) {
				t.Fatalf("at Next: got %+v, want %+v", got, state(want))
			}
		})
	}
}
