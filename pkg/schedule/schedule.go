// Package schedule computes how many replicas a time-of-day schedule asks for
// at a given instant, and when that will next change. It is pure: no
// Kubernetes client and no clock of its own, so the controller decides with
// an injected clock and the tests with any instant they like.
//
// # Windows
//
// A Window covers the local hours [StartHour, EndHour) of every day in the
// schedule's time zone. StartHour > EndHour wraps past midnight: 19→0 is
// 19:00–23:59 and 22→2 is 22:00–01:59. StartHour == EndHour covers nothing
// (Validate rejects it). Hours that no window covers get the default count.
// Windows should not overlap (Validate rejects it); if they do anyway, the
// first one in list order that covers an hour wins, so the result is always
// defined.
//
// # Wall-clock hours decide, also across DST
//
// The replica count at an instant depends only on the wall-clock hour that
// instant has in the zone: the instant is converted to local time and its
// hour looked up among the windows. Nothing else is remembered, so the answer
// never depends on when the controller last looked or whether it restarted.
// This has two consequences on the days the zone changes its offset:
//
//   - A skipped hour (spring forward, 02:00 jumps to 03:00 in New York) never
//     happens. A window that starts in it starts at the first instant that
//     exists after it: 2→5 begins at 03:00. A window that lies entirely in
//     skipped time (2→3) does not apply that day at all.
//   - A repeated hour (fall back, 01:00–01:59 happens twice in New York) is
//     one wall-clock hour and belongs to the same window both times: a
//     window 1→2 lasts two real hours that night, a window 0→1 ends at the
//     first 01:00 and does not start again at the second, and nothing changes
//     at the instant the clock falls back. Where an offset change is not a
//     whole hour (Pacific/Chatham, Australia/Lord_Howe) the wall-clock hour
//     can step backwards across an hour mark; the rule is the same and the
//     count follows the hour the clock shows.
//
// # Next transition
//
// Result.Next is the first instant after now at which the active window
// changes (a window begins or ends, including changes to and from the
// default). It is found by stepping through the local hour marks and the
// zone's offset changes, so it is DST-aware and exact for zones with ±30 and
// ±45 minute offsets. It is never more than MaxLookahead ahead: when no
// change falls within that span, which only happens when an offset change
// swallows the single hour another window needed, Next is the last local
// hour mark within it and NextReplicas equals Replicas. A caller that sleeps
// until Next therefore never sleeps longer than MaxLookahead.
package schedule

import (
	"errors"
	"fmt"
	"time"
	// The zone database is compiled in, so that time zones resolve the same in
	// a distroless image as on a workstation.
	_ "time/tzdata"
)

// Default is the window index that means "no window applies, the default
// count does".
const Default = -1

// MaxLookahead bounds Result.Next: 25 hours covers every day, including a
// 25-hour fall-back day, plus a margin.
const MaxLookahead = 25 * time.Hour

// Window is one entry of a schedule: Replicas during the local hours
// [StartHour, EndHour).
type Window struct {
	// StartHour and EndHour are hours of the day, 0–23. EndHour 0 means midnight.
	StartHour, EndHour int
	// Replicas is the count while the window applies.
	Replicas int32
}

// String is the window as users write it, "17-19".
func (w Window) String() string { return fmt.Sprintf("%d-%d", w.StartHour, w.EndHour) }

// Covers reports whether hour (0–23) lies in the window.
func (w Window) Covers(hour int) bool {
	if w.StartHour < w.EndHour {
		return hour >= w.StartHour && hour < w.EndHour
	}
	if w.StartHour > w.EndHour {
		return hour >= w.StartHour || hour < w.EndHour
	}
	return false
}

// Result is what a schedule asks for at one instant.
type Result struct {
	// Replicas is the count that applies now.
	Replicas int32
	// Window is the index of the window that applies now, or Default.
	Window int
	// Next is the first instant after now at which Window changes, in the
	// schedule's location; see the package documentation for its bound.
	Next time.Time
	// NextReplicas and NextWindow are what applies from Next on.
	NextReplicas int32
	NextWindow   int
}

// Evaluate returns what windows, with defaultReplicas for uncovered hours,
// ask for at now in loc (UTC when loc is nil).
func Evaluate(windows []Window, defaultReplicas int32, loc *time.Location, now time.Time) Result {
	if loc == nil {
		loc = time.UTC
	}
	now = now.In(loc)
	cur := active(windows, now.Hour())
	res := Result{Replicas: replicas(windows, defaultReplicas, cur), Window: cur}
	limit := now.Add(MaxLookahead)
	last := now
	for t := nextCandidate(now); !t.After(limit); t = nextCandidate(t) {
		last = t
		if w := active(windows, t.Hour()); w != cur {
			res.Next, res.NextWindow, res.NextReplicas = t, w, replicas(windows, defaultReplicas, w)
			return res
		}
	}
	res.Next, res.NextWindow, res.NextReplicas = last, cur, res.Replicas
	return res
}

// nextCandidate is the first instant after t at which the local hour may
// change: the next local hour mark under t's offset, or the zone's next
// offset change if that comes first.
func nextCandidate(t time.Time) time.Time {
	intoHour := time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())
	next := t.Add(time.Hour - intoHour)
	if _, end := t.ZoneBounds(); !end.IsZero() && end.After(t) && end.Before(next) {
		next = end
	}
	return next
}

// active is the index of the first window covering hour, or Default.
func active(windows []Window, hour int) int {
	for i, w := range windows {
		if w.Covers(hour) {
			return i
		}
	}
	return Default
}

func replicas(windows []Window, defaultReplicas int32, window int) int32 {
	if window == Default {
		return defaultReplicas
	}
	return windows[window].Replicas
}

// Validate reports windows with hours outside 0–23, empty windows
// (StartHour == EndHour) and overlapping windows, naming them as users wrote
// them. The API server rejects all of these at admission; Validate guards
// objects stored before those rules existed.
func Validate(windows []Window) error {
	var errs []error
	for _, w := range windows {
		switch {
		case w.StartHour < 0 || w.StartHour > 23 || w.EndHour < 0 || w.EndHour > 23:
			errs = append(errs, fmt.Errorf("window %s: hours must be 0-23", w))
		case w.StartHour == w.EndHour:
			errs = append(errs, fmt.Errorf("window %s is empty: startTime and endTime must differ", w))
		}
	}
	for i := range windows {
		for j := i + 1; j < len(windows); j++ {
			if Overlap(windows[i], windows[j]) {
				errs = append(errs, fmt.Errorf("windows %s and %s overlap", windows[i], windows[j]))
			}
		}
	}
	return errors.Join(errs...)
}

// Overlap reports whether two non-empty windows share an hour. Two arcs of a
// circle intersect exactly when one contains the other's start, which is
// also how the CRD's admission rule tests it.
func Overlap(a, b Window) bool {
	if a.StartHour == a.EndHour || b.StartHour == b.EndHour {
		return false
	}
	return a.Covers(b.StartHour) || b.Covers(a.StartHour)
}

// LoadLocation resolves an IANA time zone name. Unlike time.LoadLocation it
// refuses "Local", which would silently use the controller's own zone, the
// very thing a schedule's time zone exists to avoid. An empty name is UTC,
// the API's default.
func LoadLocation(name string) (*time.Location, error) {
	if name == "Local" {
		return nil, errors.New(`"Local" is the controller's own time zone; name an IANA zone such as "Europe/Berlin"`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: name an IANA zone such as \"Europe/Berlin\" or \"UTC\"", name)
	}
	return loc, nil
}
