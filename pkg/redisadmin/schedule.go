package redisadmin

import (
	"sort"
)

// batch is a run of slots that move together from one node to another:
// they are opened for migration at once, their keys move with pipelined
// MIGRATEs, and they are handed over with one pipeline of SETSLOT NODE.
type batch struct {
	from, to string
	slots    []int
}

// pair names a source and a destination.
type pair struct{ from, to string }

// planBatches cuts moves (grouped by source and destination, as planMoves
// returns them) into batches of at most size slots, and keeps at most
// budget slots in all (no bound when budget <= 0). When the budget cuts the
// plan short, it is spent round-robin, one batch per source and destination
// in turn, so that a bounded run still has disjoint pairs to move in
// parallel instead of draining one source first.
func planBatches(moves []move, size, budget int) []batch {
	if size <= 0 {
		size = 1
	}
	var pairs []pair
	queues := map[pair][]batch{}
	for start := 0; start < len(moves); {
		p := pair{moves[start].from, moves[start].to}
		end := start
		for end < len(moves) && end-start < size && moves[end].from == p.from && moves[end].to == p.to {
			end++
		}
		if _, seen := queues[p]; !seen {
			pairs = append(pairs, p)
		}
		queues[p] = append(queues[p], batch{from: p.from, to: p.to, slots: slotNumbers(moves[start:end])})
		start = end
	}
	if budget <= 0 {
		budget = len(moves)
	}
	var out []batch
	for budget > 0 {
		took := false
		for _, p := range pairs {
			q := queues[p]
			if len(q) == 0 || budget == 0 {
				continue
			}
			b := q[0]
			if len(b.slots) > budget {
				b.slots = b.slots[:budget]
			}
			out = append(out, b)
			budget -= len(b.slots)
			queues[p] = q[1:]
			took = true
		}
		if !took {
			break
		}
	}
	return out
}

func slotNumbers(moves []move) []int {
	out := make([]int, len(moves))
	for i, m := range moves {
		out[i] = m.slot
	}
	return out
}

// waves orders batches into waves that run in parallel, at most parallel
// batches each (no bound when parallel <= 0). No node is the source or the
// destination of two batches of one wave: MIGRATE blocks its source until
// the destination answered, so a second batch on a busy node would only
// queue behind the first, and its SETSLOTs would race with the first's.
// Each wave takes the pairs with the most batches left first, so that the
// longest queues shrink in parallel with the others rather than last and
// alone. The batches of one pair keep their order.
func waves(batches []batch, parallel int) [][]batch {
	var pairs []pair
	queues := map[pair][]batch{}
	for _, b := range batches {
		p := pair{b.from, b.to}
		if _, seen := queues[p]; !seen {
			pairs = append(pairs, p)
		}
		queues[p] = append(queues[p], b)
	}
	var out [][]batch
	for left := len(batches); left > 0; {
		order := append([]pair(nil), pairs...)
		sort.SliceStable(order, func(i, j int) bool { return len(queues[order[i]]) > len(queues[order[j]]) })
		busy := map[string]bool{}
		var wave []batch
		for _, p := range order {
			if len(queues[p]) == 0 || busy[p.from] || busy[p.to] || (parallel > 0 && len(wave) == parallel) {
				continue
			}
			busy[p.from], busy[p.to] = true, true
			wave = append(wave, queues[p][0])
			queues[p] = queues[p][1:]
		}
		left -= len(wave)
		out = append(out, wave)
	}
	return out
}
