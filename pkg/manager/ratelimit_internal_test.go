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
		out[i] = l.reserve(func() time.Time { return l.epoch }).delay
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
			qps: 20, burst: 30,
			want: append(make([]time.Duration, 30), 250*ms, 250*ms, 250*ms, 250*ms, 250*ms, 500*ms, 500*ms, 500*ms, 500*ms, 500*ms, 750*ms),
		},
		"one per second is let out on its own second": {
			qps: 1, burst: 1,
			want: []time.Duration{0, 1000 * ms, 2000 * ms, 3000 * ms},
		},
		"a token between two boundaries waits for the next": {
			qps: 3, burst: 1,
			want: []time.Duration{0, 500 * ms, 750 * ms, 1000 * ms, 1500 * ms},
		},
		"no group is larger than the burst: a burst of 1 at 20 per second goes one by one": {
			qps: 20, burst: 1,
			want: []time.Duration{0, 50 * ms, 100 * ms, 150 * ms, 200 * ms, 250 * ms},
		},
		"a burst of 2 at 20 per second goes two by two": {
			qps: 20, burst: 2,
			want: []time.Duration{0, 0, 100 * ms, 100 * ms, 200 * ms, 200 * ms, 300 * ms},
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
			// Never more at once than the burst.
			groups := map[time.Duration]int{}
			for _, at := range got {
				groups[at]++
			}
			for at, size := range groups {
				g.Expect(size).To(BeNumerically("<=", tc.burst), "let out at %v", at)
			}
		})
	}
}

func TestQuantizedLimiterWithARateTooLowToRefillStaysLimited(t *testing.T) {
	g := NewWithT(t)
	l := newQuantizedLimiter(1e-12, 1, 250*time.Millisecond)
	got := releases(l, 2)
	g.Expect(got[0]).To(BeZero(), "the burst")
	g.Expect(got[1]).To(BeNumerically(">", time.Hour), "the next token is as far off as the rate says, not let out at once")
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
	g.Expect(l.reserve(time.Now).delay).To(BeNumerically("<=", 1250*time.Millisecond))
	g.Expect(l.QPS()).To(BeNumerically("==", 1))
}

func TestQuantizedLimiterWaitsUntilTheBoundary(t *testing.T) {
	g := NewWithT(t)
	// After a burst of 2, the next token comes 500 ms from the bucket's
	// start; its holder waits for the boundary, 750 ms from the start.
	l := newQuantizedLimiter(2, 2, 750*time.Millisecond)
	g.Expect(l.quantum).To(Equal(750 * time.Millisecond))
	g.Expect(l.TryAccept()).To(BeTrue(), "the burst goes at once")
	g.Expect(l.TryAccept()).To(BeTrue(), "the burst goes at once")
	g.Expect(l.Wait(context.Background())).To(Succeed())
	g.Expect(time.Since(l.epoch)).To(BeNumerically(">=", 750*time.Millisecond))
}

func TestQuantizedLimiterWaitsOnlyForTheTokenWhenTheDeadlineComesBeforeTheBoundary(t *testing.T) {
	g := NewWithT(t)
	// A burst of 20 at 2 per second keeps the quantum at 5 s.
	l := newQuantizedLimiter(2, 20, 5*time.Second)
	g.Expect(l.quantum).To(Equal(5 * time.Second))
	for range 20 {
		g.Expect(l.TryAccept()).To(BeTrue(), "the burst goes at once")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	g.Expect(l.Wait(ctx)).To(Succeed(), "the token comes 500 ms after the burst, before the deadline")
	g.Expect(time.Since(start)).To(BeNumerically("<", 3*time.Second), "not held until the boundary")
}
