package backupschedule

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, expression, timeZone, wantErr string
	}{
		{name: "five fields", expression: "30 2 * * *"},
		{name: "descriptor", expression: "@daily"},
		{name: "ranges and steps", expression: "*/15 8-18 * * 1-5", timeZone: "Europe/Berlin"},
		{name: "empty", expression: "  ", wantErr: "empty"},
		{name: "six fields (seconds)", expression: "0 30 2 * * *", wantErr: "five fields"},
		{name: "nonsense", expression: "every night", wantErr: "five fields"},
		{name: "own time zone", expression: "CRON_TZ=Asia/Tokyo 0 3 * * *", wantErr: "spec.timeZone"},
		{name: "own TZ", expression: "TZ=UTC 0 3 * * *", wantErr: "spec.timeZone"},
		{name: "unknown zone", expression: "0 3 * * *", timeZone: "Mars/Olympus", wantErr: "unknown time zone"},
		{name: "every second", expression: "@every 1s", wantErr: "@every is not offered"},
		{name: "never fires", expression: "0 0 30 2 *", wantErr: "never fires"},
		{name: "too long", expression: "0 0 * * " + strings.Repeat("1,", 60) + "1", wantErr: "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.expression, tc.timeZone)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Parse(%q): %v", tc.expression, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Parse(%q) = %v, want an error with %q", tc.expression, err, tc.wantErr)
			}
		})
	}
}

func TestDue(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name                 string
		expression, timeZone string
		last, created, now   string
		wantDue, wantNext    string // "" is the zero time
	}{
		{name: "nothing due yet after creation", expression: "0 3 * * *",
			created: "2026-11-28T10:00:00Z", now: "2026-11-28T11:00:00Z", wantNext: "2026-11-29T03:00:00Z"},
		{name: "first tick after creation", expression: "0 3 * * *",
			created: "2026-11-28T10:00:00Z", now: "2026-11-29T03:00:05Z", wantDue: "2026-11-29T03:00:00Z", wantNext: "2026-11-30T03:00:00Z"},
		{name: "the tick already run is not due again", expression: "0 3 * * *",
			last: "2026-11-29T03:00:00Z", created: "2026-11-01T00:00:00Z", now: "2026-11-29T09:00:00Z", wantNext: "2026-11-30T03:00:00Z"},
		{name: "ticks missed over three days collapse into the latest", expression: "0 3 * * *",
			last: "2026-11-25T03:00:00Z", created: "2026-11-01T00:00:00Z", now: "2026-11-28T12:00:00Z",
			wantDue: "2026-11-28T03:00:00Z", wantNext: "2026-11-29T03:00:00Z"},
		{name: "every minute after a month's outage: the latest minute", expression: "* * * * *",
			last: "2026-10-28T12:00:00Z", created: "2026-10-01T00:00:00Z", now: "2026-11-28T12:00:30Z",
			wantDue: "2026-11-28T12:00:00Z", wantNext: "2026-11-28T12:01:00Z"},
		{name: "weekly, missed three weeks ago and since", expression: "0 4 * * 0",
			last: "2026-10-25T04:00:00Z", created: "2026-10-01T00:00:00Z", now: "2026-11-20T00:00:00Z",
			wantDue: "2026-11-15T04:00:00Z", wantNext: "2026-11-22T04:00:00Z"},
		{name: "yearly", expression: "0 0 1 1 *",
			last: "2025-01-01T00:00:00Z", created: "2024-06-01T00:00:00Z", now: "2026-11-28T00:00:00Z",
			wantDue: "2026-01-01T00:00:00Z", wantNext: "2027-01-01T00:00:00Z"},
		{name: "in the schedule's time zone", expression: "0 3 * * *", timeZone: "Asia/Tokyo",
			created: "2026-11-28T00:00:00Z", now: "2026-11-28T18:30:00Z", wantDue: "2026-11-28T18:00:00Z", wantNext: "2026-11-29T18:00:00Z"},
		{name: "a missed tick older than created is not owed", expression: "0 3 * * *",
			created: "2026-11-28T04:00:00Z", now: "2026-11-28T05:00:00Z", wantNext: "2026-11-29T03:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.expression, tc.timeZone)
			if err != nil {
				t.Fatal(err)
			}
			var last time.Time
			if tc.last != "" {
				last = at(tc.last)
			}
			due, next := s.Due(last, at(tc.created), at(tc.now))
			var wantDue time.Time
			if tc.wantDue != "" {
				wantDue = at(tc.wantDue)
			}
			if !due.Equal(wantDue) {
				t.Errorf("due = %v, want %v", due, wantDue)
			}
			if !next.Equal(at(tc.wantNext)) {
				t.Errorf("next = %v, want %s", next, tc.wantNext)
			}
		})
	}
}

// TestDueAfterADueRunIsNothing checks the loop a controller runs: once the
// due tick is recorded as the last, nothing is due until the next tick, so
// that an outage gives exactly one run, whatever the schedule.
func TestDueAfterADueRunIsNothing(t *testing.T) {
	created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 11, 28, 12, 34, 56, 0, time.UTC)
	for _, expression := range []string{"* * * * *", "*/7 * * * *", "0 3 * * *", "0 4 * * 0", "0 0 1 * *", "0 0 29 2 *", "@hourly"} {
		s, err := Parse(expression, "Europe/Berlin")
		if err != nil {
			t.Fatal(err)
		}
		due, next := s.Due(time.Time{}, created, now)
		if due.IsZero() || due.After(now) || !next.After(now) {
			t.Fatalf("%q: due %v, next %v at %v", expression, due, next, now)
		}
		if s.Next(due).Before(next) && !s.Next(due).After(now) {
			t.Fatalf("%q: due %v is not the latest tick before %v (%v is later)", expression, due, now, s.Next(due))
		}
		if again, _ := s.Due(due, created, now); !again.IsZero() {
			t.Fatalf("%q: %v due again right after its run", expression, again)
		}
	}
}

func TestPeriod(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) // a Saturday
	for _, tc := range []struct {
		name, expression, timeZone string
		want                       time.Duration
	}{
		{name: "daily", expression: "30 2 * * *", want: 24 * time.Hour},
		{name: "hourly", expression: "@hourly", want: time.Hour},
		{name: "every five minutes", expression: "*/5 * * * *", want: 5 * time.Minute},
		{name: "weekdays: the weekend's gap", expression: "0 3 * * 1-5", want: 72 * time.Hour},
		{name: "twice a day, unevenly", expression: "0 3,9 * * *", want: 18 * time.Hour},
		{name: "weekly", expression: "@weekly", want: 7 * 24 * time.Hour},
		{name: "daily in a time zone", expression: "0 3 * * *", timeZone: "Europe/Berlin", want: 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.expression, tc.timeZone)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Period(now); got != tc.want {
				t.Fatalf("Period = %v, want %v", got, tc.want)
			}
		})
	}
}
