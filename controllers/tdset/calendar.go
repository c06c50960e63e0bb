package tdset

import (
	"errors"
	"fmt"
	"time"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// SpecError is a spec the schedule cannot be computed from, with the
// condition reason that reports it.
type SpecError struct {
	// Reason is ReasonInvalidTimeZone or ReasonInvalidSchedule.
	Reason string
	// Err says what is wrong, for the condition's message and the event.
	Err error
}

// Error is the message users see.
func (e *SpecError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *SpecError) Unwrap() error { return e.Err }

// Calendar converts tds's spec for pkg/schedule and checks it. The API
// server's schema and the validating webhook reject everything it reports,
// so a SpecError only comes from objects stored before those checks ran.
func Calendar(tds *schedulev2.TDSet) (*schedule.Calendar, error) {
	loc, err := schedule.LoadLocation(tds.Spec.TimeZone)
	if err != nil {
		return nil, &SpecError{Reason: schedulev2.ReasonInvalidTimeZone, Err: fmt.Errorf("spec.timeZone: %w", err)}
	}
	// An object stored past the schema's bounds is refused before the
	// windows are compared pairwise, so that check stays small.
	if n := len(tds.Spec.Windows); n > schedulev2.MaxWindows {
		return nil, &SpecError{Reason: schedulev2.ReasonInvalidSchedule, Err: fmt.Errorf("spec.windows: %d windows, at most %d", n, schedulev2.MaxWindows)}
	}
	if n := len(tds.Spec.Exceptions); n > schedulev2.MaxExceptions {
		return nil, &SpecError{Reason: schedulev2.ReasonInvalidSchedule, Err: fmt.Errorf("spec.exceptions: %d exceptions, at most %d", n, schedulev2.MaxExceptions)}
	}
	cal := &schedule.Calendar{Location: loc, Default: tds.Spec.DefaultReplicas}
	var errs []error
	for i, w := range tds.Spec.Windows {
		win, err := window(w)
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.windows[%d]: %w", i, err))
			continue
		}
		cal.Windows = append(cal.Windows, win)
	}
	for i, e := range tds.Spec.Exceptions {
		date, err := schedule.ParseDate(e.Date)
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.exceptions[%d].date: %w", i, err))
			continue
		}
		cal.Exceptions = append(cal.Exceptions, schedule.Exception{Date: date, Replicas: e.Replicas})
	}
	if o := tds.Spec.Override; o != nil {
		cal.Override = &schedule.Override{Replicas: o.Replicas, Until: o.Until.Time}
	}
	if d := tds.Spec.ScaleUpLeadTime; d != nil {
		cal.LeadTime = d.Duration
	}
	if len(errs) == 0 {
		if err := cal.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, &SpecError{Reason: schedulev2.ReasonInvalidSchedule, Err: errors.Join(errs...)}
	}
	return cal, nil
}

// window converts one spec window.
func window(w schedulev2.Window) (schedule.Window, error) {
	start, err := schedule.ParseClock(w.Start)
	if err != nil {
		return schedule.Window{}, fmt.Errorf("start: %w", err)
	}
	end, err := schedule.ParseClock(w.End)
	if err != nil {
		return schedule.Window{}, fmt.Errorf("end: %w", err)
	}
	var days schedule.Weekdays
	for _, d := range w.Days {
		wd, err := schedule.ParseWeekday(string(d))
		if err != nil {
			return schedule.Window{}, fmt.Errorf("days: %w", err)
		}
		days |= 1 << wd
	}
	win := schedule.Window{Days: days, Start: start, End: end, Replicas: w.Replicas}
	if w.EndDay != "" {
		d, err := schedule.ParseWeekday(string(w.EndDay))
		if err != nil {
			return schedule.Window{}, fmt.Errorf("endDay: %w", err)
		}
		win.MultiDay, win.EndDay = true, d
	}
	return win, nil
}

// resyncCap is spec.resyncInterval, or 0 for none, held to the schema's
// 1m-24h: an object stored without that check must not make the
// controller requeue it in a busy loop.
func resyncCap(tds *schedulev2.TDSet) time.Duration {
	if d := tds.Spec.ResyncInterval; d != nil {
		return min(max(d.Duration, time.Minute), 24*time.Hour)
	}
	return 0
}
