package gcheadroom_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/gcheadroom"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	for name, tc := range map[string]struct {
		live, headroom uint64
		base, want     int
	}{
		"nothing live yet":                  {live: 0, headroom: 16 * mib, base: 100, want: 100},
		"live below the headroom":           {live: 8 * mib, headroom: 16 * mib, base: 100, want: 100},
		"live at the headroom":              {live: 16 * mib, headroom: 16 * mib, base: 100, want: 100},
		"live twice the headroom":           {live: 32 * mib, headroom: 16 * mib, base: 100, want: 50},
		"live far above the headroom":       {live: 640 * mib, headroom: 16 * mib, base: 100, want: gcheadroom.MinPercent},
		"a lower GOGC is a ceiling":         {live: 32 * mib, headroom: 16 * mib, base: 40, want: 40},
		"a GOGC at the floor stays":         {live: 64 * mib, headroom: 16 * mib, base: gcheadroom.MinPercent, want: gcheadroom.MinPercent},
		"a higher GOGC is followed below":   {live: 8 * mib, headroom: 16 * mib, base: 200, want: 200},
		"a higher GOGC is capped above too": {live: 64 * mib, headroom: 16 * mib, base: 200, want: 25},
		"GOGC=off":                          {live: 64 * mib, headroom: 16 * mib, base: -1, want: -1},
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(gcheadroom.Percent(tc.live, tc.headroom, tc.base)).To(Equal(tc.want))
		})
	}
}

// keep holds the test's live heap where the compiler can't drop it.
var keep [][]byte

// live is the test's live heap.
const live = 64 * mib

// typicalGoal allocates garbage, 64 KiB at a time, beside a live heap of
// live bytes, and returns the median heap goal the collector set meanwhile.
// (The largest is not a measure: a collection that runs while much is
// allocated finds the new objects live, and sets the next goal above them.)
func typicalGoal() uint64 {
	keep = nil
	for range live / mib {
		keep = append(keep, make([]byte, mib))
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	var goals []uint64
	var sink []byte
	// The first collections of the loop let the tuner see the live heap;
	// the goal is read after them.
	for i := range 4 * 8192 {
		sink = make([]byte, 64<<10)
		sink[0] = byte(i)
		if i >= 8192 && i%64 == 0 {
			metrics.Read(sample)
			goals = append(goals, sample[0].Value.Uint64())
		}
	}
	_ = sink
	keep = nil
	slices.Sort(goals)
	return goals[len(goals)/2]
}

// TestStartCapsTheHeapsGrowthAtTheHeadroom: with 64 MiB live, the
// collector's own GOGC=100 lets the heap reach about twice that before it
// collects; under the tuner with 24 MiB of headroom, about 64 + 24 MiB.
// Stopped, the collector is back at its own percent.
func TestStartCapsTheHeapsGrowthAtTheHeadroom(t *testing.T) {
	g := NewWithT(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const headroom = 24 * mib

	g.Expect(typicalGoal()).To(BeNumerically(">", live*15/8), "without the tuner, the heap grows by GOGC=100")

	stop := gcheadroom.Start(headroom)
	defer stop()
	g.Expect(typicalGoal()).To(BeNumerically("<", live+headroom+8*mib), "the tuner caps the growth")

	stop()
	stop()
	g.Expect(debug.SetGCPercent(100)).To(Equal(100), "stop gives the collector its percent back")
	g.Expect(typicalGoal()).To(BeNumerically(">", live*15/8))
}

// TestStartChangesNothingUnderGOGCOff: a user's GOGC=off (or a headroom of
// 0) turns the tuner off.
func TestStartChangesNothingUnderGOGCOff(t *testing.T) {
	g := NewWithT(t)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	stop := gcheadroom.Start(8 * mib)
	defer stop()
	runtime.GC()
	runtime.GC()
	g.Expect(debug.SetGCPercent(-1)).To(Equal(-1))

	debug.SetGCPercent(100)
	stopNone := gcheadroom.Start(0)
	defer stopNone()
	g.Expect(typicalGoal()).To(BeNumerically(">", 120*mib))
}
