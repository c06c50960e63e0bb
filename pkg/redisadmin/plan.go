package redisadmin

import (
	"sort"
)

// move is one slot that changes owner.
type move struct {
	slot     int
	from, to string
}

// evenRanges splits the slots into n contiguous ranges whose sizes differ by
// at most one; range i belongs to the i-th master.
func evenRanges(n int) []SlotRange {
	out := make([]SlotRange, n)
	for i := range n {
		out[i] = SlotRange{From: i * NumSlots / n, To: (i+1)*NumSlots/n - 1}
	}
	return out
}

// plannedOwner returns the index of the master whose even range holds slot.
func plannedOwner(slot, masters int) int {
	// The inverse of evenRanges: the largest i with i*NumSlots/masters <= slot.
	i := (slot*masters + masters - 1) / NumSlots
	for i > 0 && i*NumSlots/masters > slot {
		i--
	}
	for i+1 < masters && (i+1)*NumSlots/masters <= slot {
		i++
	}
	return i
}

// targetCounts returns how many slots each master should serve: NumSlots
// divided evenly, the remainder going to the masters that already serve the
// most, so that balancing moves as few slots as possible.
func targetCounts(masters []string, count map[string]int) map[string]int {
	out := make(map[string]int, len(masters))
	if len(masters) == 0 {
		return out
	}
	order := make([]int, len(masters))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return count[masters[order[a]]] > count[masters[order[b]]] })
	base, extra := NumSlots/len(masters), NumSlots%len(masters)
	for rank, i := range order {
		out[masters[i]] = base
		if rank < extra {
			out[masters[i]]++
		}
	}
	return out
}

// planMoves returns the slot moves that leave each of masters (node IDs) with
// its target count and every other node with no slot. owner maps a slot to
// the ID that serves it, "" when nobody does; unassigned slots are not moved
// (assignUnowned covers them). Moves are grouped by source and destination,
// and each source gives away its highest slots, keeping ranges contiguous.
func planMoves(masters []string, owner *[NumSlots]string) []move {
	if len(masters) == 0 {
		return nil
	}
	slotsOf := map[string][]int{}
	for slot, id := range owner {
		if id != "" {
			slotsOf[id] = append(slotsOf[id], slot)
		}
	}
	count := make(map[string]int, len(slotsOf))
	for id, s := range slotsOf {
		count[id] = len(s)
	}
	target := targetCounts(masters, count)

	// Sources: nodes that must give everything away first, then masters over target.
	var leaving []string
	for id := range slotsOf {
		if _, ok := target[id]; !ok {
			leaving = append(leaving, id)
		}
	}
	sort.Strings(leaving)
	var surplus []move
	for _, id := range append(leaving, masters...) {
		s := slotsOf[id]
		give := len(s) - target[id]
		for i := len(s) - give; i < len(s) && give > 0; i++ {
			surplus = append(surplus, move{slot: s[i], from: id})
		}
	}
	var moves []move
	next := 0
	for _, id := range masters {
		for need := target[id] - count[id]; need > 0 && next < len(surplus); need-- {
			m := surplus[next]
			m.to = id
			moves = append(moves, m)
			next++
		}
	}
	sort.SliceStable(moves, func(a, b int) bool {
		if moves[a].from != moves[b].from {
			return moves[a].from < moves[b].from
		}
		return moves[a].to < moves[b].to
	})
	return moves
}
