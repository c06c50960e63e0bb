// Package backupschedule holds the pure rules of scheduled backups: when a
// cron schedule is due, and which finished backups a retention policy
// keeps. It knows nothing of the API server, so that both are table-tested.
package backupschedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// MaxExpressionLength bounds a schedule's text, as the API's admission does.
const MaxExpressionLength = 100

// parser reads the five fields of a standard cron expression (minute, hour,
// day of month, month, day of week), and the @hourly style descriptors, as
// Kubernetes' CronJob does. Seconds are not offered: no backup runs more
// than once a minute.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Schedule is a parsed cron expression in a time zone.
type Schedule struct {
	spec     cron.Schedule
	location *time.Location
}

// Parse reads a cron expression and an IANA time zone name ("" is UTC). The
// expression may not carry its own TZ= or CRON_TZ= prefix: the zone has a
// field of its own, so that the two cannot disagree.
func Parse(expression, timeZone string) (Schedule, error) {
	if len(expression) > MaxExpressionLength {
		return Schedule{}, fmt.Errorf("the schedule is longer than %d characters", MaxExpressionLength)
	}
	trimmed := strings.TrimSpace(expression)
	if trimmed == "" {
		return Schedule{}, errors.New("the schedule is empty")
	}
	if strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=") {
		return Schedule{}, errors.New("the schedule may not set its time zone: use spec.timeZone")
	}
	if strings.HasPrefix(trimmed, "@every") {
		return Schedule{}, errors.New("@every is not offered: write five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly")
	}
	location := time.UTC
	if timeZone != "" {
		var err error
		if location, err = time.LoadLocation(timeZone); err != nil {
			return Schedule{}, fmt.Errorf("unknown time zone %q", timeZone)
		}
	}
	spec, err := parser.Parse(trimmed)
	if err != nil {
		return Schedule{}, fmt.Errorf("the schedule %q is not a cron expression of five fields (minute hour day-of-month month day-of-week): %w", expression, err)
	}
	s := Schedule{spec: spec, location: location}
	// A valid expression may still never fire (February 30th): say so now
	// rather than wait forever.
	if s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return Schedule{}, fmt.Errorf("the schedule %q never fires", expression)
	}
	return s, nil
}

// Next is the first time the schedule fires strictly after t, or the zero
// time when it never does again.
func (s Schedule) Next(t time.Time) time.Time {
	return s.spec.Next(t.In(s.location))
}

// Due says which tick a run is owed for at now, given the last tick a run
// was made for (zero: none yet, in which case created, the schedule's own
// creation, counts as the last): the latest tick after last and not after
// now, or the zero time when none is. Ticks missed while the manager was
// down collapse into that one run, so that an outage does not start a
// burst of backups. next is the first tick after now, when to look again.
func (s Schedule) Due(last, created, now time.Time) (due, next time.Time) {
	if last.IsZero() {
		last = created
	}
	// Cron has no "previous tick": walk forward from a little before now,
	// widening the look-back until a tick is found or last is reached, so
	// that a schedule firing every minute after a long outage walks
	// minutes, not months.
	for _, back := range lookBacks {
		from := now.Add(-back)
		if !from.After(last) {
			from = last
		}
		for tick := s.Next(from); !tick.IsZero() && !tick.After(now); tick = s.Next(tick) {
			due = tick
		}
		if !due.IsZero() || from.Equal(last) {
			break
		}
	}
	return due, s.Next(now)
}

// lookBacks are the windows Due searches, narrowest first. A schedule with
// no tick in the last year fires at most a few times in five.
var lookBacks = []time.Duration{time.Hour, 24 * time.Hour, 8 * 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour, 5 * 367 * 24 * time.Hour}

// periodTicks is how many ticks after now Period looks at: enough to see
// a weekday schedule's weekend or a monthly one's longest month, few
// enough for a schedule that fires every minute.
const periodTicks = 32

// Period is the longest gap between two consecutive ticks among the next
// periodTicks after now: the longest a schedule that runs well may go
// without a new backup, which an alert on the age of the latest complete
// backup compares with. A schedule firing on weekdays only has a period of
// three days (Friday to Monday), not one. Zero when it fires at most once
// more.
func (s Schedule) Period(now time.Time) time.Duration {
	var longest time.Duration
	prev := s.Next(now)
	for range periodTicks {
		if prev.IsZero() {
			break
		}
		next := s.Next(prev)
		if next.IsZero() {
			break
		}
		longest = max(longest, next.Sub(prev))
		prev = next
	}
	return longest
}
