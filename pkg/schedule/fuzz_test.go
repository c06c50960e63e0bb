package schedule_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// FuzzParseClock: what ParseClock accepts is a minute of the day that
// FormatClock writes back as the same text; anything else is an error.
func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"00:00", "08:30", "23:59", "24:00", "8:30", "08:60", "-1:00", "0a:00", "", "08:30\n", "١٢:٠٠"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := schedule.ParseClock(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want HH:MM") {
				t.Fatalf("%q: error %q does not say what is wanted", s, err)
			}
			return
		}
		if m < 0 || m >= schedule.MinutesPerDay {
			t.Fatalf("%q: %d is not a minute of the day", s, m)
		}
		if back := schedule.FormatClock(m); back != s {
			t.Fatalf("%q: parsed %d, which formats as %q", s, m, back)
		}
	})
}

// FuzzParseDate: what ParseDate accepts is a real date that String writes
// back as the same text and the standard library agrees exists.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-12-25", "2028-02-29", "2026-02-29", "2026-02-30", "2100-02-29", "2000-02-29", "0000-01-01", "9999-12-31", "2026-13-01", "2026-1-1", "", "2026-12-25 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := schedule.ParseDate(s)
		if err != nil {
			return
		}
		if !d.Valid() {
			t.Fatalf("%q: parsed %+v, which is not valid", s, d)
		}
		if back := d.String(); back != s {
			t.Fatalf("%q: parsed %+v, which formats as %q", s, d, back)
		}
		y, m, day := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC).Date()
		if y != d.Year || m != d.Month || day != d.Day {
			t.Fatalf("%q: the standard library normalises it to %d-%d-%d", s, y, m, day)
		}
	})
}

// fuzzZones are zones with whole-hour, half-hour and quarter-hour offsets,
// one- and two-hour and half-hour DST shifts, DST at midnight, a skipped
// day (Pacific/Apia, 2011-12-30) and zones whose rules changed often.
var fuzzZones = []string{
	"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu",
	"Australia/Eucla", "Pacific/Chatham", "America/St_Johns", "Australia/Lord_Howe",
	"Pacific/Apia", "Antarctica/Troll", "Africa/Casablanca", "America/Sao_Paulo",
	"Pacific/Kiritimati", "Etc/GMT+12", "Europe/Moscow", "America/Santiago", "Europe/Dublin",
}

// fuzzCalendar builds a calendar from bytes: 6 bytes a window (replicas,
// or with bit 0x40 a window over days with its end day in bits 3-5 and
// replicas in bits 0-2; days; start and end as 16-bit numbers folded into
// -60..1499, so that some are out of range), 5 bytes an exception (year offset, month and day
// unchecked, so that some do not exist, replicas), and the remaining flags.
func fuzzCalendar(raw []byte, def int32, zone uint8, lead int32, override int64, loc *time.Location) schedule.Calendar {
	c := schedule.Calendar{Location: loc, Default: def % 100, LeadTime: time.Duration(lead) * time.Second}
	clock := func(b []byte) int { return int(binary.BigEndian.Uint16(b))%1560 - 60 }
	for len(raw) >= 6 && raw[0]&0x80 == 0 && len(c.Windows) < 16 {
		w := schedule.Window{Days: schedule.Weekdays(raw[1]), Start: clock(raw[2:4]), End: clock(raw[4:6]), Replicas: int32(raw[0])}
		if raw[0]&0x40 != 0 {
			// A window over days, ending on day 0-7 (7 is out of range).
			w.MultiDay, w.EndDay, w.Replicas = true, time.Weekday(raw[0]>>3&7), int32(raw[0]&7)
		}
		c.Windows = append(c.Windows, w)
		raw = raw[6:]
	}
	if len(raw) > 0 {
		raw = raw[1:]
	}
	for len(raw) >= 5 && len(c.Exceptions) < 16 {
		year := 1900 + int(binary.BigEndian.Uint16(raw[0:2]))%300
		c.Exceptions = append(c.Exceptions, schedule.Exception{Date: schedule.Date{Year: year, Month: time.Month(raw[2] % 14), Day: int(raw[3] % 33)}, Replicas: int32(raw[4])})
		raw = raw[5:]
	}
	if zone&0x80 != 0 {
		c.Override = &schedule.Override{Replicas: int32(zone & 0x0f), Until: time.Unix(override%(5e9), 0)}
	}
	return c
}

// FuzzCalendar checks At and Validate on arbitrary calendars (overlapping,
// empty and out-of-range windows, invalid and repeated dates, negative and
// too long lead times), zones and instants from 1900 to 2100:
//   - neither panics;
//   - the count is the count of the rule At names;
//   - without lead time, the rule is the definition's (bruteRaw);
//   - Next is after now or zero, and what At says applies at Next does;
//   - nothing changes before Next: At agrees just before Next and at every
//     minute before it (up to 26 hours ahead);
//   - a calendar that Validate accepts has no two windows holding a minute.
func FuzzCalendar(f *testing.F) {
	w := func(days schedule.Weekdays, start, end int, n byte) []byte {
		b := []byte{n, byte(days), 0, 0, 0, 0}
		binary.BigEndian.PutUint16(b[2:], uint16(start+60))
		binary.BigEndian.PutUint16(b[4:], uint16(end+60))
		return b
	}
	join := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	h := func(start, end int, n byte) []byte { return w(0, start*60, end*60, n) }
	// The v1 seeds: windows in hours, every day.
	for _, seed := range []struct {
		raw  []byte
		def  int32
		zone uint8
		unix int64
	}{
		{join(h(9, 17, 5), h(17, 19, 3), h(19, 0, 2), h(1, 7, 2), h(7, 9, 3)), 3, 0, 1773136800},
		{h(2, 5, 7), 1, 1, 1772951400},                                   // NY spring forward
		{h(1, 2, 9), 1, 1, 1793511000},                                   // NY fall back
		{h(3, 2, 5), 1, 1, 1772870400},                                   // NY: the one uncovered hour is skipped
		{h(3, 4, 6), 1, 6, 1775309400},                                   // Chatham fall back at 03:45
		{h(2, 3, 6), 1, 8, 1791041400},                                   // Lord Howe 30-minute jump
		{join(h(0, 12, 4), h(12, 0, 2)), 1, 9, 1325160000},               // Apia skipped 2011-12-30
		{h(1, 3, 4), 2, 10, 1774742400},                                  // Troll two-hour DST
		{join(h(9, 9, 1), h(22, 2, 4), h(1, 3, 2)), 1, 3, 1e9},           // empty and overlapping windows
		{nil, 1, 5, 0},                                                   // no windows
		{join(h(23, 0, 1), h(0, 1, 2)), 7, 7, 4102444799},                // up to 2100
		{[]byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80}, 0, 255, -1e9}, // garbage is folded into range
	} {
		f.Add(seed.raw, seed.def, seed.zone, int32(0), int64(0), seed.unix)
	}
	// v2 seeds: weekdays, minutes, exceptions, override, lead time.
	fri := schedule.NewWeekdays(time.Friday)
	// Windows over days: byte 0 is 0x40 | end day<<3 | replicas.
	over := func(start time.Weekday, startMin int, end time.Weekday, endMin int, n byte) []byte {
		return w(schedule.NewWeekdays(start), startMin, endMin, 0x40|byte(end)<<3|n&7)
	}
	exception := func(year int, month, day, n byte) []byte {
		b := []byte{0, 0, month, day, n}
		binary.BigEndian.PutUint16(b, uint16(year-1900))
		return b
	}
	f.Add(join(w(fri, 1320, 120, 4), []byte{0x80}, exception(2026, 3, 14, 2)), int32(1), uint8(0), int32(1800), int64(0), int64(1773442800))
	f.Add(join(w(0x3e, 510, 1080, 5), []byte{0x80}, exception(2026, 12, 25, 0), exception(2026, 2, 30, 1)), int32(1), uint8(0x81), int32(3600), int64(1773100000), int64(1773050000))
	f.Add(join([]byte{0x80}, exception(2099, 12, 31, 9)), int32(1), uint8(1), int32(0), int64(0), int64(1773050000))
	f.Add(join(w(0, 150, 300, 7), w(0, 90, 120, 9)), int32(1), uint8(16), int32(-5), int64(0), int64(1775358000))
	f.Add(over(time.Friday, 1080, time.Monday, 360, 4), int32(1), uint8(0), int32(0), int64(0), int64(1773424800))                                                                         // Fri 18:00-Mon 06:00
	f.Add(over(time.Saturday, 90, time.Monday, 150, 5), int32(1), uint8(1), int32(3600), int64(0), int64(1772843400))                                                                      // NY spring forward inside
	f.Add(join(over(time.Thursday, 1200, time.Saturday, 120, 5), over(time.Saturday, 120, time.Thursday, 1200, 2)), int32(1), uint8(9), int32(0), int64(0), int64(1325224800))             // Apia's skipped Friday
	f.Add(join(over(time.Monday, 600, time.Monday, 540, 3), over(time.Monday, 600, time.Monday, 600, 6), w(0, 500, 560, 1)), int32(1), uint8(2), int32(7200), int64(0), int64(1773650000)) // almost a week, a whole week, an overlap

	locs := make([]*time.Location, len(fuzzZones))
	for i, z := range fuzzZones {
		locs[i] = mustZone(f, z)
	}
	const minUnix, maxUnix = -2208988800, 4102444800 // 1900 to 2100
	f.Fuzz(func(t *testing.T, raw []byte, def int32, zone uint8, lead int32, override int64, unix int64) {
		loc := locs[int(zone&0x7f)%len(locs)]
		cal := fuzzCalendar(raw, def, zone, lead, override, loc)
		sec := unix % (maxUnix - minUnix)
		if sec < 0 {
			sec += maxUnix - minUnix
		}
		now := time.Unix(minUnix+sec, int64(uint64(unix)%1e9))

		verr := cal.Validate()
		got := cal.At(now)

		if want := replicasOf(&cal, got.Rule); got.Replicas != want {
			t.Fatalf("now %s: %d replicas, but rule %s has %d", now, got.Replicas, cal.Describe(got.Rule), want)
		}
		if cal.LeadTime <= 0 {
			if r, rule := bruteRaw(&cal, now); got.Replicas != r || got.Rule != rule || got.Early {
				t.Fatalf("now %s: %d from %s (early %v), want %d from %s", now.In(loc), got.Replicas, cal.Describe(got.Rule), got.Early, r, cal.Describe(rule))
			}
		}
		cur := effState{got.Replicas, got.Rule, got.Early}
		if got.Next.IsZero() {
			if (effState{got.NextReplicas, got.NextRule, got.NextEarly}) != cur {
				t.Fatalf("now %s: Next is never, but the next values %+v differ from %+v", now, got, cur)
			}
		} else {
			if !got.Next.After(now) {
				t.Fatalf("now %s: Next %s is not after now", now, got.Next)
			}
			at := cal.At(got.Next)
			if (effState{at.Replicas, at.Rule, at.Early}) != (effState{got.NextReplicas, got.NextRule, got.NextEarly}) {
				t.Fatalf("now %s: at Next %s %+v applies, Result says %+v", now, got.Next, at, got)
			}
			if before := cal.At(got.Next.Add(-time.Nanosecond)); !got.Next.Add(-time.Nanosecond).Before(now) && (effState{before.Replicas, before.Rule, before.Early}) != cur {
				t.Fatalf("now %s: just before Next %s, %+v applies", now, got.Next, before)
			}
		}
		limit := now.Add(26 * time.Hour)
		if !got.Next.IsZero() && got.Next.Before(limit) {
			limit = got.Next
		}
		for ts := now.Truncate(time.Minute).Add(time.Minute); ts.Before(limit); ts = ts.Add(time.Minute) {
			if at := cal.At(ts); (effState{at.Replicas, at.Rule, at.Early}) != cur {
				t.Fatalf("now %s: %+v applies at %s, before Next %s", now, at, ts.In(loc), got.Next)
			}
		}

		if verr == nil {
			for d := time.Sunday; d <= time.Saturday; d++ {
				for m := range schedule.MinutesPerDay {
					n := 0
					for _, w := range cal.Windows {
						if covers(w, d, m) {
							n++
						}
					}
					if n > 1 {
						t.Fatalf("Validate accepts windows %v, which overlap at %s %s", cal.Windows, d, schedule.FormatClock(m))
					}
				}
			}
		}
	})
}

// covers is the definition of a window holding minute m of weekday d. A
// window over days holds the minutes of the week from its start for its
// length, which is less than a week.
func covers(w schedule.Window, d time.Weekday, m int) bool {
	const week = 7 * schedule.MinutesPerDay
	switch {
	case w.Start < 0 || w.Start >= schedule.MinutesPerDay || w.End < 0 || w.End >= schedule.MinutesPerDay:
		return false
	case w.MultiDay:
		start := -1
		for x := time.Sunday; x <= time.Saturday; x++ {
			if w.Days&schedule.EveryDay == schedule.NewWeekdays(x) {
				start = int(x)
			}
		}
		if start < 0 || w.EndDay < time.Sunday || w.EndDay > time.Saturday {
			return false
		}
		length := ((int(w.EndDay)-start+7)%7)*schedule.MinutesPerDay + w.End - w.Start
		if length <= 0 {
			length += week
		}
		offset := (((int(d)-start+7)%7)*schedule.MinutesPerDay + m - w.Start + week) % week
		return length < week && offset < length
	case w.Start == w.End:
		return false
	case w.Start < w.End:
		return w.Days.Has(d) && m >= w.Start && m < w.End
	}
	return (w.Days.Has(d) && m >= w.Start) || (w.Days.Has((d+6)%7) && m < w.End)
}

// replicasOf is the count a rule of the calendar sets.
func replicasOf(c *schedule.Calendar, r schedule.Rule) int32 {
	switch r.Kind {
	case schedule.RuleWindow:
		return c.Windows[r.Index].Replicas
	case schedule.RuleException:
		return c.Exceptions[r.Index].Replicas
	case schedule.RuleOverride:
		return c.Override.Replicas
	}
	return c.Default
}
