package schedule_test

import (
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// fuzzZones are zones with whole-hour, half-hour and quarter-hour offsets,
// one- and two-hour and half-hour DST shifts, a skipped day (Pacific/Apia,
// 2011-12-30) and zones whose rules changed often.
var fuzzZones = []string{
	"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu",
	"Australia/Eucla", "Pacific/Chatham", "America/St_Johns", "Australia/Lord_Howe",
	"Pacific/Apia", "Antarctica/Troll", "Africa/Casablanca", "America/Sao_Paulo",
	"Pacific/Kiritimati", "Etc/GMT+12", "Europe/Moscow",
}

// FuzzEvaluate checks the invariants of Evaluate for arbitrary windows
// (overlapping and empty ones included), zones and instants from 1970 to 2100:
//   - the count is the default or the count of the window that applies, and
//     that window is the first one covering the local hour;
//   - Next is strictly after now and at most MaxLookahead later;
//   - nothing changes before Next, and NextWindow/NextReplicas are what
//     applies at Next;
//   - Next is a real change unless no change lies within MaxLookahead.
func FuzzEvaluate(f *testing.F) {
	// Seeds: windows as (start, end, replicas) byte triples.
	for _, seed := range []struct {
		windows []byte
		def     int32
		zone    uint8
		unix    int64
	}{
		{[]byte{9, 17, 5, 17, 19, 3, 19, 0, 2, 1, 7, 2, 7, 9, 3}, 3, 0, 1773136800},
		{[]byte{2, 5, 7}, 1, 1, 1772951400},             // NY spring forward
		{[]byte{1, 2, 9}, 1, 1, 1793511000},             // NY fall back
		{[]byte{3, 2, 5}, 1, 1, 1772870400},             // NY: the one uncovered hour is skipped
		{[]byte{3, 4, 6}, 1, 6, 1775309400},             // Chatham fall back at 03:45
		{[]byte{2, 3, 6}, 1, 8, 1791041400},             // Lord Howe 30-minute jump
		{[]byte{0, 12, 4, 12, 0, 2}, 1, 9, 1325160000},  // Apia skipped 2011-12-30
		{[]byte{1, 3, 4}, 2, 10, 1774742400},            // Troll two-hour DST
		{[]byte{9, 9, 1, 22, 2, 4, 1, 3, 2}, 1, 3, 1e9}, // empty and overlapping windows
		{nil, 1, 5, 0}, // no windows
		{[]byte{23, 0, 1, 0, 1, 2}, 7, 7, 4102444799},     // up to 2100
		{[]byte{255, 254, 253, 128, 64, 0}, 0, 255, -1e9}, // garbage is folded into range
	} {
		f.Add(seed.windows, seed.def, seed.zone, seed.unix)
	}
	locs := make([]*time.Location, len(fuzzZones))
	for i, z := range fuzzZones {
		locs[i] = mustZone(f, z)
	}
	const minUnix, maxUnix = 0, 4102444800 // 1970 to 2100
	f.Fuzz(func(t *testing.T, raw []byte, def int32, zone uint8, unix int64) {
		var windows []schedule.Window
		for i := 0; i+2 < len(raw) && len(windows) < 24; i += 3 {
			windows = append(windows, schedule.Window{StartHour: int(raw[i]) % 24, EndHour: int(raw[i+1]) % 24, Replicas: int32(raw[i+2])})
		}
		loc := locs[int(zone)%len(locs)]
		sec := unix % (maxUnix - minUnix)
		if sec < 0 {
			sec += maxUnix - minUnix
		}
		now := time.Unix(minUnix+sec, int64(uint64(unix)%1e9)).In(loc)

		got := schedule.Evaluate(windows, def, loc, now)

		checkActive(t, windows, def, now, got.Window, got.Replicas)
		if !got.Next.After(now) || got.Next.Sub(now) > schedule.MaxLookahead {
			t.Fatalf("now %s: Next %s is not in (now, now+%s]", now, got.Next, schedule.MaxLookahead)
		}
		at := schedule.Evaluate(windows, def, loc, got.Next)
		if at.Window != got.NextWindow || at.Replicas != got.NextReplicas {
			t.Fatalf("now %s: at Next %s window %d (%d replicas) applies, Result says %d (%d)", now, got.Next, at.Window, at.Replicas, got.NextWindow, got.NextReplicas)
		}
		if got.NextWindow == got.Window && got.Next.Sub(now) <= schedule.MaxLookahead-time.Hour {
			t.Fatalf("now %s: Next %s changes nothing although it is not near the lookahead limit", now, got.Next)
		}
		// Nothing changes before Next. A change that lasts a minute or more
		// shows in a sample taken each minute; the last nanosecond is checked
		// on its own.
		for ts := now.Truncate(time.Minute).Add(time.Minute); ts.Before(got.Next); ts = ts.Add(time.Minute) {
			if w := schedule.Evaluate(windows, def, loc, ts).Window; w != got.Window {
				t.Fatalf("now %s: window %d applies at %s, before Next %s", now, w, ts.In(loc), got.Next)
			}
		}
		if w := schedule.Evaluate(windows, def, loc, got.Next.Add(-time.Nanosecond)).Window; w != got.Window {
			t.Fatalf("now %s: window %d applies just before Next %s", now, w, got.Next)
		}
	})
}

// checkActive verifies Window and Replicas against the definition: the first
// window covering the local hour, or the default.
func checkActive(t *testing.T, windows []schedule.Window, def int32, now time.Time, window int, replicas int32) {
	t.Helper()
	hour := now.Hour()
	want := schedule.Default
	for i, w := range windows {
		if w.Covers(hour) {
			want = i
			break
		}
	}
	if window != want {
		t.Fatalf("now %s (hour %d): window %d, want %d", now, hour, window, want)
	}
	wantReplicas := def
	if want != schedule.Default {
		wantReplicas = windows[want].Replicas
	}
	if replicas != wantReplicas {
		t.Fatalf("now %s: %d replicas, want %d (window %d)", now, replicas, wantReplicas, window)
	}
}
