package manager

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// releases reserves n tokens at once, at the bucket's start, and returns
// when each holder would be let out, counted from the start.
func releases(l *quantizedLimiter, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		_, delay := l.reserve(l.epoch)
		out[i] = delay
	}
	return out
}

func TestQuantizedLimiterLetsWaitingRequestsOutTogether(t *testing.T) {
	ms := time.Millisecond
	for name, tc := range map[string]struct {
		qps   float32
		burst int
		want  []time.Duration
	}{
		"the burst at once, then five per quarter second at 20 per second": {
			qps: 20, burst: 3,
			want: []time.Duration{0, 0, 0, 250 * ms, 250 * ms, 250 * ms, 250 * ms, 250 * ms, 500 * ms, 500 * ms, 500 * ms, 500 * ms, 500 * ms, 750 * ms},
		},
		"one per second is let out on its own second": {
			qps: 1, burst: 1,
			want: []time.Duration{0, 1000 * ms, 2000 * ms, 3000 * ms},
		},
		"a token between two boundaries waits for the next": {
			qps: 3, burst: 1,
			want: []time.Duration{0, 500 * ms, 750 * ms, 1000 * ms, 1500 * ms},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			l := newQuantizedLimiter(tc.qps, tc.burst, 250*ms)
			got := releases(l, len(tc.want))
			g.Expect(got).To(Equal(tc.want))
			// Never faster than the rate: the k-th token after the burst
			// is let out no sooner than k/qps.
			for i, at := range got[tc.burst:] {
				g.Expect(at.Seconds()).To(BeNumerically(">=", float64(i+1)/float64(tc.qps)-1e-9), "token %d", tc.burst+i)
			}
		})
	}
}

func TestQuantizedLimiterGivesBackTheTokenOfACancelledWait(t *testing.T) {
	g := NewWithT(t)
	l := newQuantizedLimiter(1, 1, 250*time.Millisecond)
	g.Expect(l.TryAccept()).To(BeTrue(), "the burst")
	g.Expect(l.TryAccept()).To(BeFalse(), "the burst is spent")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Expect(l.Wait(ctx)).To(MatchError(context.Canceled))

	deadline, cancelDeadline := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelDeadline()
	g.Expect(l.Wait(deadline)).To(MatchError(ContainSubstring("past the context's deadline")), "a wait longer than the deadline fails at once")

	// Both tokens were given back: the next one still comes within the
	// second after the burst, not two or three seconds later.
	_, delay := l.reserve(time.Now())
	g.Expect(delay).To(BeNumerically("<=", 1250*time.Millisecond))
	g.Expect(l.QPS()).To(BeNumerically("==", 1))
}

func TestQuantizedLimiterWaitsUntilTheBoundary(t *testing.T) {
	g := NewWithT(t)
	l := newQuantizedLimiter(20, 1, 250*time.Millisecond)
	g.Expect(l.Wait(context.Background())).To(Succeed(), "the burst goes at once")
	start := time.Now()
	g.Expect(l.Wait(context.Background())).To(Succeed())
	// The second token comes 50 ms after the first; its holder waits for
	// the boundary, which is 250 ms from the bucket's start.
	g.Expect(time.Since(l.epoch)).To(BeNumerically(">=", 250*time.Millisecond))
	g.Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second))
}
