package icalendar_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/icalendar"
	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// ics wraps VEVENT lines in a VCALENDAR with CRLF line ends.
func ics(lines ...string) []byte {
	all := append(append([]string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"}, lines...), "END:VCALENDAR")
	return []byte(strings.Join(all, "\r\n") + "\r\n")
}

// in2026 is a date of 2026, the year of the tests' events.
func in2026(m time.Month, d int) schedule.Date { return schedule.Date{Year: 2026, Month: m, Day: d} }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   []byte
		events []icalendar.Event
		errs   []string
	}{
		{name: "a one-day event, a yearly one and a range",
			data: ics(
				"BEGIN:VEVENT", "SUMMARY:Inventory", "DTSTART;VALUE=DATE:20260703", "DTEND;VALUE=DATE:20260704", "END:VEVENT",
				"BEGIN:VEVENT", "SUMMARY:Christmas Day", "DTSTART;VALUE=DATE:20261225", "RRULE:FREQ=YEARLY", "END:VEVENT",
				"BEGIN:VEVENT", "SUMMARY:Summer closure", "DTSTART;VALUE=DATE:20260803", "DTEND;VALUE=DATE:20260815", "END:VEVENT",
			),
			events: []icalendar.Event{
				{Summary: "Inventory", Start: in2026(7, 3), Days: 1},
				{Summary: "Christmas Day", Start: in2026(12, 25), Days: 1, Yearly: true},
				{Summary: "Summer closure", Start: in2026(8, 3), Days: 12},
			}},
		{name: "folded lines and escapes",
			data:   ics("BEGIN:VEVENT", "SUMMARY:Tag der Deutschen\\, ", " Einheit", "DTSTART;VALUE=DATE:2026", "\t1003", "END:VEVENT"),
			events: []icalendar.Event{{Summary: "Tag der Deutschen, Einheit", Start: in2026(10, 3), Days: 1}}},
		{name: "unsupported events are skipped and named",
			data: ics(
				"BEGIN:VEVENT", "SUMMARY:Meeting", "DTSTART:20260703T090000Z", "END:VEVENT",
				"BEGIN:VEVENT", "SUMMARY:Weekly", "DTSTART;VALUE=DATE:20260703", "RRULE:FREQ=WEEKLY", "END:VEVENT",
				"BEGIN:VEVENT", "SUMMARY:Long", "DTSTART;VALUE=DATE:20260101", "DTEND;VALUE=DATE:20260301", "END:VEVENT",
				"BEGIN:VEVENT", "SUMMARY:No day", "DTSTART;VALUE=DATE:20260230", "END:VEVENT",
				"BEGIN:VEVENT", "SUMMARY:Backwards", "DTSTART;VALUE=DATE:20260105", "DTEND;VALUE=DATE:20260101", "END:VEVENT",
				"BEGIN:VEVENT", "SUMMARY:Kept", "DTSTART;VALUE=DATE:20260105", "END:VEVENT",
			),
			events: []icalendar.Event{{Summary: "Kept", Start: in2026(1, 5), Days: 1}},
			errs: []string{
				"event at line 4: only whole-day events",
				"event at line 8: RRULE \"FREQ=WEEKLY\": only FREQ=YEARLY",
				"event at line 13: it lasts 59 days; 1 to 31",
				"event at line 18: DTSTART: invalid date \"2026-02-30\": no such day",
				"event at line 22: it lasts -4 days",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			res, err := icalendar.Parse(tc.data, icalendar.DefaultLimits)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Events).To(Equal(tc.events))
			g.Expect(res.Errors).To(HaveLen(len(tc.errs)))
			for i, e := range tc.errs {
				g.Expect(res.Errors[i]).To(HavePrefix(e))
			}
			g.Expect(res.Skipped).To(Equal(len(tc.errs)))
		})
	}
}

// The input as a whole is refused past its bounds, before it is kept.
func TestParseBounds(t *testing.T) {
	g := NewWithT(t)
	lim := icalendar.Limits{MaxBytes: 4096, MaxLines: 50, MaxEvents: 2, MaxDays: 31, MaxErrors: 1}
	event := []string{"BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260101", "END:VEVENT"}
	_, err := icalendar.Parse(make([]byte, 4097), lim)
	g.Expect(errors.Is(err, icalendar.ErrTooLarge)).To(BeTrue(), "%v", err)
	_, err = icalendar.Parse([]byte(strings.Repeat("X:1\n", 51)), lim)
	g.Expect(errors.Is(err, icalendar.ErrTooLarge)).To(BeTrue(), "%v", err)
	_, err = icalendar.Parse(ics(append(append(event, event...), event...)...), lim)
	g.Expect(err).To(MatchError("more than 2 events"))
	_, err = icalendar.Parse(ics("BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260101"), lim)
	g.Expect(err).To(MatchError(ContainSubstring("VEVENT without END")))
	res, err := icalendar.Parse(ics("BEGIN:VEVENT", "END:VEVENT", "BEGIN:VEVENT", "END:VEVENT"), lim)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Errors).To(HaveLen(1), "at most MaxErrors errors")
	g.Expect(res.Skipped).To(Equal(2))
}

// Whatever the input, Parse keeps to its limits and every event it returns
// is a real day lasting 1 to MaxDays days (one for a yearly event).
func FuzzParse(f *testing.F) {
	f.Add(ics("BEGIN:VEVENT", "SUMMARY:x", "DTSTART;VALUE=DATE:20261225", "RRULE:FREQ=YEARLY", "END:VEVENT"))
	f.Add(ics("BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260803", "DTEND;VALUE=DATE:20260815", "END:VEVENT"))
	f.Add([]byte("BEGIN:VEVENT\n \n\tDTSTART:2026\n 0101\nEND:VEVENT\n"))
	lim := icalendar.Limits{MaxBytes: 1 << 16, MaxLines: 200, MaxEvents: 20, MaxDays: 31, MaxErrors: 3}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := icalendar.Parse(data, lim)
		if err != nil {
			return
		}
		if len(res.Events) > lim.MaxEvents || len(res.Errors) > lim.MaxErrors || res.Skipped < len(res.Errors) {
			t.Fatalf("over the limits: %d events, %d errors, %d skipped", len(res.Events), len(res.Errors), res.Skipped)
		}
		for _, ev := range res.Events {
			if !ev.Start.Valid() || ev.Days < 1 || ev.Days > lim.MaxDays || (ev.Yearly && ev.Days != 1) {
				t.Fatalf("event %+v", ev)
			}
		}
	})
}
