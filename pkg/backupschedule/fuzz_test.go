package backupschedule

import (
	"testing"
	"time"
)

// FuzzParse feeds Parse what a tenant may write in a schedule: it never
// panics, and a schedule it accepts fires strictly later each time and is
// due for no tick after now.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"30 2 * * *", "@weekly", "*/5 1-3 1,15 * MON-FRI", "0 0 29 2 *", "61 * * * *", "* * * * * *", "@every 1h"} {
		f.Add(seed, "Europe/Berlin")
	}
	f.Fuzz(func(t *testing.T, expression, timeZone string) {
		s, err := Parse(expression, timeZone)
		if err != nil {
			return
		}
		now := time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)
		first := s.Next(now)
		if !first.After(now) {
			t.Fatalf("%q: next %v not after %v", expression, first, now)
		}
		if second := s.Next(first); !second.IsZero() && !second.After(first) {
			t.Fatalf("%q: %v follows %v", expression, second, first)
		}
		if due, _ := s.Due(time.Time{}, now.Add(-48*time.Hour), now); due.After(now) {
			t.Fatalf("%q: due %v after now %v", expression, due, now)
		}
	})
}
