package backupschedule

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func TestRetentionExpired(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	// daily returns n daily backups, the newest an hour ago, named by age
	// in days, with the given outcomes (c: complete, f: failed, r: running).
	daily := func(outcomes string) []Backup {
		var out []Backup
		for i, o := range outcomes {
			out = append(out, Backup{
				Name:      fmt.Sprintf("d%d", i),
				Scheduled: now.Add(-time.Hour - time.Duration(i)*24*time.Hour),
				Finished:  o != 'r',
				Succeeded: o == 'c',
			})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		retention Retention
		backups   []Backup
		want      []string
	}{
		{name: "no rule keeps everything complete", backups: daily("ccccc"), retention: Retention{KeepFailed: 1}, want: []string{}},
		{name: "keep last 3", backups: daily("ccccc"), retention: Retention{KeepLast: 3}, want: []string{"d4", "d3"}},
		{name: "keep within 2 days", backups: daily("ccccc"), retention: Retention{KeepWithin: 48 * time.Hour}, want: []string{"d4", "d3", "d2"}},
		{name: "either rule keeps", backups: daily("ccccc"), retention: Retention{KeepLast: 1, KeepWithin: 36 * time.Hour}, want: []string{"d4", "d3", "d2"}},
		{name: "failed ones beyond KeepFailed go", backups: daily("fcfcf"), retention: Retention{KeepLast: 5, KeepFailed: 1}, want: []string{"d4", "d2"}},
		{name: "a running backup is never removed", backups: daily("rcccc"), retention: Retention{KeepLast: 1}, want: []string{"d4", "d3", "d2"}},
		{name: "the newest complete survives every rule", backups: daily("ffffc"), retention: Retention{KeepWithin: time.Hour}, want: []string{"d3", "d2", "d1", "d0"}},
		{name: "order of the input does not matter", backups: func() []Backup { b := daily("ccccc"); b[0], b[4] = b[4], b[0]; return b }(), retention: Retention{KeepLast: 3}, want: []string{"d4", "d3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.retention.Expired(tc.backups, now)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Expired = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRetentionProperties checks, on random histories, what a user relies
// on: running backups and the newest complete one are never removed, and
// each complete backup is kept exactly when a rule keeps it.
func TestRetentionProperties(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var backups []Backup
		for j := range r.IntN(30) {
			f := r.IntN(10)
			backups = append(backups, Backup{
				Name:      fmt.Sprintf("b%d", j),
				Scheduled: now.Add(-time.Duration(r.IntN(90*24)) * time.Hour),
				Finished:  f != 0,
				Succeeded: f > 2,
			})
		}
		retention := Retention{KeepLast: r.IntN(5), KeepWithin: time.Duration(r.IntN(30*24)) * time.Hour, KeepFailed: r.IntN(3)}
		removed := map[string]bool{}
		for _, name := range retention.Expired(backups, now) {
			removed[name] = true
		}
		var newest *Backup
		keptComplete, removedComplete := 0, 0
		for k := range backups {
			b := &backups[k]
			if !b.Finished && removed[b.Name] {
				t.Fatalf("%+v: running backup %s removed", retention, b.Name)
			}
			if b.Succeeded && b.Finished {
				if newest == nil || b.Scheduled.After(newest.Scheduled) {
					newest = b
				}
				if removed[b.Name] {
					removedComplete++
					if retention.KeepWithin > 0 && now.Sub(b.Scheduled) <= retention.KeepWithin {
						t.Fatalf("%+v: %s removed within KeepWithin", retention, b.Name)
					}
				} else {
					keptComplete++
				}
			}
		}
		if newest != nil && removed[newest.Name] {
			t.Fatalf("%+v: the newest complete backup %s removed", retention, newest.Name)
		}
		if retention.KeepLast > 0 && removedComplete > 0 && keptComplete < retention.KeepLast {
			t.Fatalf("%+v: %d complete kept, fewer than KeepLast while some were removed", retention, keptComplete)
		}
	}
}

func TestRetentionNextExpiry(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	backups := []Backup{
		{Name: "old", Scheduled: now.Add(-72 * time.Hour), Finished: true, Succeeded: true},
		{Name: "recent", Scheduled: now.Add(-20 * time.Hour), Finished: true, Succeeded: true},
		{Name: "newer", Scheduled: now.Add(-2 * time.Hour), Finished: true, Succeeded: true},
		{Name: "failed", Scheduled: now.Add(-23 * time.Hour), Finished: true},
		{Name: "running", Scheduled: now.Add(-23 * time.Hour)},
	}
	if got, want := (Retention{KeepWithin: 24 * time.Hour}).NextExpiry(backups, now), now.Add(4*time.Hour); !got.Equal(want) {
		t.Fatalf("NextExpiry = %v, want %v (recent's)", got, want)
	}
	if got := (Retention{KeepLast: 3}).NextExpiry(backups, now); !got.IsZero() {
		t.Fatalf("NextExpiry without KeepWithin = %v, want none", got)
	}
}
