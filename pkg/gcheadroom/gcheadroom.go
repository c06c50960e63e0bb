// Package gcheadroom caps how far the Go heap grows past its live objects
// between two collections.
//
// Go's garbage collector lets the heap grow by GOGC percent (100 by
// default) of what the last collection found live before it collects
// again, so a manager's peak memory is about twice its live heap, and every
// further custom resource, whose cached objects are live, costs twice its
// size. Past a live heap of the headroom, this package lowers the percent
// after each collection so that the heap grows by the headroom alone: each
// further custom resource then costs about its own size, for some more
// collections of a larger heap. Below it, the collector runs as GOGC says.
// (Go applies the percent to the stacks and globals too, so the heap grows
// by slightly more than the headroom.)
package gcheadroom

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// MinPercent is the lowest percent the tuner sets: with a live heap many
// times the headroom, collecting after growing by less than a quarter of it
// would cost more CPU than the memory is worth.
const MinPercent = 25

// liveMetric is the heap the last collection found live; percentMetric the
// percent in effect (GOGC, or what debug.SetGCPercent set last).
const (
	liveMetric    = "/gc/heap/live:bytes"
	percentMetric = "/gc/gogc:percent"
)

// CurrentPercent returns the percent in effect, -1 for GOGC=off, read
// without setting it (debug.SetGCPercent, the only other way to read it,
// would turn an off collector on for a moment).
func CurrentPercent() int {
	sample := []metrics.Sample{{Name: percentMetric}}
	metrics.Read(sample)
	// GOGC=off is -1 in the runtime, which the metric hands out as a uint64.
	if v := sample[0].Value.Uint64(); v <= math.MaxInt32 {
		return int(v)
	}
	return -1
}

// Percent returns the GOGC percent under which a heap of live bytes grows
// by at most headroom bytes before the next collection, between MinPercent
// and base, the percent in effect without the tuner.
func Percent(live, headroom uint64, base int) int {
	if base <= MinPercent || live == 0 {
		return base
	}
	// base bounds the percent, so the conversion cannot overflow; base is
	// above MinPercent here.
	return max(int(min(headroom*100/live, uint64(base))), MinPercent)
}

// tuner sets the percent after each collection.
type tuner struct {
	headroom uint64
	base     int
	sample   []metrics.Sample
	// mu keeps the read of the live heap and the percent set from it one
	// step, and guards percent and stopped.
	mu      sync.Mutex
	percent int
	stopped bool
}

// sentinel is an object nothing refers to, whose finalizer runs after each
// collection. It holds a pointer so that it is not a tiny allocation, whose
// finalizer could wait for the objects that share its block.
type sentinel struct{ t *tuner }

// Start caps the heap's growth between collections at headroom bytes once
// the live heap is larger than that, and returns a function that gives the
// collector back its own percent. With GOGC=off, or a GOGC at or below
// MinPercent, or a headroom of 0, it changes nothing.
func Start(headroom uint64) (stop func()) {
	base := CurrentPercent()
	if headroom == 0 || base <= MinPercent {
		return func() {}
	}
	t := &tuner{headroom: headroom, base: base, percent: base, sample: []metrics.Sample{{Name: liveMetric}}}
	t.arm()
	return t.stop
}

// arm sets a finalizer on a new sentinel, which the next collection finds
// unreachable.
func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{t: t}, func(s *sentinel) { s.t.collected() })
}

// collected runs after each collection: it sets the percent from the live
// heap the collection found, and arms the next sentinel.
func (t *tuner) collected() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		if p := Percent(t.sample[0].Value.Uint64(), t.headroom, t.base); p != t.percent {
			debug.SetGCPercent(p)
			t.percent = p
		}
	}
	t.arm()
}

// stop gives the collector back its base percent; the armed sentinel's
// finalizer then does nothing.
func (t *tuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		debug.SetGCPercent(t.base)
	}
}
