package redisadmin

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
)

// movesOf returns n moves from one node to another, of slots first..first+n-1.
func movesOf(from, to string, first, n int) []move {
	out := make([]move, n)
	for i := range out {
		out[i] = move{slot: first + i, from: from, to: to}
	}
	return out
}

// concat joins lists of moves.
func concat(lists ...[]move) []move {
	var out []move
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// pairsOf names each batch "from>to:slots".
func pairsOf(bs []batch) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = fmt.Sprintf("%s>%s:%d", b.from, b.to, len(b.slots))
	}
	return out
}

func TestPlanBatches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		moves  []move
		size   int
		budget int
		want   []string
	}{
		{name: "nothing to move", moves: nil, size: 64, want: []string{}},
		{name: "cut into batches of size", moves: movesOf("a", "b", 0, 150), size: 64,
			want: []string{"a>b:64", "a>b:64", "a>b:22"}},
		{name: "a batch never mixes pairs", moves: concat(movesOf("a", "c", 0, 10), movesOf("b", "c", 10, 10)), size: 64,
			want: []string{"a>c:10", "b>c:10"}},
		{name: "without a budget every pair drains in turn", moves: concat(movesOf("a", "c", 0, 128), movesOf("b", "d", 200, 64)), size: 64,
			want: []string{"a>c:64", "b>d:64", "a>c:64"}},
		{name: "a budget is spent round-robin over the pairs", moves: concat(movesOf("a", "c", 0, 300), movesOf("b", "d", 400, 300)), size: 64, budget: 200,
			want: []string{"a>c:64", "b>d:64", "a>c:64", "b>d:8"}},
		{name: "a budget larger than the plan", moves: movesOf("a", "b", 0, 10), size: 64, budget: 1000,
			want: []string{"a>b:10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := planBatches(tc.moves, tc.size, tc.budget)
			g.Expect(pairsOf(got)).To(Equal(tc.want))
			total := 0
			seen := map[int]bool{}
			for _, b := range got {
				for _, s := range b.slots {
					g.Expect(seen[s]).To(BeFalse(), "slot %d planned twice", s)
					seen[s] = true
				}
				total += len(b.slots)
			}
			if tc.budget > 0 {
				g.Expect(total).To(BeNumerically("<=", tc.budget))
			}
		})
	}
}

// disjoint expects no node to be in two batches of the wave.
func disjoint(g *WithT, wave []batch) {
	busy := map[string]bool{}
	for _, b := range wave {
		g.Expect(busy[b.from]).To(BeFalse(), "%s twice in wave %v", b.from, pairsOf(wave))
		g.Expect(busy[b.to]).To(BeFalse(), "%s twice in wave %v", b.to, pairsOf(wave))
		busy[b.from], busy[b.to] = true, true
	}
}

func TestWaves(t *testing.T) {
	threeToFive := planBatches(planMoves([]string{"a", "b", "c", "d", "e"}, layout("a", "b", "c")), 64, 0)
	fiveToThree := planBatches(planMoves([]string{"a", "b", "c"}, layout("a", "b", "c", "d", "e")), 64, 0)
	for _, tc := range []struct {
		name     string
		batches  []batch
		parallel int
		// want is the number of waves.
		want int
	}{
		{name: "one pair runs alone", batches: planBatches(movesOf("a", "b", 0, 640), 64, 0), want: 10},
		{name: "disjoint pairs run together", batches: planBatches(concat(movesOf("a", "c", 0, 640), movesOf("b", "d", 1000, 640)), 64, 0), want: 10},
		{name: "parallel bounds a wave", batches: planBatches(concat(movesOf("a", "c", 0, 640), movesOf("b", "d", 1000, 640)), 64, 0), parallel: 1, want: 20},
		{name: "a shared destination serializes", batches: planBatches(concat(movesOf("a", "c", 0, 640), movesOf("b", "c", 1000, 640)), 64, 0), want: 20},
		// Pairs a>d, b>d, b>e, c>e cut into 106 batches: at most two
		// disjoint pairs exist at a time, and every wave has two batches.
		{name: "3 to 5 masters", batches: threeToFive, want: 53},
		{name: "5 to 3 masters", batches: fiveToThree, want: 53},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ws := waves(tc.batches, tc.parallel)
			g.Expect(ws).To(HaveLen(tc.want))
			var flat []batch
			for _, w := range ws {
				g.Expect(w).NotTo(BeEmpty())
				if tc.parallel > 0 {
					g.Expect(len(w)).To(BeNumerically("<=", tc.parallel))
				}
				disjoint(g, w)
				flat = append(flat, w...)
			}
			g.Expect(flat).To(ConsistOf(tc.batches), "every batch once")
			// The batches of one pair keep their order.
			last := map[pair]int{}
			for _, b := range flat {
				p := pair{b.from, b.to}
				if prev, ok := last[p]; ok {
					g.Expect(b.slots[0]).To(BeNumerically(">", prev))
				}
				last[p] = b.slots[0]
			}
		})
	}
}
