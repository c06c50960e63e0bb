// Package schedule computes how many replicas a weekly calendar asks for at a
// given instant, and when that will next change. It is pure: no Kubernetes
// client and no clock of its own, so the controller decides with an injected
// clock and the tests with any instant they like.
//
// # Rules and precedence
//
// A Calendar has a default count, windows of local wall-clock time on
// chosen weekdays, whole-day exceptions by local date, an override until an
// instant, and a scale-up lead time. The raw count at an instant t is, from
// the highest precedence down:
//
//  1. the override, while t is before its Until instant (exactly at Until it
//     no longer applies);
//  2. the exception whose date is t's local date. An exception governs its
//     whole local date and nothing beyond it: on that date no window
//     applies, not even the tail of one that started the day before; a
//     wrapping window that would have started on the exception date does
//     not, but its part after midnight lies on the next date and applies.
//     A window over days is cut the same way: an exception takes its date
//     out of the window, which applies again from the next midnight (so it
//     begins at the midnight after an exception on its start day, and ends
//     at the midnight that begins an exception on its end day);
//  3. the window holding t's local wall-clock time on the right weekday;
//  4. the default.
//
// Windows should not overlap and exception dates should not repeat
// (Validate rejects both); if they do anyway, the first one in list order
// wins, so the result is always defined. Windows that Validate rejects for
// being empty (Start == End) or out of range cover nothing.
//
// # Windows, weekdays and midnight
//
// A Window covers the local minutes [Start, End) of the weekdays in Days
// (every day when Days is 0). End <= Start wraps past midnight, and the
// window belongs to the day it starts on: Fri 22:00-02:00 covers Friday
// 22:00-24:00 and Saturday 00:00-02:00, but not Friday 00:00-02:00. End
// 00:00 means midnight: 19:00-00:00 ends when the day does. A v1 window of
// hours h1→h2 every day is the window "h1:00"-"h2:00" with Days 0, and
// behaves exactly as it did in v1, also across DST.
//
// A window over days (MultiDay) starts at Start on its one weekday in Days
// and ends at End on EndDay, the first such moment after it starts, so it
// lasts less than a week: Fri 18:00 to Mon 06:00 covers Friday from 18:00,
// Saturday and Sunday whole and Monday until 06:00, and wraps across the
// end of the week like any other day. Ending on its start day after Start
// makes it a window within that day; ending there before Start makes it
// last almost a week; ending exactly at Start (a whole week) is empty.
// Its minutes are the union of its per-day pieces, so the midnights inside
// it change nothing, and DST, skipped days and exceptions apply to it as to
// those pieces.
//
// # Wall-clock time decides, also across DST
//
// The raw count at an instant depends only on the override and on the local
// date, weekday and minute that instant has in the zone. Nothing else is
// remembered, so the answer never depends on when the controller last looked
// or whether it restarted. On the days the zone changes its offset:
//
//   - Skipped time (spring forward, 02:00 jumps to 03:00 in New York) never
//     happens. A window that starts in it starts at the first instant that
//     exists after it: 02:30-05:00 begins at 03:00. A window that lies
//     entirely in skipped time (02:00-02:30) does not apply that day at all,
//     and one that ends in it ends at the jump.
//   - Repeated time (fall back, 01:00-01:59 happens twice in New York)
//     belongs to its window both times: a window 01:30-02:00 applies twice
//     that night, from the first 01:30 to the jump and again from the second
//     01:30 to 02:00; a window 01:00-02:00 lasts two real hours, and a
//     window 00:00-01:00 ends at the first 01:00 and does not start again at
//     the second. Nothing changes at the instant the clock falls back unless
//     the wall-clock time it falls back to is governed by another rule.
//   - The same holds for offset changes that are not whole hours
//     (Australia/Lord_Howe, Pacific/Chatham) and for those at midnight
//     (America/Santiago), where the local date, and with it an exception,
//     can end and begin again.
//
// # Scale-up lead time
//
// With LeadTime L, the effective count at t is the largest raw count at any
// instant in [t, t+L]. A scale-up at T is therefore applied at T-L
// (Result.Early is true and Result.Rule names the rule that takes over at T;
// when several upcoming rules share the largest count, the earliest), while
// a scale-down happens exactly on time, unless a scale-up follows within L,
// which keeps the capacity. This holds for every rule alike: a scale-up at
// an override's Until or an exception's midnight is applied early too, even
// while the override or exception still holds. Lead times are capped at
// MaxLeadTime and
// negative ones count as 0 (Validate rejects both).
//
// # Next change
//
// Result.Next is the first instant after now at which the effective
// (Replicas, Rule, Early) changes, exactly, so that the controller can sleep
// until then; the zero time means never (no windows, and no exception date
// or override instant ahead). It is found without polling, by visiting in
// order only the instants at which something can change: window boundaries
// and exception midnights as local wall-clock times within each of the
// zone's offset periods, the zone's offset changes (where skipped time
// starts windows and repeated time restarts them), the override's Until, and
// each of those shifted back by the lead time. The search stops at the first
// change, and far-away dates are reached directly: with no windows, the next
// exception date's midnight or the override's Until is computed rather than
// walked to. With windows, a change comes within 8 days of local time after
// the later of now, the override's Until and the current exception date, as
// the weekly pattern repeats (within 15 days if a DST jump swallows the one
// window that differs that week). At therefore visits a handful of
// candidate instants for a typical calendar (about a microsecond) and at
// most a few thousand within the API's limits of 64 windows, 400 exceptions
// and a lead time of 24 hours (well under a millisecond), and it allocates
// nothing unless more than 32 raw changes fall within the lead time. A
// search that would need more than an internal budget of steps, which only
// calendars far beyond the API's limits can reach, reports the zero time.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// The zone database is compiled in, so that time zones resolve the same in
	// a distroless image as on a workstation.
	_ "time/tzdata"
)

// MinutesPerDay is the number of minutes in a local day; clock times are
// minutes in [0, MinutesPerDay).
const MinutesPerDay = 24 * 60

// MaxLeadTime is the longest scale-up lead time, as the API allows. At caps
// longer ones at it; Validate rejects them.
const MaxLeadTime = 24 * time.Hour

// ParseClock parses a local time of day written "HH:MM" (00:00 to 23:59,
// two digits each) into minutes after midnight: "08:30" is 510.
func ParseClock(s string) (int, error) {
	if len(s) != 5 || s[2] != ':' || !digits(s[:2]) || !digits(s[3:]) {
		return 0, fmt.Errorf("invalid time %q: want HH:MM, 00:00 to 23:59", s)
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, fmt.Errorf("invalid time %q: want HH:MM, 00:00 to 23:59", s)
	}
	return h*60 + m, nil
}

// FormatClock writes minutes after midnight as "HH:MM": 510 is "08:30".
// Values outside [0, MinutesPerDay) are written the same way (1500 is
// "25:00", -30 is "-00:30") so that messages about them stay readable.
func FormatClock(m int) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%02d:%02d", sign, m/60, m%60)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Date is a local calendar date, as exceptions name them.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses a date written "YYYY-MM-DD" (four, two and two digits)
// that exists in the calendar: "2026-02-30" is an error.
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !digits(s[:4]) || !digits(s[5:7]) || !digits(s[8:]) {
		return Date{}, fmt.Errorf("invalid date %q: want YYYY-MM-DD", s)
	}
	d := Date{
		Year:  int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0'),
		Month: time.Month(int(s[5]-'0')*10 + int(s[6]-'0')),
		Day:   int(s[8]-'0')*10 + int(s[9]-'0'),
	}
	if !d.Valid() {
		return Date{}, fmt.Errorf("invalid date %q: no such day", s)
	}
	return d, nil
}

// Valid reports whether d is a day of the (proleptic Gregorian) calendar
// with a year from 0 to 9999, the dates ParseDate accepts.
func (d Date) Valid() bool {
	return d.Year >= 0 && d.Year <= 9999 && d.Month >= time.January && d.Month <= time.December &&
		d.Day >= 1 && d.Day <= daysIn(d.Year, d.Month)
}

func daysIn(year int, month time.Month) int {
	switch month {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// UTCMidnight is the date's start in UTC: a day to compare and step
// through, apart from any time zone.
func (d Date) UTCMidnight() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// String is the date as "YYYY-MM-DD".
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// weekOrder is the order weekdays are written in: Monday first.
var weekOrder = [7]time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

var dayNames = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// ParseWeekday parses a weekday as the API writes it, "Mon" to "Sun".
func ParseWeekday(s string) (time.Weekday, error) {
	for d, name := range dayNames {
		if s == name {
			return time.Weekday(d), nil
		}
	}
	return 0, fmt.Errorf("unknown weekday %q: want Mon, Tue, Wed, Thu, Fri, Sat or Sun", s)
}

// Weekdays is a set of weekdays, bit 1<<d for time.Weekday d. The empty set,
// 0, means every day; bits above Saturday are ignored (Validate rejects
// them).
type Weekdays uint8

// EveryDay has all seven days set. It behaves like 0.
const EveryDay Weekdays = 1<<7 - 1

// NewWeekdays is the set of the given days.
func NewWeekdays(days ...time.Weekday) Weekdays {
	var w Weekdays
	for _, d := range days {
		w |= 1 << (uint(d) % 7)
	}
	return w
}

// Has reports whether d is in the set; every day is in the empty set.
func (w Weekdays) Has(d time.Weekday) bool {
	return w&EveryDay == 0 || w&(1<<(uint(d)%7)) != 0
}

// String writes the days in week order Monday to Sunday, runs of three or
// more consecutive days as ranges: "Mon-Fri", "Mon,Wed,Sat", "Sat,Sun",
// "every day".
func (w Weekdays) String() string {
	w &= EveryDay
	if w == 0 || w == EveryDay {
		return "every day"
	}
	var b strings.Builder
	for i := 0; i < 7; {
		if !w.Has(weekOrder[i]) {
			i++
			continue
		}
		j := i
		for j+1 < 7 && w.Has(weekOrder[j+1]) {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		switch {
		case j-i >= 2:
			b.WriteString(dayNames[weekOrder[i]] + "-" + dayNames[weekOrder[j]])
		case j == i+1:
			b.WriteString(dayNames[weekOrder[i]] + "," + dayNames[weekOrder[j]])
		default:
			b.WriteString(dayNames[weekOrder[i]])
		}
		i = j + 1
	}
	return b.String()
}

// Window is a span of local wall-clock time [Start, End) on the weekdays it
// starts on, or, with MultiDay, from Start on its one start day to End on
// EndDay; see the package documentation for wrap-around and DST.
type Window struct {
	// Days are the weekdays the window starts on; 0 means every day. A
	// MultiDay window starts on exactly one day.
	Days Weekdays
	// Start and End are minutes after local midnight, 0 to 1439 (see
	// ParseClock). Without MultiDay, End <= Start wraps past midnight and
	// End == Start is empty.
	Start, End int
	// MultiDay makes the window end at End on EndDay, the first such
	// moment after it starts: Fri 18:00 to Mon 06:00 lasts 60 hours. It
	// lasts less than a week; ending on its start day at Start is empty.
	MultiDay bool
	// EndDay is the weekday a MultiDay window ends on.
	EndDay time.Weekday
	// Replicas is the count while the window applies.
	Replicas int32
}

// String is the window as users read it: "Mon-Fri 08:30-18:00",
// "every day 09:00-17:00", "Mon,Wed,Sat 10:00-12:00", "Fri 18:00-Mon 06:00".
func (w Window) String() string {
	if w.MultiDay {
		end := fmt.Sprintf("day(%d)", int(w.EndDay))
		if w.EndDay >= time.Sunday && w.EndDay <= time.Saturday {
			end = dayNames[w.EndDay]
		}
		return w.Days.String() + " " + FormatClock(w.Start) + "-" + end + " " + FormatClock(w.End)
	}
	return w.Days.String() + " " + FormatClock(w.Start) + "-" + FormatClock(w.End)
}

// startDay is the one weekday a MultiDay window starts on; ok is false
// when Days does not hold exactly one.
func (w Window) startDay() (time.Weekday, bool) {
	days := w.Days & EveryDay
	if days == 0 || days&(days-1) != 0 {
		return 0, false
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if days == 1<<d {
			return d, true
		}
	}
	return 0, false
}

// valid reports whether the window's times are in range and it covers
// something; other windows cover nothing.
func (w Window) valid() bool {
	if w.Start < 0 || w.Start >= MinutesPerDay || w.End < 0 || w.End >= MinutesPerDay {
		return false
	}
	if !w.MultiDay {
		return w.Start != w.End
	}
	s, ok := w.startDay()
	return ok && w.EndDay >= time.Sunday && w.EndDay <= time.Saturday && (s != w.EndDay || w.Start != w.End)
}

// covers reports whether the window holds minute m of a day with weekday
// wd: its own part on a day it starts on, or the part of one that started
// on an earlier day.
func (w Window) covers(wd time.Weekday, m int) bool {
	s, n := spans(w, wd)
	for _, x := range s[:n] {
		if m >= x[0] && m < x[1] {
			return true
		}
	}
	return false
}

// Exception is a whole local date with its own count.
type Exception struct {
	// Date is the local date the exception governs.
	Date Date
	// Replicas is the count on that date.
	Replicas int32
	// Source, when set, names where the exception comes from (a calendar
	// and its entry); Describe shows it before the date instead of
	// "exception".
	Source string
}

// Override sets the count until an instant.
type Override struct {
	// Replicas is the count before Until.
	Replicas int32
	// Until is the first instant the override no longer applies.
	Until time.Time
}

// Calendar is a weekly schedule in a time zone; see the package
// documentation for how its parts combine.
type Calendar struct {
	// Location is the zone of the windows and exception dates; nil is UTC.
	Location *time.Location
	// Default is the count when nothing else applies.
	Default int32
	// Windows are the parts of the week with their own count.
	Windows []Window
	// Exceptions are whole local dates with their own count.
	Exceptions []Exception
	// Override, when not nil, sets the count until its instant.
	Override *Override
	// LeadTime applies scale-ups this much early; 0 to MaxLeadTime.
	LeadTime time.Duration
}

// RuleKind is the kind of rule that sets a count.
type RuleKind int

const (
	// RuleDefault is the calendar's default count.
	RuleDefault RuleKind = iota
	// RuleWindow is a window; Rule.Index is its index in Calendar.Windows.
	RuleWindow
	// RuleException is an exception; Rule.Index is its index in
	// Calendar.Exceptions.
	RuleException
	// RuleOverride is the override.
	RuleOverride
)

// String is the kind's name: "default", "window", "exception", "override".
func (k RuleKind) String() string {
	switch k {
	case RuleDefault:
		return "default"
	case RuleWindow:
		return "window"
	case RuleException:
		return "exception"
	case RuleOverride:
		return "override"
	}
	return fmt.Sprintf("RuleKind(%d)", int(k))
}

// Rule names what sets a count. The zero Rule is the default.
type Rule struct {
	// Kind is the kind of rule.
	Kind RuleKind
	// Index is the index in Calendar.Windows or Calendar.Exceptions for
	// RuleWindow and RuleException, and 0 otherwise.
	Index int
}

// Describe names a rule for users, as the status shows it: "window Mon-Fri
// 08:30-18:00", "exception 2026-12-25", "override until
// 2026-11-30T18:00:00Z", "defaultReplicas".
func (c *Calendar) Describe(r Rule) string {
	switch r.Kind {
	case RuleDefault:
		return "defaultReplicas"
	case RuleWindow:
		if r.Index >= 0 && r.Index < len(c.Windows) {
			return "window " + c.Windows[r.Index].String()
		}
	case RuleException:
		if r.Index >= 0 && r.Index < len(c.Exceptions) {
			x := c.Exceptions[r.Index]
			if x.Source != "" {
				return x.Source + " " + x.Date.String()
			}
			return "exception " + x.Date.String()
		}
	case RuleOverride:
		if c.Override != nil {
			return "override until " + c.Override.Until.UTC().Format(time.RFC3339)
		}
	}
	return fmt.Sprintf("%s #%d", r.Kind, r.Index)
}

// Validate reports, joined with errors.Join, everything a user must fix:
// times out of range, empty windows, unknown weekday bits, a window over
// days without exactly one start day or with an unknown end day, windows
// that overlap on a weekday (a wrapping window's tail counts on the next
// day, a window over days on every day it holds),
// invalid or repeated exception dates, negative replica counts and a lead
// time outside 0 to MaxLeadTime. The messages name windows by their String
// and are meant to be shown to users as they are.
func (c *Calendar) Validate() error {
	var errs []error
	if c.Default < 0 {
		errs = append(errs, errors.New("defaultReplicas must not be negative"))
	}
	for _, w := range c.Windows {
		start, oneDay := w.startDay()
		switch {
		case w.Start < 0 || w.Start >= MinutesPerDay || w.End < 0 || w.End >= MinutesPerDay:
			errs = append(errs, fmt.Errorf("window %s: times must be 00:00 to 23:59", w))
		case !w.MultiDay && w.Start == w.End:
			errs = append(errs, fmt.Errorf("window %s is empty: start and end must differ", w))
		case w.MultiDay && (w.EndDay < time.Sunday || w.EndDay > time.Saturday):
			errs = append(errs, fmt.Errorf("window %s: unknown end day %d", w, int(w.EndDay)))
		case w.MultiDay && !oneDay:
			errs = append(errs, fmt.Errorf("window %s: a window with an end day starts on exactly one day", w))
		case w.MultiDay && start == w.EndDay && w.Start == w.End:
			errs = append(errs, fmt.Errorf("window %s is empty: it ends on the day and at the time it starts (a window lasts less than a week)", w))
		}
		if w.Days&^EveryDay != 0 {
			errs = append(errs, fmt.Errorf("window %s: unknown weekday bits %#x", w, uint8(w.Days&^EveryDay)))
		}
		if w.Replicas < 0 {
			errs = append(errs, fmt.Errorf("window %s: replicas must not be negative", w))
		}
	}
	for i, a := range c.Windows {
		for _, b := range c.Windows[i+1:] {
			if days := overlapDays(a, b); days != 0 {
				errs = append(errs, fmt.Errorf("windows %s and %s overlap on %s", a, b, days))
			}
		}
	}
	seen := make(map[Date]int, len(c.Exceptions))
	for _, e := range c.Exceptions {
		if !e.Date.Valid() {
			errs = append(errs, fmt.Errorf("exception date %s is not a valid date", e.Date))
			continue
		}
		seen[e.Date]++
		if seen[e.Date] == 2 {
			errs = append(errs, fmt.Errorf("exception date %s appears twice", e.Date))
		}
		if e.Replicas < 0 {
			errs = append(errs, fmt.Errorf("exception %s: replicas must not be negative", e.Date))
		}
	}
	if c.Override != nil && c.Override.Replicas < 0 {
		errs = append(errs, errors.New("override: replicas must not be negative"))
	}
	if c.LeadTime < 0 {
		errs = append(errs, errors.New("scaleUpLeadTime must not be negative"))
	} else if c.LeadTime > MaxLeadTime {
		errs = append(errs, fmt.Errorf("scaleUpLeadTime must be at most %s", MaxLeadTime))
	}
	return errors.Join(errs...)
}

// overlapDays is the set of weekdays on which the two windows hold a common
// minute, where a wrapping window's tail lies on the day after it starts.
// Windows that cover nothing overlap nothing.
func overlapDays(a, b Window) Weekdays {
	var days Weekdays
	for d := time.Sunday; d <= time.Saturday; d++ {
		as, an := spans(a, d)
		bs, bn := spans(b, d)
		for _, x := range as[:an] {
			for _, y := range bs[:bn] {
				if x[0] < y[1] && y[0] < x[1] {
					days |= 1 << d
				}
			}
		}
	}
	return days
}

// spans are the minute ranges [from, to) the window covers on weekday d:
// at most two, the end of one that started earlier and the start of one
// that starts on d.
func spans(w Window, d time.Weekday) (s [2][2]int, n int) {
	if !w.valid() {
		return s, 0
	}
	if w.MultiDay {
		// Days after the start day, 0 to 6; the window ends on day last,
		// 7 when it ends on its start day a week later.
		start, _ := w.startDay()
		k, last := (d-start+7)%7, (w.EndDay-start+7)%7
		if last == 0 && w.End > w.Start {
			// It ends on its start day, later: a window of one day.
			if k == 0 {
				s[n], n = [2]int{w.Start, w.End}, n+1
			}
			return s, n
		}
		if last == 0 {
			last = 7
		}
		switch {
		case k == 0:
			if last == 7 && w.End > 0 {
				s[n], n = [2]int{0, w.End}, n+1
			}
			s[n], n = [2]int{w.Start, MinutesPerDay}, n+1
		case k < last:
			s[n], n = [2]int{0, MinutesPerDay}, n+1
		case k == last && w.End > 0:
			s[n], n = [2]int{0, w.End}, n+1
		}
		return s, n
	}
	if w.Start < w.End {
		if w.Days.Has(d) {
			s[n], n = [2]int{w.Start, w.End}, n+1
		}
		return s, n
	}
	if w.Days.Has(d) {
		s[n], n = [2]int{w.Start, MinutesPerDay}, n+1
	}
	if w.End > 0 && w.Days.Has((d+6)%7) {
		s[n], n = [2]int{0, w.End}, n+1
	}
	return s, n
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

// Counts is the lowest and the highest count any rule of the calendar
// sets: the largest scale-up it can ask for, for a caller that must
// prepare one ahead (a lead time estimated from how fast the target
// grows). Exceptions count whatever their date, and the override
// whatever its instant.
func (c *Calendar) Counts() (lowest, highest int32) {
	lowest, highest = c.Default, c.Default
	see := func(n int32) {
		lowest, highest = min(lowest, n), max(highest, n)
	}
	for _, w := range c.Windows {
		see(w.Replicas)
	}
	for _, e := range c.Exceptions {
		see(e.Replicas)
	}
	if c.Override != nil {
		see(c.Override.Replicas)
	}
	return lowest, highest
}
