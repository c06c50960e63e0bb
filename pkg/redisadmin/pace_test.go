package redisadmin

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestPacer(t *testing.T) {
	const ms = time.Millisecond
	// Each case starts a pacer with a budget of 2ms, KeysPerMigrate 100 and
	// windows of up to 8 slots, feeds it the windows' times, and expects
	// the window after each and the rest it asked for.
	type after struct {
		took time.Duration
		next window
		rest time.Duration
	}
	cases := []struct {
		name   string
		budget time.Duration
		rest   float64
		steps  []after
	}{
		{name: "first a single full MIGRATE, then a quarter more per window met", budget: 2 * ms, rest: 1, steps: []after{
			{took: 0, next: window{slots: 1, keys: 100}},
			{took: ms, next: window{slots: 1, keys: 100}, rest: ms},
			{took: ms, next: window{slots: 1, keys: 100}, rest: ms},
			{took: ms, next: window{slots: 1, keys: 100}, rest: ms},
			{took: 2 * ms, next: window{slots: 2, keys: 100}, rest: 2 * ms},
		}},
		{name: "a window over budget halves, down to a tenth of a MIGRATE", budget: 2 * ms, rest: 0.5, steps: []after{
			{took: 0, next: window{slots: 1, keys: 100}},
			{took: 3 * ms, next: window{slots: 1, keys: 50}, rest: 1500 * time.Microsecond},
			{took: 3 * ms, next: window{slots: 1, keys: 25}, rest: 1500 * time.Microsecond},
			{took: 3 * ms, next: window{slots: 1, keys: 12}, rest: 1500 * time.Microsecond},
			{took: 3 * ms, next: window{slots: 1, keys: 10}, rest: 1500 * time.Microsecond},
			{took: 3 * ms, next: window{slots: 1, keys: 10}, rest: 1500 * time.Microsecond},
			{took: ms, next: window{slots: 1, keys: 35}, rest: 500 * time.Microsecond},
		}},
		{name: "no rest when negative", budget: 2 * ms, rest: -1, steps: []after{
			{took: 0, next: window{slots: 1, keys: 100}},
			{took: ms, next: window{slots: 1, keys: 100}},
		}},
		{name: "off: full windows, no rest", budget: -1, rest: 1, steps: []after{
			{took: 0, next: window{slots: 8, keys: 100}},
			{took: time.Second, next: window{slots: 8, keys: 100}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			p := newPacer(c.budget, c.rest, 100)
			for i, s := range c.steps {
				if i > 0 {
					g.Expect(p.took(s.took)).To(Equal(s.rest), "rest after window %d", i)
				}
				g.Expect(p.next()).To(Equal(s.next), "window %d", i+1)
			}
		})
	}
}

func TestPacerGrowsToTheFullWindowAndStaysWithin(t *testing.T) {
	g := NewWithT(t)
	p := newPacer(2*time.Millisecond, 1, 100)
	for range 100 {
		p.took(time.Millisecond)
		g.Expect(p.next().slots).To(BeNumerically("<=", 8))
	}
	g.Expect(p.next()).To(Equal(window{slots: 8, keys: 100}))
	for range 100 {
		p.took(time.Second)
		g.Expect(p.next().keys).To(BeNumerically(">=", 10))
	}
	g.Expect(p.next()).To(Equal(window{slots: 1, keys: 10}))
	g.Expect(newPacer(time.Millisecond, 1, 2).next()).To(Equal(window{slots: 1, keys: 2}), "a tiny KeysPerMigrate")
}
