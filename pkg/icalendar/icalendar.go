// Package icalendar reads the whole-day events of an iCalendar (RFC 5545)
// file, as a Calendar imports them: VEVENTs with DATE values, one day or
// several, once or every year (RRULE:FREQ=YEARLY). Everything else an
// event may say (times, other recurrences) is reported as an error of that
// event, not guessed at. The input is untrusted: its size, its line count
// and its event count are bounded before anything is kept.
package icalendar

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// Limits bound what Parse reads.
type Limits struct {
	// MaxBytes is the largest input; a larger one is refused whole.
	MaxBytes int
	// MaxLines is the most unfolded lines read.
	MaxLines int
	// MaxEvents is the most events kept; more is an error.
	MaxEvents int
	// MaxDays is the most days one event may last.
	MaxDays int
	// MaxErrors is the most event errors reported; the rest are counted.
	MaxErrors int
}

// DefaultLimits are a Calendar's: 1 MiB, a year of one-day events and
// ranges of a month.
var DefaultLimits = Limits{MaxBytes: 1 << 20, MaxLines: 50000, MaxEvents: 366, MaxDays: 31, MaxErrors: 10}

// Event is one whole-day event.
type Event struct {
	// Summary is the event's SUMMARY, unescaped; may be empty.
	Summary string
	// Start is its first local date (DTSTART).
	Start schedule.Date
	// Days is how many days it lasts, at least 1 (DTEND is exclusive).
	Days int
	// Yearly says it recurs every year (RRULE:FREQ=YEARLY); a yearly
	// event lasts one day.
	Yearly bool
}

// Result is what Parse found.
type Result struct {
	// Events are the events read, in file order.
	Events []Event
	// Errors are the first Limits.MaxErrors errors of events that were
	// skipped, each naming the event by its line.
	Errors []string
	// Skipped is how many events were skipped in all.
	Skipped int
}

// ErrTooLarge is an input over Limits.MaxBytes or Limits.MaxLines.
var ErrTooLarge = errors.New("the iCalendar data is too large")

// Parse reads the whole-day events of data within lim. It fails only when
// the input as a whole is over its limits, has more events than
// lim.MaxEvents or has an unterminated VEVENT; an event it cannot read is
// skipped and reported in Result.Errors.
func Parse(data []byte, lim Limits) (Result, error) {
	if len(data) > lim.MaxBytes {
		return Result{}, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(data), lim.MaxBytes)
	}
	lines, err := unfold(data, lim.MaxLines)
	if err != nil {
		return Result{}, err
	}
	var (
		res     Result
		current *rawEvent
	)
	for i, line := range lines {
		name, params, value := split(line)
		switch {
		case name == "BEGIN" && strings.EqualFold(value, "VEVENT"):
			if current != nil {
				return Result{}, fmt.Errorf("line %d: a VEVENT inside a VEVENT", i+1)
			}
			current = &rawEvent{line: i + 1}
		case name == "END" && strings.EqualFold(value, "VEVENT"):
			if current == nil {
				return Result{}, fmt.Errorf("line %d: END:VEVENT without BEGIN", i+1)
			}
			ev, err := current.event(lim.MaxDays)
			current = nil
			if err != nil {
				res.Skipped++
				if len(res.Errors) < lim.MaxErrors {
					res.Errors = append(res.Errors, err.Error())
				}
				continue
			}
			if len(res.Events) == lim.MaxEvents {
				return Result{}, fmt.Errorf("more than %d events", lim.MaxEvents)
			}
			res.Events = append(res.Events, ev)
		case current != nil:
			current.set(name, params, value)
		}
	}
	if current != nil {
		return Result{}, fmt.Errorf("line %d: VEVENT without END", current.line)
	}
	return res, nil
}

// unfold splits data into lines, joining a line that begins with a space
// or a tab to the one before (RFC 5545 3.1), and stops at maxLines. Each
// line is built in one buffer, so that many continuations cost no more
// than their bytes.
func unfold(data []byte, maxLines int) ([]string, error) {
	var (
		lines   []string
		current []byte
		open    bool
	)
	flush := func() error {
		if !open {
			return nil
		}
		if len(lines) == maxLines {
			return fmt.Errorf("%w: more than %d lines", ErrTooLarge, maxLines)
		}
		lines = append(lines, string(current))
		current, open = current[:0], false
		return nil
	}
	for raw := range bytes.SplitSeq(data, []byte("\n")) {
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t') && open {
			current = append(current, raw[1:]...)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		if len(raw) > 0 {
			current, open = append(current, raw...), true
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return lines, nil
}

// split parses "NAME;PARAM=V;...:VALUE" into the upper-cased name, its
// parameters as written and the value. A colon inside a quoted parameter
// value does not end the parameters.
func split(line string) (name, params, value string) {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			quoted = !quoted
		case ':':
			if !quoted {
				head := line[:i]
				name, params, _ = strings.Cut(head, ";")
				return strings.ToUpper(name), params, line[i+1:]
			}
		}
	}
	return strings.ToUpper(line), "", ""
}

// rawEvent is a VEVENT's properties as read.
type rawEvent struct {
	// line is the line of its BEGIN:VEVENT, which errors name.
	line    int
	summary string
	// start and end are DTSTART's and DTEND's values; startDate and
	// endDate say they are DATE values.
	start, end         string
	startDate, endDate bool
	hasStart, hasEnd   bool
	rrule              string
	hasRRule           bool
	// repeated is a DTSTART or RRULE given twice.
	repeated bool
	// exceptions is an RDATE, EXDATE or RECURRENCE-ID, which change a
	// recurrence in ways not imported.
	exceptions bool
}

// set records one property.
func (e *rawEvent) set(name, params, value string) {
	isDate := strings.Contains(strings.ToUpper(params), "VALUE=DATE") && !strings.Contains(strings.ToUpper(params), "VALUE=DATE-TIME")
	switch name {
	case "SUMMARY":
		e.summary = unescape(value)
	case "DTSTART":
		e.repeated = e.repeated || e.hasStart
		e.start, e.startDate, e.hasStart = value, isDate || len(value) == 8, true
	case "DTEND":
		e.end, e.endDate, e.hasEnd = value, isDate || len(value) == 8, true
	case "RRULE":
		e.repeated = e.repeated || e.hasRRule
		e.rrule, e.hasRRule = value, true
	case "RDATE", "EXDATE", "RECURRENCE-ID":
		e.exceptions = true
	}
}

// event checks the properties and makes the Event.
func (e *rawEvent) event(maxDays int) (Event, error) {
	fail := func(format string, args ...any) (Event, error) {
		return Event{}, fmt.Errorf("event at line %d: %s", e.line, fmt.Sprintf(format, args...))
	}
	switch {
	case !e.hasStart:
		return fail("no DTSTART")
	case e.repeated:
		return fail("DTSTART or RRULE more than once")
	case e.exceptions:
		return fail("RDATE, EXDATE and RECURRENCE-ID are not supported")
	case !e.startDate || (e.hasEnd && !e.endDate):
		return fail("only whole-day events (DATE values, YYYYMMDD) are imported")
	}
	start, err := parseDate(e.start)
	if err != nil {
		return fail("DTSTART: %v", err)
	}
	days := 1
	if e.hasEnd {
		end, err := parseDate(e.end)
		if err != nil {
			return fail("DTEND: %v", err)
		}
		d := int(end.Sub(start).Hours() / 24)
		if d < 1 || d > maxDays {
			return fail("it lasts %d days; 1 to %d are imported", d, maxDays)
		}
		days = d
	}
	ev := Event{Summary: e.summary, Start: schedule.Date{Year: start.Year(), Month: start.Month(), Day: start.Day()}, Days: days}
	if e.hasRRule {
		if !yearly(e.rrule) {
			return fail("RRULE %q: only FREQ=YEARLY is imported", truncate(e.rrule))
		}
		if days != 1 {
			return fail("a yearly event lasts one day")
		}
		ev.Yearly = true
	}
	return ev, nil
}

// yearly reports whether rule is FREQ=YEARLY with no other part but
// INTERVAL=1.
func yearly(rule string) bool {
	freq := false
	for part := range strings.SplitSeq(strings.ToUpper(rule), ";") {
		switch part {
		case "FREQ=YEARLY":
			freq = true
		case "INTERVAL=1":
		default:
			return false
		}
	}
	return freq
}

// parseDate reads a DATE value, YYYYMMDD, to its midnight in UTC.
func parseDate(v string) (time.Time, error) {
	if len(v) != 8 {
		return time.Time{}, fmt.Errorf("%q is not a date YYYYMMDD", truncate(v))
	}
	d, err := schedule.ParseDate(v[:4] + "-" + v[4:6] + "-" + v[6:])
	if err != nil {
		return time.Time{}, err
	}
	return d.UTCMidnight(), nil
}

// unescape undoes a TEXT value's escapes (RFC 5545 3.3.11).
func unescape(v string) string {
	r := strings.NewReplacer(`\n`, " ", `\N`, " ", `\,`, ",", `\;`, ";", `\\`, `\`)
	return r.Replace(v)
}

// truncate shortens a value quoted in an error, which reaches a status.
func truncate(v string) string {
	const most = 40
	if len(v) > most {
		return v[:most] + "..."
	}
	return v
}
