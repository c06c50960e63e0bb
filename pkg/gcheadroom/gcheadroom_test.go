package gcheadroom_test

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

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

// holdLive makes live bytes live until the test ends.
func holdLive(t *testing.T) {
	keep = nil
	for range live / mib {
		keep = append(keep, make([]byte, mib))
	}
	t.Cleanup(func() { keep = nil })
}

// percentAfterCollections collects and returns the percent in effect once
// the tuner, if any, has had the collection's finalizers run.
func percentAfterCollections(g Gomega, want func(int) bool) int {
	var p int
	g.Eventually(func() bool {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer goroutine's turn
		p = gcheadroom.CurrentPercent()
		return want(p)
	}).WithTimeout(5 * time.Second).WithPolling(50 * time.Millisecond).Should(BeTrue())
	return p
}

// TestStartCapsTheHeapsGrowthAtTheHeadroom: with 64 MiB live and 24 MiB of
// headroom, the tuner sets the percent to about 24/64 of the heap after a
// collection (the test binary's own few MiB are live too); stopped, the
// collector is back at its own percent.
func TestStartCapsTheHeapsGrowthAtTheHeadroom(t *testing.T) {
	g := NewWithT(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	holdLive(t)
	runtime.GC()
	g.Expect(gcheadroom.CurrentPercent()).To(Equal(100))

	stop := gcheadroom.Start(24 * mib)
	defer stop()
	p := percentAfterCollections(g, func(p int) bool { return p != 100 })
	g.Expect(p).To(BeNumerically("~", 24*100/64, 4), "24 MiB over about 64 MiB live")

	stop()
	stop()
	g.Expect(gcheadroom.CurrentPercent()).To(Equal(100), "stop gives the collector its percent back")
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	g.Expect(gcheadroom.CurrentPercent()).To(Equal(100), "a stopped tuner sets nothing after a collection")
}

// TestStartFollowsALowerGOGC: under GOGC=30 the tuner never sets more than
// 30, even where the headroom alone would allow it.
func TestStartFollowsALowerGOGC(t *testing.T) {
	g := NewWithT(t)
	defer debug.SetGCPercent(debug.SetGCPercent(30))
	holdLive(t)
	stop := gcheadroom.Start(48 * mib)
	defer stop()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	g.Expect(percentAfterCollections(g, func(int) bool { return true })).To(Equal(30))
}

// TestStartWithoutHeadroomChangesNothing: a headroom of 0 leaves GOGC as
// it is (a tuner with no headroom would set the floor, 25).
func TestStartWithoutHeadroomChangesNothing(t *testing.T) {
	g := NewWithT(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	holdLive(t)
	stop := gcheadroom.Start(0)
	defer stop()
	for range 3 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond)
	g.Expect(gcheadroom.CurrentPercent()).To(Equal(100))
}

func TestCurrentPercentReadsGOGCOff(t *testing.T) {
	g := NewWithT(t)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	g.Expect(gcheadroom.CurrentPercent()).To(Equal(-1))
	debug.SetGCPercent(70)
	g.Expect(gcheadroom.CurrentPercent()).To(Equal(70))
}
