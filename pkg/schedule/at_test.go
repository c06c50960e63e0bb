package schedule_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// atCase is one call of At and everything it should return. next "" means
// the count never changes again.
type atCase struct {
	name      string
	zone      string
	cal       schedule.Calendar
	now       string
	replicas  int32
	rule      schedule.Rule
	early     bool
	next      string
	nextRep   int32
	nextRule  schedule.Rule
	nextEarly bool
}

func runAt(t *testing.T, cases []atCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cal := tc.cal
			if tc.zone != "" {
				cal.Location = mustZone(t, tc.zone)
			}
			got := cal.At(utc(t, tc.now))
			g.Expect(got.Replicas).To(Equal(tc.replicas), "replicas")
			g.Expect(got.Rule).To(Equal(tc.rule), "rule %s", cal.Describe(got.Rule))
			g.Expect(got.Early).To(Equal(tc.early), "early")
			if tc.next == "" {
				g.Expect(got.Next.IsZero()).To(BeTrue(), "never changes, but Next is %s", got.Next)
				g.Expect([]any{got.NextReplicas, got.NextRule, got.NextEarly}).To(Equal([]any{got.Replicas, got.Rule, got.Early}))
				return
			}
			g.Expect(got.Next.UTC()).To(Equal(utc(t, tc.next)), "next, local %s", got.Next)
			if cal.Location != nil {
				g.Expect(got.Next.Location()).To(Equal(cal.Location), "next is in the calendar's zone")
			}
			g.Expect(got.NextReplicas).To(Equal(tc.nextRep), "next replicas")
			g.Expect(got.NextRule).To(Equal(tc.nextRule), "next rule %s", cal.Describe(got.NextRule))
			g.Expect(got.NextEarly).To(Equal(tc.nextEarly), "next early")
		})
	}
}

// 2026-03-09 is a Monday.
func TestAtPrecedence(t *testing.T) {
	office := []schedule.Window{win(t, "Mon-Fri", "08:00", "18:00", 5)}
	holiday := []schedule.Exception{exc(t, "2026-03-11", 2)}
	until := func(s string, n int32) *schedule.Override { return &schedule.Override{Replicas: n, Until: utc(t, s)} }
	full := schedule.Calendar{Default: 1, Windows: office, Exceptions: holiday, Override: until("2026-03-09T12:00:00Z", 9)}
	overHoliday := full
	overHoliday.Override = until("2026-03-11T12:00:00Z", 9)
	sameCount := full
	sameCount.Override = until("2026-03-09T12:00:00Z", 5)
	runAt(t, []atCase{
		{name: "override before its instant", cal: full, now: "2026-03-09T10:00:00Z", replicas: 9, rule: ovr, next: "2026-03-09T12:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "override in its last nanosecond", cal: full, now: "2026-03-09T11:59:59.999999999Z", replicas: 9, rule: ovr, next: "2026-03-09T12:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "exactly at Until the override stops", cal: full, now: "2026-03-09T12:00:00Z", replicas: 5, rule: wr(0), next: "2026-03-09T18:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "override beats an exception", cal: overHoliday, now: "2026-03-11T10:00:00Z", replicas: 9, rule: ovr, next: "2026-03-11T12:00:00Z", nextRep: 2, nextRule: er(0)},
		{name: "a new rule with the same count is a change", cal: sameCount, now: "2026-03-09T10:00:00Z", replicas: 5, rule: ovr, next: "2026-03-09T12:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "an exception beats windows all day", cal: full, now: "2026-03-11T10:00:00Z", replicas: 2, rule: er(0), next: "2026-03-12T00:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "an exception begins at local midnight", cal: full, now: "2026-03-10T23:00:00Z", replicas: 1, rule: dflt, next: "2026-03-11T00:00:00Z", nextRep: 2, nextRule: er(0)},
		{name: "after the exception windows apply again", cal: full, now: "2026-03-12T00:00:00Z", replicas: 1, rule: dflt, next: "2026-03-12T08:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "window on a weekday", cal: full, now: "2026-03-10T17:59:59Z", replicas: 5, rule: wr(0), next: "2026-03-10T18:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "default at the weekend, next on Monday", cal: full, now: "2026-03-14T10:00:00Z", replicas: 1, rule: dflt, next: "2026-03-16T08:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "overlapping windows: the first wins", cal: schedule.Calendar{Default: 3, Windows: []schedule.Window{win(t, "", "09:00", "17:00", 5), win(t, "", "10:00", "12:00", 1)}},
			now: "2026-03-10T11:00:00Z", replicas: 5, rule: wr(0), next: "2026-03-10T17:00:00Z", nextRep: 3, nextRule: dflt},
		{name: "repeated exception date: the first wins", cal: schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2026-03-11", 2), exc(t, "2026-03-11", 4)}},
			now: "2026-03-11T10:00:00Z", replicas: 2, rule: er(0), next: "2026-03-12T00:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "nil location is UTC", cal: schedule.Calendar{Default: 1, Windows: office}, now: "2026-03-09T07:59:00Z", replicas: 1, rule: dflt, next: "2026-03-09T08:00:00Z", nextRep: 5, nextRule: wr(0)},
	})
}

// 2026-03-13 is a Friday.
func TestAtAcrossMidnight(t *testing.T) {
	night := []schedule.Window{win(t, "Fri", "22:00", "02:00", 4)}
	plain := schedule.Calendar{Default: 1, Windows: night}
	satHoliday := schedule.Calendar{Default: 1, Windows: night, Exceptions: []schedule.Exception{exc(t, "2026-03-14", 2)}}
	friHoliday := schedule.Calendar{Default: 1, Windows: night, Exceptions: []schedule.Exception{exc(t, "2026-03-13", 2)}}
	runAt(t, []atCase{
		{name: "Friday night", cal: plain, now: "2026-03-13T23:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-14T02:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "the tail on Saturday belongs to Friday's window", cal: plain, now: "2026-03-14T01:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-14T02:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Friday early morning is Thursday's night: no window", cal: plain, now: "2026-03-13T01:00:00Z", replicas: 1, rule: dflt, next: "2026-03-13T22:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "Saturday night: next Friday", cal: plain, now: "2026-03-14T22:30:00Z", replicas: 1, rule: dflt, next: "2026-03-20T22:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "an exception on Saturday cuts the tail", cal: satHoliday, now: "2026-03-13T23:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-14T00:00:00Z", nextRep: 2, nextRule: er(0)},
		{name: "and governs all of Saturday", cal: satHoliday, now: "2026-03-14T01:00:00Z", replicas: 2, rule: er(0), next: "2026-03-15T00:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "an exception on Friday: the tail on Saturday still applies", cal: friHoliday, now: "2026-03-13T23:00:00Z", replicas: 2, rule: er(0), next: "2026-03-14T00:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "a window ending at 00:00 ends at midnight", cal: schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "Mon", "19:00", "00:00", 3)}},
			now: "2026-03-09T23:59:59Z", replicas: 3, rule: wr(0), next: "2026-03-10T00:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "a window starting at 00:00 starts at midnight", cal: schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "Tue", "00:00", "01:00", 3)}},
			now: "2026-03-09T23:30:00Z", replicas: 1, rule: dflt, next: "2026-03-10T00:00:00Z", nextRep: 3, nextRule: wr(0)},
		{name: "adjacent windows across midnight", cal: schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "Mon", "20:00", "00:00", 3), win(t, "Tue", "00:00", "06:00", 2)}},
			now: "2026-03-09T21:00:00Z", replicas: 3, rule: wr(0), next: "2026-03-10T00:00:00Z", nextRep: 2, nextRule: wr(1)},
	})
}

func TestAtExceptionsInLocalDate(t *testing.T) {
	xmas := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2026-12-25", 0)}}
	apr4 := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2026-04-04", 0)}}
	apr5 := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2026-04-05", 0)}}
	sep6 := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2026-09-06", 0)}}
	runAt(t, []atCase{
		{name: "Dec 24 in UTC is Dec 25 in Auckland", zone: "Pacific/Auckland", cal: xmas, now: "2026-12-24T12:00:00Z", replicas: 0, rule: er(0), next: "2026-12-25T11:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Auckland's Dec 25 begins at its midnight", zone: "Pacific/Auckland", cal: xmas, now: "2026-12-24T10:30:00Z", replicas: 1, rule: dflt, next: "2026-12-24T11:00:00Z", nextRep: 0, nextRule: er(0)},
		{name: "Dec 25 in UTC is still Dec 24 in New York", zone: "America/New_York", cal: xmas, now: "2026-12-25T03:00:00Z", replicas: 1, rule: dflt, next: "2026-12-25T05:00:00Z", nextRep: 0, nextRule: er(0)},
		// Santiago falls back at its midnight: Apr 4 23:59:59 -03 is followed by Apr 4 23:00 -04.
		{name: "Santiago: the repeated hour belongs to the exception date", zone: "America/Santiago", cal: apr4, now: "2026-04-05T02:30:00Z", replicas: 0, rule: er(0), next: "2026-04-05T04:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Santiago: the next date begins after the repeated hour", zone: "America/Santiago", cal: apr5, now: "2026-04-05T02:30:00Z", replicas: 1, rule: dflt, next: "2026-04-05T04:00:00Z", nextRep: 0, nextRule: er(0)},
		// Santiago springs forward at its midnight: Sep 5 23:59:59 -04 is followed by Sep 6 01:00 -03.
		{name: "Santiago: a date whose midnight is skipped begins at the jump", zone: "America/Santiago", cal: sep6, now: "2026-09-06T03:30:00Z", replicas: 1, rule: dflt, next: "2026-09-06T04:00:00Z", nextRep: 0, nextRule: er(0)},
		{name: "Santiago: and ends at its midnight", zone: "America/Santiago", cal: sep6, now: "2026-09-06T04:00:00Z", replicas: 0, rule: er(0), next: "2026-09-07T03:00:00Z", nextRep: 1, nextRule: dflt},
	})
}

// New York springs forward on 2026-03-08 at 07:00Z (02:00 EST becomes 03:00
// EDT) and falls back on 2026-11-01 at 06:00Z (02:00 EDT becomes 01:00 EST),
// both Sundays.
func TestAtDSTMinutes(t *testing.T) {
	one := func(w schedule.Window) schedule.Calendar {
		return schedule.Calendar{Default: 1, Windows: []schedule.Window{w}}
	}
	spring := one(win(t, "Sun", "02:30", "05:00", 7))
	skipped := one(win(t, "Sun", "02:00", "02:30", 7))
	twice := one(win(t, "Sun", "01:30", "02:00", 9))
	runAt(t, []atCase{
		{name: "spring: a window starting in skipped time starts at the jump", zone: "America/New_York", cal: spring, now: "2026-03-08T06:30:00Z", replicas: 1, rule: dflt, next: "2026-03-08T07:00:00Z", nextRep: 7, nextRule: wr(0)},
		{name: "spring: and ends on time", zone: "America/New_York", cal: spring, now: "2026-03-08T07:00:00Z", replicas: 7, rule: wr(0), next: "2026-03-08T09:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "spring: a window within skipped time waits a week", zone: "America/New_York", cal: skipped, now: "2026-03-08T06:30:00Z", replicas: 1, rule: dflt, next: "2026-03-15T06:00:00Z", nextRep: 7, nextRule: wr(0)},
		{name: "spring: a week before, it applies", zone: "America/New_York", cal: skipped, now: "2026-03-01T07:00:00Z", replicas: 7, rule: wr(0), next: "2026-03-01T07:30:00Z", nextRep: 1, nextRule: dflt},
		{name: "fall: the first 01:30", zone: "America/New_York", cal: twice, now: "2026-11-01T05:00:00Z", replicas: 1, rule: dflt, next: "2026-11-01T05:30:00Z", nextRep: 9, nextRule: wr(0)},
		{name: "fall: the clock falls back to 01:00 before the window ends", zone: "America/New_York", cal: twice, now: "2026-11-01T05:30:00Z", replicas: 9, rule: wr(0), next: "2026-11-01T06:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "fall: the second 01:30", zone: "America/New_York", cal: twice, now: "2026-11-01T06:00:00Z", replicas: 1, rule: dflt, next: "2026-11-01T06:30:00Z", nextRep: 9, nextRule: wr(0)},
		{name: "fall: the window ends at 02:00 EST", zone: "America/New_York", cal: twice, now: "2026-11-01T06:30:00Z", replicas: 9, rule: wr(0), next: "2026-11-01T07:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Lord Howe: 02:00-02:20 lies in its 30 skipped minutes", zone: "Australia/Lord_Howe", cal: one(win(t, "", "02:00", "02:20", 6)), now: "2026-10-03T15:00:00Z", replicas: 1, rule: dflt, next: "2026-10-04T15:00:00Z", nextRep: 6, nextRule: wr(0)},
		{name: "Chatham: 03:15-03:30 happens twice, first at +13:45", zone: "Pacific/Chatham", cal: one(win(t, "", "03:15", "03:30", 6)), now: "2026-04-04T13:30:00Z", replicas: 6, rule: wr(0), next: "2026-04-04T13:45:00Z", nextRep: 1, nextRule: dflt},
		{name: "Chatham: the second time", zone: "Pacific/Chatham", cal: one(win(t, "", "03:15", "03:30", 6)), now: "2026-04-04T14:00:00Z", replicas: 1, rule: dflt, next: "2026-04-04T14:30:00Z", nextRep: 6, nextRule: wr(0)},
	})
}

func TestAtLeadTime(t *testing.T) {
	office := schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "Mon-Fri", "08:00", "18:00", 5)}, LeadTime: 30 * time.Minute}
	gap := schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "", "08:00", "12:00", 5), win(t, "", "12:15", "14:00", 3)}, LeadTime: 30 * time.Minute}
	peak := schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "", "08:00", "12:00", 3), win(t, "", "12:10", "13:00", 5)}, LeadTime: 30 * time.Minute}
	overrideEnds := office
	overrideEnds.Override = &schedule.Override{Replicas: 0, Until: utc(t, "2026-03-09T12:00:00Z")}
	ahead := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2027-03-10", 4)}, LeadTime: time.Hour}
	runAt(t, []atCase{
		{name: "before the lead time", cal: office, now: "2026-03-09T07:00:00Z", replicas: 1, rule: dflt, next: "2026-03-09T07:30:00Z", nextRep: 5, nextRule: wr(0), nextEarly: true},
		{name: "a scale-up is applied early", cal: office, now: "2026-03-09T07:30:00Z", replicas: 5, rule: wr(0), early: true, next: "2026-03-09T08:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "a scale-down happens on time", cal: office, now: "2026-03-09T17:59:00Z", replicas: 5, rule: wr(0), next: "2026-03-09T18:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Friday evening: next early on Monday", cal: office, now: "2026-03-13T18:00:00Z", replicas: 1, rule: dflt, next: "2026-03-16T07:30:00Z", nextRep: 5, nextRule: wr(0), nextEarly: true},
		{name: "a scale-up within the lead time keeps capacity at a scale-down", cal: gap, now: "2026-03-10T11:00:00Z", replicas: 5, rule: wr(0), next: "2026-03-10T12:00:00Z", nextRep: 3, nextRule: wr(1), nextEarly: true},
		{name: "the kept capacity becomes the window on time", cal: gap, now: "2026-03-10T12:00:00Z", replicas: 3, rule: wr(1), early: true, next: "2026-03-10T12:15:00Z", nextRep: 3, nextRule: wr(1)},
		{name: "a larger window comes into view during a smaller one", cal: peak, now: "2026-03-10T11:00:00Z", replicas: 3, rule: wr(0), next: "2026-03-10T11:40:00Z", nextRep: 5, nextRule: wr(1), nextEarly: true},
		{name: "a scale-up at the override's end is applied early too", cal: overrideEnds, now: "2026-03-09T11:00:00Z", replicas: 0, rule: ovr, next: "2026-03-09T11:30:00Z", nextRep: 5, nextRule: wr(0), nextEarly: true},
		{name: "an exception a year ahead, early", cal: ahead, now: "2026-03-10T10:00:00Z", replicas: 1, rule: dflt, next: "2027-03-09T23:00:00Z", nextRep: 4, nextRule: er(0), nextEarly: true},
		{name: "lead time beyond MaxLeadTime is capped", cal: schedule.Calendar{Default: 1, Windows: office.Windows, LeadTime: 100 * time.Hour}, now: "2026-03-13T18:00:00Z", replicas: 1, rule: dflt, next: "2026-03-15T08:00:00Z", nextRep: 5, nextRule: wr(0), nextEarly: true},
		{name: "negative lead time counts as 0", cal: schedule.Calendar{Default: 1, Windows: office.Windows, LeadTime: -time.Hour}, now: "2026-03-09T07:00:00Z", replicas: 1, rule: dflt, next: "2026-03-09T08:00:00Z", nextRep: 5, nextRule: wr(0)},
	})
}

func TestAtNextFarAhead(t *testing.T) {
	ahead := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2027-03-10", 4)}}
	last := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "9999-12-31", 4)}}
	past := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2025-12-25", 4)}, Override: &schedule.Override{Replicas: 3, Until: utc(t, "2026-01-01T00:00:00Z")}}
	long := schedule.Calendar{Default: 1, Override: &schedule.Override{Replicas: 3, Until: utc(t, "9999-01-01T00:00:00Z")}}
	daily := schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "", "12:00", "13:00", 3)}}
	newYear := schedule.Calendar{Default: 1, Exceptions: []schedule.Exception{exc(t, "2041-01-01", 4)}}
	sunday := schedule.Calendar{Default: 1, Windows: []schedule.Window{win(t, "Sun", "02:30", "05:00", 7)}}
	runAt(t, []atCase{
		{name: "an exception a year ahead: its midnight", cal: ahead, now: "2026-03-10T10:00:00Z", replicas: 1, rule: dflt, next: "2027-03-10T00:00:00Z", nextRep: 4, nextRule: er(0)},
		{name: "an exception a year ahead in New York", zone: "America/New_York", cal: ahead, now: "2026-03-10T10:00:00Z", replicas: 1, rule: dflt, next: "2027-03-10T05:00:00Z", nextRep: 4, nextRule: er(0)},
		{name: "an exception in 9999 in New York", zone: "America/New_York", cal: last, now: "2026-03-10T10:00:00Z", replicas: 1, rule: dflt, next: "9999-12-31T05:00:00Z", nextRep: 4, nextRule: er(0)},
		{name: "an exception in 9999 in Lord Howe", zone: "Australia/Lord_Howe", cal: last, now: "2026-03-10T10:00:00Z", replicas: 1, rule: dflt, next: "9999-12-30T13:00:00Z", nextRep: 4, nextRule: er(0)},
		{name: "nothing ahead: never", zone: "America/New_York", cal: past, now: "2026-03-10T10:00:00Z", replicas: 1, rule: dflt},
		{name: "only an exception today: never after it", zone: "America/New_York", cal: ahead, now: "2027-03-11T05:00:00Z", replicas: 1, rule: dflt},
		{name: "no windows at all: never", zone: "Asia/Kolkata", cal: schedule.Calendar{Default: 2}, now: "2026-03-10T10:10:00Z", replicas: 2, rule: dflt},
		{name: "an override until 9999", zone: "Europe/Berlin", cal: long, now: "2026-03-10T10:00:00Z", replicas: 3, rule: ovr, next: "9999-01-01T00:00:00Z", nextRep: 1, nextRule: dflt},
		// Go's ZoneBounds ends a zone period at Dec 31 00:00 UTC in leap years
		// beyond its transition table; the search must not stall there.
		{name: "Dec 31 of a leap year after 2037", zone: "America/New_York", cal: daily, now: "2040-12-31T06:00:00Z", replicas: 1, rule: dflt, next: "2040-12-31T17:00:00Z", nextRep: 3, nextRule: wr(0)},
		{name: "across Dec 31 of a leap year", zone: "America/New_York", cal: newYear, now: "2040-12-30T12:00:00Z", replicas: 1, rule: dflt, next: "2041-01-01T05:00:00Z", nextRep: 4, nextRule: er(0)},
		{name: "across Dec 31 of a leap year in Sydney", zone: "Australia/Sydney", cal: newYear, now: "2040-12-30T12:00:00Z", replicas: 1, rule: dflt, next: "2040-12-31T13:00:00Z", nextRep: 4, nextRule: er(0)},
		{name: "spring forward in 2044", zone: "America/New_York", cal: sunday, now: "2044-03-13T06:30:00Z", replicas: 1, rule: dflt, next: "2044-03-13T07:00:00Z", nextRep: 7, nextRule: wr(0)},
		{name: "far past, local mean time", zone: "Europe/Berlin", cal: daily, now: "1850-06-01T00:00:00Z", replicas: 1, rule: dflt, next: "1850-06-01T11:06:32Z", nextRep: 3, nextRule: wr(0)},
	})
}

// TestAtV1 is v1's table with its hour windows converted as the webhook
// does, h → "hh:00" every day: the counts and transitions are unchanged,
// except that Next is now always a real change (v1 capped it at 25 hours).
func TestAtV1(t *testing.T) {
	// original is the original operator's example schedule, default 3.
	original := []schedule.Window{hours(9, 17, 5), hours(17, 19, 3), hours(19, 0, 2), hours(1, 7, 2), hours(7, 9, 3)}
	cal := func(def int32, windows ...schedule.Window) schedule.Calendar {
		return schedule.Calendar{Default: def, Windows: windows}
	}
	orig := cal(3, original...)
	runAt(t, []atCase{
		// Plain UTC days with the original's schedule.
		{name: "office hours", zone: "UTC", cal: orig, now: "2026-03-10T10:00:00Z", replicas: 5, rule: wr(0), next: "2026-03-10T17:00:00Z", nextRep: 3, nextRule: wr(1)},
		{name: "just before a boundary", zone: "UTC", cal: orig, now: "2026-03-10T16:59:59.999Z", replicas: 5, rule: wr(0), next: "2026-03-10T17:00:00Z", nextRep: 3, nextRule: wr(1)},
		{name: "exactly on a boundary the new window applies", zone: "UTC", cal: orig, now: "2026-03-10T17:00:00Z", replicas: 3, rule: wr(1), next: "2026-03-10T19:00:00Z", nextRep: 2, nextRule: wr(2)},
		{name: "19-0 covers 23:00-23:59", zone: "UTC", cal: orig, now: "2026-03-10T23:00:00Z", replicas: 2, rule: wr(2), next: "2026-03-11T00:00:00Z", nextRep: 3, nextRule: dflt},
		{name: "19-0 ends at midnight", zone: "UTC", cal: orig, now: "2026-03-10T23:59:59Z", replicas: 2, rule: wr(2), next: "2026-03-11T00:00:00Z", nextRep: 3, nextRule: dflt},
		{name: "uncovered hour uses the default", zone: "UTC", cal: orig, now: "2026-03-11T00:30:00Z", replicas: 3, rule: dflt, next: "2026-03-11T01:00:00Z", nextRep: 2, nextRule: wr(3)},
		{name: "23-0 is schedulable", zone: "UTC", cal: cal(1, hours(23, 0, 4)), now: "2026-03-10T22:10:00Z", replicas: 1, rule: dflt, next: "2026-03-10T23:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "wrap 22-2 before midnight", zone: "UTC", cal: cal(1, hours(22, 2, 4)), now: "2026-03-10T22:00:00Z", replicas: 4, rule: wr(0), next: "2026-03-11T02:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "wrap 22-2 after midnight", zone: "UTC", cal: cal(1, hours(22, 2, 4)), now: "2026-03-11T01:59:00Z", replicas: 4, rule: wr(0), next: "2026-03-11T02:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "wrap 22-2 not yet", zone: "UTC", cal: cal(1, hours(22, 2, 4)), now: "2026-03-10T21:00:00Z", replicas: 1, rule: dflt, next: "2026-03-10T22:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "0-1 starts at midnight", zone: "UTC", cal: cal(1, hours(0, 1, 4)), now: "2026-03-10T23:30:00Z", replicas: 1, rule: dflt, next: "2026-03-11T00:00:00Z", nextRep: 4, nextRule: wr(0)},
		{name: "overlapping windows: the first wins", zone: "UTC", cal: cal(3, hours(9, 17, 5), hours(10, 12, 1)), now: "2026-03-10T11:00:00Z", replicas: 5, rule: wr(0), next: "2026-03-10T17:00:00Z", nextRep: 3, nextRule: dflt},

		// The zone's wall clock decides, also with ±30 and ±45 minute offsets.
		{name: "Europe/Berlin winter (+1)", zone: "Europe/Berlin", cal: orig, now: "2026-01-15T07:59:00Z", replicas: 3, rule: wr(4), next: "2026-01-15T08:00:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "Asia/Kolkata (+5:30)", zone: "Asia/Kolkata", cal: orig, now: "2026-03-10T03:29:00Z", replicas: 3, rule: wr(4), next: "2026-03-10T03:30:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "Asia/Kathmandu (+5:45)", zone: "Asia/Kathmandu", cal: orig, now: "2026-03-10T03:14:00Z", replicas: 3, rule: wr(4), next: "2026-03-10T03:15:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "Australia/Eucla (+8:45)", zone: "Australia/Eucla", cal: orig, now: "2026-03-10T00:14:00Z", replicas: 3, rule: wr(4), next: "2026-03-10T00:15:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "Pacific/Chatham summer (+13:45)", zone: "Pacific/Chatham", cal: orig, now: "2026-03-09T19:00:00Z", replicas: 3, rule: wr(4), next: "2026-03-09T19:15:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "America/St_Johns winter (-3:30)", zone: "America/St_Johns", cal: orig, now: "2026-01-15T12:29:00Z", replicas: 3, rule: wr(4), next: "2026-01-15T12:30:00Z", nextRep: 5, nextRule: wr(0)},
		{name: "America/St_Johns wrap at local midnight", zone: "America/St_Johns", cal: orig, now: "2026-01-15T03:00:00Z", replicas: 2, rule: wr(2), next: "2026-01-15T03:30:00Z", nextRep: 3, nextRule: dflt},

		// Spring forward: New York skips 02:00-02:59 on 2026-03-08 (07:00Z).
		{name: "NY spring: a window starting in the skipped hour starts at 03:00 EDT", zone: "America/New_York", cal: cal(1, hours(2, 5, 7)), now: "2026-03-08T06:30:00Z", replicas: 1, rule: dflt, next: "2026-03-08T07:00:00Z", nextRep: 7, nextRule: wr(0)},
		{name: "NY spring: and ends on time", zone: "America/New_York", cal: cal(1, hours(2, 5, 7)), now: "2026-03-08T07:00:00Z", replicas: 7, rule: wr(0), next: "2026-03-08T09:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "NY spring: a window entirely in the skipped hour does not apply that day", zone: "America/New_York", cal: cal(1, hours(2, 3, 7)), now: "2026-03-08T06:30:00Z", replicas: 1, rule: dflt, next: "2026-03-09T06:00:00Z", nextRep: 7, nextRule: wr(0)},
		{name: "NY spring: a window ending in the skipped hour ends at the jump", zone: "America/New_York", cal: cal(1, hours(0, 2, 7)), now: "2026-03-08T06:59:59Z", replicas: 7, rule: wr(0), next: "2026-03-08T07:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Berlin spring: 1-3 lasts one real hour", zone: "Europe/Berlin", cal: cal(1, hours(1, 3, 4)), now: "2026-03-29T00:30:00Z", replicas: 4, rule: wr(0), next: "2026-03-29T01:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "St_Johns spring (-3:30 to -2:30)", zone: "America/St_Johns", cal: cal(1, hours(2, 4, 6)), now: "2026-03-08T05:00:00Z", replicas: 1, rule: dflt, next: "2026-03-08T05:30:00Z", nextRep: 6, nextRule: wr(0)},

		// Fall back: New York repeats 01:00-01:59 on 2026-11-01 (05:00Z-07:00Z).
		{name: "NY fall: entering the repeated hour", zone: "America/New_York", cal: cal(1, hours(1, 2, 9)), now: "2026-11-01T04:30:00Z", replicas: 1, rule: dflt, next: "2026-11-01T05:00:00Z", nextRep: 9, nextRule: wr(0)},
		{name: "NY fall: the repeated hour is one hour, 1-2 lasts two real hours", zone: "America/New_York", cal: cal(1, hours(1, 2, 9)), now: "2026-11-01T05:30:00Z", replicas: 9, rule: wr(0), next: "2026-11-01T07:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "NY fall: second pass of the repeated hour", zone: "America/New_York", cal: cal(1, hours(1, 2, 9)), now: "2026-11-01T06:30:00Z", replicas: 9, rule: wr(0), next: "2026-11-01T07:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "NY fall: 0-1 ends at the first 01:00", zone: "America/New_York", cal: cal(1, hours(0, 1, 9)), now: "2026-11-01T04:30:00Z", replicas: 9, rule: wr(0), next: "2026-11-01T05:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "NY fall: 0-1 does not start again at the second 01:00", zone: "America/New_York", cal: cal(1, hours(0, 1, 9)), now: "2026-11-01T06:30:00Z", replicas: 1, rule: dflt, next: "2026-11-02T05:00:00Z", nextRep: 9, nextRule: wr(0)},
		{name: "Berlin fall: 2-3 lasts two real hours", zone: "Europe/Berlin", cal: cal(1, hours(2, 3, 4)), now: "2026-10-25T00:00:00Z", replicas: 4, rule: wr(0), next: "2026-10-25T02:00:00Z", nextRep: 1, nextRule: dflt},

		// Offset changes that are not whole hours.
		{name: "Chatham fall: 03:45 CHADT falls back to 02:45, the hour steps back", zone: "Pacific/Chatham", cal: cal(1, hours(3, 4, 6)), now: "2026-04-04T13:30:00Z", replicas: 6, rule: wr(0), next: "2026-04-04T14:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "Chatham fall: and 03:00 comes again", zone: "Pacific/Chatham", cal: cal(1, hours(3, 4, 6)), now: "2026-04-04T14:00:00Z", replicas: 1, rule: dflt, next: "2026-04-04T14:15:00Z", nextRep: 6, nextRule: wr(0)},
		{name: "Lord Howe spring: 02:00 jumps to 02:30", zone: "Australia/Lord_Howe", cal: cal(1, hours(2, 3, 6)), now: "2026-10-03T15:15:00Z", replicas: 1, rule: dflt, next: "2026-10-03T15:30:00Z", nextRep: 6, nextRule: wr(0)},
		{name: "Lord Howe spring: the window lasts 30 minutes", zone: "Australia/Lord_Howe", cal: cal(1, hours(2, 3, 6)), now: "2026-10-03T15:30:00Z", replicas: 6, rule: wr(0), next: "2026-10-03T16:00:00Z", nextRep: 1, nextRule: dflt},

		// v1 capped Next at 25 hours here; it is now the real change.
		{name: "NY spring swallows the only uncovered hour: the next one is Monday's", zone: "America/New_York", cal: cal(1, hours(3, 2, 5)), now: "2026-03-07T08:00:00Z", replicas: 5, rule: wr(0), next: "2026-03-09T06:00:00Z", nextRep: 1, nextRule: dflt},
		{name: "no windows: never", zone: "Asia/Kolkata", cal: cal(2), now: "2026-03-10T10:10:00Z", replicas: 2, rule: dflt},
	})
}

// BenchmarkAt is the controller's call: an office calendar with holidays,
// an override in the past and a lead time.
func BenchmarkAt(b *testing.B) {
	loc := mustZone(b, "Europe/Berlin")
	var holidays []schedule.Exception
	for _, d := range []string{"2026-01-01", "2026-04-03", "2026-04-06", "2026-05-01", "2026-05-14", "2026-05-25", "2026-10-03", "2026-12-25", "2026-12-26"} {
		holidays = append(holidays, exc(b, d, 1))
	}
	cal := schedule.Calendar{
		Location: loc, Default: 2,
		Windows: []schedule.Window{
			win(b, "Mon-Fri", "08:30", "18:00", 10), win(b, "Mon-Fri", "18:00", "22:00", 4), win(b, "Sat", "10:00", "16:00", 3), win(b, "Fri", "22:00", "02:00", 3),
		},
		Exceptions: holidays,
		Override:   &schedule.Override{Replicas: 20, Until: utc(b, "2026-03-01T00:00:00Z")},
		LeadTime:   15 * time.Minute,
	}
	now := utc(b, "2026-03-13T12:00:00Z")
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(7 * time.Minute)
		_ = cal.At(now)
	}
}

func TestAtAllocatesNothing(t *testing.T) {
	g := NewWithT(t)
	loc := mustZone(t, "America/New_York")
	cal := schedule.Calendar{Location: loc, Default: 1, Windows: []schedule.Window{win(t, "Mon-Fri", "08:30", "18:00", 5), win(t, "Sat", "22:00", "02:00", 2)},
		Exceptions: []schedule.Exception{exc(t, "2026-12-25", 0)}, LeadTime: 20 * time.Minute}
	now := utc(t, "2026-03-06T12:00:00Z")
	allocs := testing.AllocsPerRun(200, func() {
		now = now.Add(37 * time.Minute)
		_ = cal.At(now)
	})
	g.Expect(allocs).To(BeZero())
}
