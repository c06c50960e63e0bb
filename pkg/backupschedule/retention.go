package backupschedule

import (
	"sort"
	"time"
)

// Backup is what retention needs to know of one backup a schedule made.
type Backup struct {
	// Name identifies the backup.
	Name string
	// Scheduled is the tick the backup was made for; backups are ordered by it.
	Scheduled time.Time
	// Finished is false while the backup runs: a running backup is never
	// removed.
	Finished bool
	// Succeeded says a finished backup is complete and verified.
	Succeeded bool
}

// Retention is a schedule's policy. A complete backup is kept when any of
// its rules keeps it; with no rule at all, every backup is kept.
type Retention struct {
	// KeepLast keeps the newest KeepLast complete backups (0: no such rule).
	KeepLast int
	// KeepWithin keeps every complete backup made for a tick no older than
	// this (0: no such rule).
	KeepWithin time.Duration
	// KeepFailed keeps the newest KeepFailed failed backups, whose status
	// says why they failed; older ones are removed.
	KeepFailed int
}

// Expired returns the names of the finished backups retention removes,
// oldest first. The newest complete backup is always kept, so that a
// schedule whose recent runs all fail still has something to restore.
func (r Retention) Expired(backups []Backup, now time.Time) []string {
	sorted := append([]Backup(nil), backups...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Scheduled.After(sorted[j].Scheduled) })
	var expired []Backup
	complete, failed := 0, 0
	for _, b := range sorted {
		switch {
		case !b.Finished:
			continue
		case b.Succeeded:
			complete++
			if complete == 1 || r.keeps(complete, b, now) {
				continue
			}
		default:
			failed++
			if failed <= r.KeepFailed {
				continue
			}
		}
		expired = append(expired, b)
	}
	names := make([]string, 0, len(expired))
	for i := len(expired) - 1; i >= 0; i-- {
		names = append(names, expired[i].Name)
	}
	return names
}

// keeps says whether a rule keeps the complete backup b, the rank-th newest.
func (r Retention) keeps(rank int, b Backup, now time.Time) bool {
	if r.KeepLast == 0 && r.KeepWithin == 0 {
		return true
	}
	if r.KeepLast > 0 && rank <= r.KeepLast {
		return true
	}
	return r.KeepWithin > 0 && now.Sub(b.Scheduled) <= r.KeepWithin
}

// NextExpiry is the first time after now at which KeepWithin stops
// keeping one of the complete backups, or the zero time when none will:
// when a schedule that creates nothing (suspended) must apply its
// retention again. Another rule may still keep that backup then.
func (r Retention) NextExpiry(backups []Backup, now time.Time) time.Time {
	var first time.Time
	if r.KeepWithin <= 0 {
		return first
	}
	for _, b := range backups {
		if !b.Finished || !b.Succeeded {
			continue
		}
		at := b.Scheduled.Add(r.KeepWithin)
		if at.After(now) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}
