package schedule_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

func TestParseClock(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  bool
	}{
		{in: "00:00", want: 0},
		{in: "08:30", want: 510},
		{in: "23:59", want: 1439},
		{in: "12:05", want: 725},
		{in: "24:00", err: true},
		{in: "23:60", err: true},
		{in: "8:30", err: true},
		{in: "08:3", err: true},
		{in: "08.30", err: true},
		{in: "08:30:00", err: true},
		{in: " 08:30", err: true},
		{in: "+8:30", err: true},
		{in: "-1:30", err: true},
		{in: "０8:30", err: true},
		{in: "", err: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			g := NewWithT(t)
			got, err := schedule.ParseClock(tc.in)
			if tc.err {
				g.Expect(err).To(MatchError(ContainSubstring("want HH:MM")))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
			g.Expect(schedule.FormatClock(got)).To(Equal(tc.in))
		})
	}
}

func TestFormatClock(t *testing.T) {
	g := NewWithT(t)
	for m, want := range map[int]string{0: "00:00", 510: "08:30", 1439: "23:59", 1440: "24:00", 1500: "25:00", -30: "-00:30"} {
		g.Expect(schedule.FormatClock(m)).To(Equal(want), "%d", m)
	}
}

func TestParseDate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want schedule.Date
		err  string
	}{
		{in: "2026-12-25", want: schedule.Date{Year: 2026, Month: time.December, Day: 25}},
		{in: "2028-02-29", want: schedule.Date{Year: 2028, Month: time.February, Day: 29}},
		{in: "2000-02-29", want: schedule.Date{Year: 2000, Month: time.February, Day: 29}},
		{in: "0000-01-01", want: schedule.Date{Year: 0, Month: time.January, Day: 1}},
		{in: "9999-12-31", want: schedule.Date{Year: 9999, Month: time.December, Day: 31}},
		{in: "2026-02-29", err: "no such day"},
		{in: "2026-02-30", err: "no such day"},
		{in: "2100-02-29", err: "no such day"},
		{in: "2026-04-31", err: "no such day"},
		{in: "2026-13-01", err: "no such day"},
		{in: "2026-00-10", err: "no such day"},
		{in: "2026-01-00", err: "no such day"},
		{in: "2026-1-01", err: "want YYYY-MM-DD"},
		{in: "26-01-01", err: "want YYYY-MM-DD"},
		{in: "2026/01/01", err: "want YYYY-MM-DD"},
		{in: "2026-01-01T00:00:00Z", err: "want YYYY-MM-DD"},
		{in: "+026-01-01", err: "want YYYY-MM-DD"},
		{in: "", err: "want YYYY-MM-DD"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			g := NewWithT(t)
			got, err := schedule.ParseDate(tc.in)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
			g.Expect(got.String()).To(Equal(tc.in))
		})
	}
}

func TestParseWeekday(t *testing.T) {
	g := NewWithT(t)
	for want, s := range []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"} {
		got, err := schedule.ParseWeekday(s)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(time.Weekday(want)))
	}
	for _, bad := range []string{"mon", "Monday", "MON", "", "Mo"} {
		_, err := schedule.ParseWeekday(bad)
		g.Expect(err).To(MatchError(ContainSubstring("want Mon, Tue")), bad)
	}
}

func TestWeekdays(t *testing.T) {
	g := NewWithT(t)
	g.Expect(schedule.Weekdays(0).Has(time.Sunday)).To(BeTrue(), "0 is every day")
	g.Expect(schedule.NewWeekdays(time.Monday).Has(time.Tuesday)).To(BeFalse())
	g.Expect(schedule.NewWeekdays(time.Monday, time.Friday)).To(Equal(days(t, "Mon,Fri")))
	g.Expect(schedule.NewWeekdays(time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday)).To(Equal(schedule.EveryDay))
	for spec, want := range map[string]string{
		"":                "every day",
		"Mon-Sun":         "every day",
		"Mon-Fri":         "Mon-Fri",
		"Mon,Wed,Sat":     "Mon,Wed,Sat",
		"Sat,Sun":         "Sat,Sun",
		"Mon,Tue":         "Mon,Tue",
		"Fri-Mon":         "Mon,Fri-Sun",
		"Mon-Wed,Fri-Sun": "Mon-Wed,Fri-Sun",
		"Sun":             "Sun",
		"Tue-Thu,Sat":     "Tue-Thu,Sat",
	} {
		g.Expect(days(t, spec).String()).To(Equal(want), spec)
	}
}

func TestWindowString(t *testing.T) {
	g := NewWithT(t)
	g.Expect(win(t, "Mon-Fri", "08:30", "18:00", 5).String()).To(Equal("Mon-Fri 08:30-18:00"))
	g.Expect(win(t, "", "09:00", "17:00", 5).String()).To(Equal("every day 09:00-17:00"))
	g.Expect(win(t, "Mon,Wed,Sat", "10:00", "12:00", 5).String()).To(Equal("Mon,Wed,Sat 10:00-12:00"))
	g.Expect(win(t, "Fri", "22:00", "02:00", 5).String()).To(Equal("Fri 22:00-02:00"))
	g.Expect(hours(19, 0, 2).String()).To(Equal("every day 19:00-00:00"))
}

func TestDescribe(t *testing.T) {
	g := NewWithT(t)
	cal := schedule.Calendar{
		Default:    1,
		Windows:    []schedule.Window{win(t, "Mon-Fri", "08:30", "18:00", 5)},
		Exceptions: []schedule.Exception{exc(t, "2026-12-25", 0)},
		Override:   &schedule.Override{Replicas: 9, Until: time.Date(2026, 11, 30, 19, 0, 0, 0, mustZone(t, "Europe/Berlin"))},
	}
	g.Expect(cal.Describe(wr(0))).To(Equal("window Mon-Fri 08:30-18:00"))
	g.Expect(cal.Describe(er(0))).To(Equal("exception 2026-12-25"))
	g.Expect(cal.Describe(ovr)).To(Equal("override until 2026-11-30T18:00:00Z"))
	g.Expect(cal.Describe(dflt)).To(Equal("defaultReplicas"))
	// Rules that do not belong to the calendar still describe something.
	g.Expect(cal.Describe(wr(3))).To(Equal("window #3"))
	g.Expect(cal.Describe(schedule.Rule{Kind: 9})).To(Equal("RuleKind(9) #0"))
	g.Expect((&schedule.Calendar{}).Describe(ovr)).To(Equal("override #0"))
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cal  schedule.Calendar
		errs []string
	}{
		{name: "office week", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Mon-Fri", "08:30", "18:00", 5), win(t, "Mon-Fri", "18:00", "22:00", 3), win(t, "Sat,Sun", "10:00", "16:00", 2)},
			Exceptions: []schedule.Exception{exc(t, "2026-12-25", 0), exc(t, "2026-12-26", 0)}, LeadTime: time.Hour}},
		{name: "the same times on different days", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Mon", "08:00", "18:00", 1), win(t, "Tue", "08:00", "18:00", 2)}}},
		{name: "adjacent windows", cal: schedule.Calendar{Windows: []schedule.Window{hours(9, 17, 1), hours(17, 9, 2)}}},
		{name: "23-0 and 0-1", cal: schedule.Calendar{Windows: []schedule.Window{hours(23, 0, 1), hours(0, 1, 2)}}},
		{name: "a wrapping window and the next morning's", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Fri", "22:00", "02:00", 1), win(t, "Sat", "02:00", "05:00", 2), win(t, "Fri", "01:00", "05:00", 2)}}},
		{name: "lead time at its maximum", cal: schedule.Calendar{LeadTime: 24 * time.Hour}},
		{name: "overlap on a weekday", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Mon", "08:30", "18:00", 1), win(t, "Mon", "17:00", "20:00", 2)}},
			errs: []string{"windows Mon 08:30-18:00 and Mon 17:00-20:00 overlap on Mon"}},
		{name: "overlap on some of the days", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Mon-Fri", "08:00", "18:00", 1), win(t, "Wed,Sat", "12:00", "13:00", 2)}},
			errs: []string{"windows Mon-Fri 08:00-18:00 and Wed,Sat 12:00-13:00 overlap on Wed"}},
		{name: "overlap every day", cal: schedule.Calendar{Windows: []schedule.Window{hours(9, 17, 1), hours(10, 12, 2)}},
			errs: []string{"windows every day 09:00-17:00 and every day 10:00-12:00 overlap on every day"}},
		{name: "a wrapping window overlaps the next day's", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Fri", "22:00", "02:00", 1), win(t, "Sat", "01:00", "05:00", 2)}},
			errs: []string{"windows Fri 22:00-02:00 and Sat 01:00-05:00 overlap on Sat"}},
		{name: "v1: overlap across midnight", cal: schedule.Calendar{Windows: []schedule.Window{hours(22, 2, 1), hours(1, 3, 2)}},
			errs: []string{"windows every day 22:00-02:00 and every day 01:00-03:00 overlap on every day"}},
		{name: "two wrapping windows", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Sun", "20:00", "01:00", 1), win(t, "Sun", "23:00", "02:00", 2)}},
			errs: []string{"windows Sun 20:00-01:00 and Sun 23:00-02:00 overlap on Mon,Sun"}},
		{name: "duplicates", cal: schedule.Calendar{Windows: []schedule.Window{hours(1, 2, 1), hours(1, 2, 1)}},
			errs: []string{"windows every day 01:00-02:00 and every day 01:00-02:00 overlap"}},
		{name: "empty window", cal: schedule.Calendar{Windows: []schedule.Window{win(t, "Mon", "09:00", "09:00", 1)}},
			errs: []string{"window Mon 09:00-09:00 is empty: start and end must differ"}},
		{name: "out of range", cal: schedule.Calendar{Windows: []schedule.Window{{Start: 1440, End: 120}, {Start: -1, End: 60}}},
			errs: []string{"window every day 24:00-02:00: times must be 00:00 to 23:59", "window every day -00:01-01:00: times must be 00:00 to 23:59"}},
		{name: "unknown weekday bits", cal: schedule.Calendar{Windows: []schedule.Window{{Days: 0x81, Start: 60, End: 120}}},
			errs: []string{"window Sun 01:00-02:00: unknown weekday bits 0x80"}},
		{name: "repeated exception date", cal: schedule.Calendar{Exceptions: []schedule.Exception{exc(t, "2026-12-25", 0), exc(t, "2026-12-26", 0), exc(t, "2026-12-25", 1), exc(t, "2026-12-25", 2)}},
			errs: []string{"exception date 2026-12-25 appears twice"}},
		{name: "invalid exception date", cal: schedule.Calendar{Exceptions: []schedule.Exception{{Date: schedule.Date{Year: 2026, Month: 2, Day: 30}}}},
			errs: []string{"exception date 2026-02-30 is not a valid date"}},
		{name: "negative lead time", cal: schedule.Calendar{LeadTime: -time.Second}, errs: []string{"scaleUpLeadTime must not be negative"}},
		{name: "lead time too long", cal: schedule.Calendar{LeadTime: 25 * time.Hour}, errs: []string{"scaleUpLeadTime must be at most 24h0m0s"}},
		{name: "negative counts", cal: schedule.Calendar{Default: -1, Windows: []schedule.Window{win(t, "Mon", "09:00", "10:00", -2)}, Exceptions: []schedule.Exception{exc(t, "2026-12-25", -3)}, Override: &schedule.Override{Replicas: -4}},
			errs: []string{"defaultReplicas must not be negative", "window Mon 09:00-10:00: replicas must not be negative", "exception 2026-12-25: replicas must not be negative", "override: replicas must not be negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := tc.cal.Validate()
			if len(tc.errs) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			var joined interface{ Unwrap() []error }
			g.Expect(errors.As(err, &joined)).To(BeTrue())
			g.Expect(joined.Unwrap()).To(HaveLen(len(tc.errs)), err.Error())
			for _, e := range tc.errs {
				g.Expect(err.Error()).To(ContainSubstring(e))
			}
		})
	}
}

// TestValidateOverlapMatchesMinutes checks Validate's overlap rule against
// the definition: two windows overlap on a weekday when some minute of that
// calendar day lies in both (a wrapping window's tail lies on the next day).
func TestValidateOverlapMatchesMinutes(t *testing.T) {
	g := NewWithT(t)
	rng := rand.New(rand.NewPCG(1, 2))
	// Times on a 30-minute grid, so that every pair of windows is decided
	// by the grid's slots.
	randWin := func() schedule.Window {
		d := schedule.Weekdays(0)
		if rng.IntN(3) > 0 {
			d = schedule.Weekdays(rng.IntN(127) + 1)
		}
		s, e := rng.IntN(48)*30, rng.IntN(48)*30
		if s == e {
			e = (e + 30) % schedule.MinutesPerDay
		}
		return schedule.Window{Days: d, Start: s, End: e}
	}
	for range 5000 {
		a, b := randWin(), randWin()
		var shared schedule.Weekdays
		for d := time.Sunday; d <= time.Saturday; d++ {
			for m := 0; m < schedule.MinutesPerDay; m += 30 {
				if covers(a, d, m) && covers(b, d, m) {
					shared |= schedule.NewWeekdays(d)
				}
			}
		}
		err := (&schedule.Calendar{Windows: []schedule.Window{a, b}}).Validate()
		if shared == 0 {
			g.Expect(err).NotTo(HaveOccurred(), "%s and %s", a, b)
			continue
		}
		g.Expect(err).To(MatchError("windows "+a.String()+" and "+b.String()+" overlap on "+shared.String()), "%s and %s", a, b)
	}
}

func TestValidateMessagesAreShort(t *testing.T) {
	g := NewWithT(t)
	err := (&schedule.Calendar{Windows: []schedule.Window{win(t, "Mon,Wed,Fri", "22:00", "02:00", 1), win(t, "Tue,Thu,Sat", "01:00", "23:00", 1)}}).Validate()
	g.Expect(err).To(HaveOccurred())
	for line := range strings.SplitSeq(err.Error(), "\n") {
		g.Expect(len(line)).To(BeNumerically("<=", 120), line)
	}
}

func TestLoadLocation(t *testing.T) {
	g := NewWithT(t)
	loc, err := schedule.LoadLocation("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(loc).To(Equal(time.UTC))
	loc, err = schedule.LoadLocation("Asia/Kathmandu")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(loc.String()).To(Equal("Asia/Kathmandu"))
	for _, bad := range []string{"Local", "Mars/Olympus", "../../etc/passwd", "/etc/localtime"} {
		_, err := schedule.LoadLocation(bad)
		g.Expect(err).To(HaveOccurred(), bad)
		g.Expect(err.Error()).To(ContainSubstring("IANA"), bad)
	}
}
