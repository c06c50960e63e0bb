package redisadmin

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseNodes(t *testing.T) {
	g := NewWithT(t)
	peers, err := parseNodes(`9ed8 127.0.0.1:7101@17101 master - 0 1795319004100 0 connected 0-4 6-100 [5->-936e]
936e 127.0.0.1:7102@17102,host myself,master - 0 0 1 connected 5 [7-<-9ed8]
aaaa :7103@17103 slave,fail 9ed8 0 0 0 disconnected
`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(peers).To(HaveLen(3))
	g.Expect(peers[0].Slots).To(HaveLen(100))
	g.Expect(peers[0].Migrating).To(Equal(map[int]string{5: "936e"}))
	g.Expect(peers[1].Has("myself")).To(BeTrue())
	g.Expect(peers[1].Addr).To(Equal("127.0.0.1:7102"))
	g.Expect(peers[1].Slots).To(Equal([]int{5}))
	g.Expect(peers[1].Importing).To(Equal(map[int]string{7: "9ed8"}))
	g.Expect(peers[2].Addr).To(BeEmpty())
	g.Expect(peers[2].MasterID).To(Equal("9ed8"))
	g.Expect(peers[2].Failed()).To(BeTrue())
	g.Expect(peers[2].IsMaster()).To(BeFalse())

	_, err = parseNodes("x 1.2.3.4:1@2 master - 0 0 0 connected 16384")
	g.Expect(err).To(HaveOccurred())
}

func TestEvenRangesAndPlannedOwner(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 7, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			g := NewWithT(t)
			rs := evenRanges(n)
			g.Expect(rs[0].From).To(Equal(0))
			g.Expect(rs[n-1].To).To(Equal(NumSlots - 1))
			for i, r := range rs {
				size := r.To - r.From + 1
				g.Expect(size).To(BeNumerically(">=", NumSlots/n))
				g.Expect(size).To(BeNumerically("<=", NumSlots/n+1))
				if i > 0 {
					g.Expect(r.From).To(Equal(rs[i-1].To + 1))
				}
				for _, slot := range []int{r.From, r.To} {
					g.Expect(plannedOwner(slot, n)).To(Equal(i), "slot %d", slot)
				}
			}
		})
	}
}

// layout assigns the slots like a bootstrap of the given masters would.
func layout(masters ...string) *[NumSlots]string {
	var owner [NumSlots]string
	for i, r := range evenRanges(len(masters)) {
		for s := r.From; s <= r.To; s++ {
			owner[s] = masters[i]
		}
	}
	return &owner
}

func apply(owner *[NumSlots]string, moves []move) map[string]int {
	for _, m := range moves {
		if owner[m.slot] != m.from {
			panic(fmt.Sprintf("slot %d moved from %s but owned by %s", m.slot, m.from, owner[m.slot]))
		}
		owner[m.slot] = m.to
	}
	count := map[string]int{}
	for _, id := range owner {
		count[id]++
	}
	return count
}

func TestPlanMoves(t *testing.T) {
	for _, tc := range []struct {
		name      string
		before    []string
		after     []string
		wantMoved int
	}{
		{name: "balanced", before: []string{"a", "b", "c"}, after: []string{"a", "b", "c"}, wantMoved: 0},
		{name: "3 to 5", before: []string{"a", "b", "c"}, after: []string{"a", "b", "c", "d", "e"}, wantMoved: 2*NumSlots/5 + 1},
		{name: "5 to 3", before: []string{"a", "b", "c", "d", "e"}, after: []string{"a", "b", "c"}, wantMoved: 2*NumSlots/5 + 1},
		{name: "1 to 2", before: []string{"a"}, after: []string{"a", "b"}, wantMoved: NumSlots / 2},
		{name: "replace", before: []string{"a", "b"}, after: []string{"a", "c"}, wantMoved: NumSlots / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			owner := layout(tc.before...)
			moves := planMoves(tc.after, owner)
			g.Expect(len(moves)).To(BeNumerically("~", tc.wantMoved, 1))
			count := apply(owner, moves)
			g.Expect(count).To(HaveLen(len(tc.after)))
			for _, m := range tc.after {
				g.Expect(count[m]).To(BeNumerically(">=", NumSlots/len(tc.after)))
				g.Expect(count[m]).To(BeNumerically("<=", NumSlots/len(tc.after)+1))
			}
			g.Expect(planMoves(tc.after, owner)).To(BeEmpty(), "a balanced layout needs no move")
		})
	}
}
