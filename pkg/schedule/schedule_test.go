package schedule_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// original is the original operator's example schedule, default 3.
var original = []schedule.Window{
	{StartHour: 9, EndHour: 17, Replicas: 5},
	{StartHour: 17, EndHour: 19, Replicas: 3},
	{StartHour: 19, EndHour: 0, Replicas: 2},
	{StartHour: 1, EndHour: 7, Replicas: 2},
	{StartHour: 7, EndHour: 9, Replicas: 3},
}

func win(start, end int, n int32) schedule.Window {
	return schedule.Window{StartHour: start, EndHour: end, Replicas: n}
}

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// utc parses an instant written in UTC, so that expectations do not depend
// on the zone database under test.
func utc(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestEvaluate(t *testing.T) {
	one := func(start, end int, n int32) []schedule.Window {
		return []schedule.Window{{StartHour: start, EndHour: end, Replicas: n}}
	}
	for _, tc := range []struct {
		name     string
		zone     string
		windows  []schedule.Window
		def      int32
		now      string
		replicas int32
		window   int
		next     string
		nextRep  int32
		nextWin  int
	}{
		// Plain UTC days with the original's schedule.
		{"office hours", "UTC", original, 3, "2026-03-10T10:00:00Z", 5, 0, "2026-03-10T17:00:00Z", 3, 1},
		{"just before a boundary", "UTC", original, 3, "2026-03-10T16:59:59.999Z", 5, 0, "2026-03-10T17:00:00Z", 3, 1},
		{"exactly on a boundary the new window applies", "UTC", original, 3, "2026-03-10T17:00:00Z", 3, 1, "2026-03-10T19:00:00Z", 2, 2},
		{"19-0 covers 23:00-23:59", "UTC", original, 3, "2026-03-10T23:00:00Z", 2, 2, "2026-03-11T00:00:00Z", 3, schedule.Default},
		{"19-0 ends at midnight", "UTC", original, 3, "2026-03-10T23:59:59Z", 2, 2, "2026-03-11T00:00:00Z", 3, schedule.Default},
		{"uncovered hour uses the default", "UTC", original, 3, "2026-03-11T00:30:00Z", 3, schedule.Default, "2026-03-11T01:00:00Z", 2, 3},
		{"23-0 is schedulable", "UTC", one(23, 0, 4), 1, "2026-03-10T22:10:00Z", 1, schedule.Default, "2026-03-10T23:00:00Z", 4, 0},
		{"wrap 22-2 before midnight", "UTC", one(22, 2, 4), 1, "2026-03-10T22:00:00Z", 4, 0, "2026-03-11T02:00:00Z", 1, schedule.Default},
		{"wrap 22-2 after midnight", "UTC", one(22, 2, 4), 1, "2026-03-11T01:59:00Z", 4, 0, "2026-03-11T02:00:00Z", 1, schedule.Default},
		{"wrap 22-2 not yet", "UTC", one(22, 2, 4), 1, "2026-03-10T21:00:00Z", 1, schedule.Default, "2026-03-10T22:00:00Z", 4, 0},
		{"0-1 starts at midnight", "UTC", one(0, 1, 4), 1, "2026-03-10T23:30:00Z", 1, schedule.Default, "2026-03-11T00:00:00Z", 4, 0},
		{"overlapping windows: the first wins", "UTC", []schedule.Window{win(9, 17, 5), win(10, 12, 1)}, 3, "2026-03-10T11:00:00Z", 5, 0, "2026-03-10T17:00:00Z", 3, schedule.Default},

		// The zone's wall clock decides, also with ±30 and ±45 minute offsets.
		{"Europe/Berlin winter (+1)", "Europe/Berlin", original, 3, "2026-01-15T07:59:00Z", 3, 4, "2026-01-15T08:00:00Z", 5, 0},
		{"Asia/Kolkata (+5:30)", "Asia/Kolkata", original, 3, "2026-03-10T03:29:00Z", 3, 4, "2026-03-10T03:30:00Z", 5, 0},
		{"Asia/Kathmandu (+5:45)", "Asia/Kathmandu", original, 3, "2026-03-10T03:14:00Z", 3, 4, "2026-03-10T03:15:00Z", 5, 0},
		{"Australia/Eucla (+8:45)", "Australia/Eucla", original, 3, "2026-03-10T00:14:00Z", 3, 4, "2026-03-10T00:15:00Z", 5, 0},
		{"Pacific/Chatham summer (+13:45)", "Pacific/Chatham", original, 3, "2026-03-09T19:00:00Z", 3, 4, "2026-03-09T19:15:00Z", 5, 0},
		{"America/St_Johns winter (-3:30)", "America/St_Johns", original, 3, "2026-01-15T12:29:00Z", 3, 4, "2026-01-15T12:30:00Z", 5, 0},
		{"America/St_Johns wrap at local midnight", "America/St_Johns", original, 3, "2026-01-15T03:00:00Z", 2, 2, "2026-01-15T03:30:00Z", 3, schedule.Default},

		// Spring forward: New York skips 02:00-02:59 on 2026-03-08 (07:00Z).
		{"NY spring: a window starting in the skipped hour starts at 03:00 EDT", "America/New_York", one(2, 5, 7), 1, "2026-03-08T06:30:00Z", 1, schedule.Default, "2026-03-08T07:00:00Z", 7, 0},
		{"NY spring: and ends on time", "America/New_York", one(2, 5, 7), 1, "2026-03-08T07:00:00Z", 7, 0, "2026-03-08T09:00:00Z", 1, schedule.Default},
		{"NY spring: a window entirely in the skipped hour does not apply that day", "America/New_York", one(2, 3, 7), 1, "2026-03-08T06:30:00Z", 1, schedule.Default, "2026-03-09T06:00:00Z", 7, 0},
		{"NY spring: a window ending in the skipped hour ends at the jump", "America/New_York", one(0, 2, 7), 1, "2026-03-08T06:59:59Z", 7, 0, "2026-03-08T07:00:00Z", 1, schedule.Default},
		{"Berlin spring: 1-3 lasts one real hour", "Europe/Berlin", one(1, 3, 4), 1, "2026-03-29T00:30:00Z", 4, 0, "2026-03-29T01:00:00Z", 1, schedule.Default},
		{"St_Johns spring (-3:30 to -2:30)", "America/St_Johns", one(2, 4, 6), 1, "2026-03-08T05:00:00Z", 1, schedule.Default, "2026-03-08T05:30:00Z", 6, 0},

		// Fall back: New York repeats 01:00-01:59 on 2026-11-01 (05:00Z-07:00Z).
		{"NY fall: entering the repeated hour", "America/New_York", one(1, 2, 9), 1, "2026-11-01T04:30:00Z", 1, schedule.Default, "2026-11-01T05:00:00Z", 9, 0},
		{"NY fall: the repeated hour is one hour, 1-2 lasts two real hours", "America/New_York", one(1, 2, 9), 1, "2026-11-01T05:30:00Z", 9, 0, "2026-11-01T07:00:00Z", 1, schedule.Default},
		{"NY fall: second pass of the repeated hour", "America/New_York", one(1, 2, 9), 1, "2026-11-01T06:30:00Z", 9, 0, "2026-11-01T07:00:00Z", 1, schedule.Default},
		{"NY fall: 0-1 ends at the first 01:00", "America/New_York", one(0, 1, 9), 1, "2026-11-01T04:30:00Z", 9, 0, "2026-11-01T05:00:00Z", 1, schedule.Default},
		{"NY fall: 0-1 does not start again at the second 01:00", "America/New_York", one(0, 1, 9), 1, "2026-11-01T06:30:00Z", 1, schedule.Default, "2026-11-02T05:00:00Z", 9, 0},
		{"Berlin fall: 2-3 lasts two real hours", "Europe/Berlin", one(2, 3, 4), 1, "2026-10-25T00:00:00Z", 4, 0, "2026-10-25T02:00:00Z", 1, schedule.Default},

		// Offset changes that are not whole hours.
		{"Chatham fall: 03:45 CHADT falls back to 02:45, the hour steps back", "Pacific/Chatham", one(3, 4, 6), 1, "2026-04-04T13:30:00Z", 6, 0, "2026-04-04T14:00:00Z", 1, schedule.Default},
		{"Chatham fall: and 03:00 comes again", "Pacific/Chatham", one(3, 4, 6), 1, "2026-04-04T14:00:00Z", 1, schedule.Default, "2026-04-04T14:15:00Z", 6, 0},
		{"Lord Howe spring: 02:00 jumps to 02:30", "Australia/Lord_Howe", one(2, 3, 6), 1, "2026-10-03T15:15:00Z", 1, schedule.Default, "2026-10-03T15:30:00Z", 6, 0},
		{"Lord Howe spring: the window lasts 30 minutes", "Australia/Lord_Howe", one(2, 3, 6), 1, "2026-10-03T15:30:00Z", 6, 0, "2026-10-03T16:00:00Z", 1, schedule.Default},

		// Nothing changes within MaxLookahead: Next is a re-check point.
		{"NY spring swallows the only uncovered hour", "America/New_York", one(3, 2, 5), 1, "2026-03-07T08:00:00Z", 5, 0, "2026-03-08T09:00:00Z", 5, 0},
		{"no windows", "Asia/Kolkata", nil, 2, "2026-03-10T10:10:00Z", 2, schedule.Default, "2026-03-11T10:30:00Z", 2, schedule.Default},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			loc := mustZone(t, tc.zone)
			got := schedule.Evaluate(tc.windows, tc.def, loc, utc(t, tc.now))
			g.Expect(got.Replicas).To(Equal(tc.replicas), "replicas")
			g.Expect(got.Window).To(Equal(tc.window), "window")
			g.Expect(got.Next.UTC()).To(Equal(utc(t, tc.next)), "next, local %s", got.Next)
			g.Expect(got.Next.Location()).To(Equal(loc), "next is in the schedule's zone")
			g.Expect(got.NextReplicas).To(Equal(tc.nextRep), "next replicas")
			g.Expect(got.NextWindow).To(Equal(tc.nextWin), "next window")
		})
	}
}

func TestEvaluateNilLocationIsUTC(t *testing.T) {
	g := NewWithT(t)
	got := schedule.Evaluate(original, 3, nil, utc(t, "2026-03-10T10:00:00Z"))
	g.Expect(got.Window).To(Equal(0))
	g.Expect(got.Next.UTC()).To(Equal(utc(t, "2026-03-10T17:00:00Z")))
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		windows []schedule.Window
		errs    []string
	}{
		{name: "the original's schedule", windows: original},
		{name: "adjacent windows", windows: []schedule.Window{win(9, 17, 1), win(17, 9, 2)}},
		{name: "23-0 and 0-1", windows: []schedule.Window{win(23, 0, 1), win(0, 1, 2)}},
		{name: "empty window", windows: []schedule.Window{win(9, 9, 1)}, errs: []string{"window 9-9 is empty"}},
		{name: "overlap", windows: []schedule.Window{win(9, 17, 1), win(10, 12, 2)}, errs: []string{"windows 9-17 and 10-12 overlap"}},
		{name: "overlap across midnight", windows: []schedule.Window{win(22, 2, 1), win(1, 3, 2)}, errs: []string{"windows 22-2 and 1-3 overlap"}},
		{name: "two wrapping windows", windows: []schedule.Window{win(20, 1, 1), win(23, 2, 2)}, errs: []string{"windows 20-1 and 23-2 overlap"}},
		{name: "duplicates", windows: []schedule.Window{win(1, 2, 1), win(1, 2, 1)}, errs: []string{"windows 1-2 and 1-2 overlap"}},
		{name: "out of range", windows: []schedule.Window{win(24, 2, 1)}, errs: []string{"window 24-2: hours must be 0-23"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := schedule.Validate(tc.windows)
			if len(tc.errs) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			for _, e := range tc.errs {
				g.Expect(err.Error()).To(ContainSubstring(e))
			}
		})
	}
}

// TestOverlapMatchesHourSets checks the arc rule against the definition:
// two windows overlap when some hour lies in both.
func TestOverlapMatchesHourSets(t *testing.T) {
	g := NewWithT(t)
	for s1 := range 24 {
		for e1 := range 24 {
			for s2 := range 24 {
				for e2 := range 24 {
					a, b := schedule.Window{StartHour: s1, EndHour: e1}, schedule.Window{StartHour: s2, EndHour: e2}
					shared := false
					for h := range 24 {
						shared = shared || (a.Covers(h) && b.Covers(h))
					}
					if schedule.Overlap(a, b) != shared {
						g.Expect(schedule.Overlap(a, b)).To(Equal(shared), "%s and %s", a, b)
					}
				}
			}
		}
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
