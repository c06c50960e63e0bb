// Package testclock holds the clock the tests and the benchmark give a
// controller to cross a time boundary without waiting for it.
package testclock

import (
	"sync/atomic"
	"time"
)

// Offset is the real clock shifted by an offset that a test moves: it runs
// at the speed of real time from a chosen instant, so that the manager's
// real requeue timers and the controller's idea of the time agree.
type Offset struct{ offset atomic.Int64 }

// Now is the real time plus the offset.
func (o *Offset) Now() time.Time { return time.Now().Add(time.Duration(o.offset.Load())) }

// Since is the time elapsed since t on this clock.
func (o *Offset) Since(t time.Time) time.Duration { return o.Now().Sub(t) }

// Set makes the clock read to now and returns the real time it did so.
func (o *Offset) Set(to time.Time) time.Time {
	now := time.Now()
	o.offset.Store(int64(to.Sub(now)))
	return now
}
