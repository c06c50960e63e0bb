package redisadmin

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// movedKeyTag returns a hash tag whose slot moves when masters of a fresh
// cluster of before masters become after: its keys must move.
func movedKeyTag(g *WithT, c *redis.Client, before, after []string) string {
	moved := map[int]bool{}
	for _, m := range planMoves(after, layout(before...)) {
		moved[m.slot] = true
	}
	for i := range 1000 {
		tag := fmt.Sprintf("{hot-%d}", i)
		slot, err := c.ClusterKeySlot(context.Background(), tag).Result()
		g.Expect(err).NotTo(HaveOccurred())
		if moved[int(slot)] {
			return tag
		}
	}
	g.Expect("").NotTo(BeEmpty(), "no hash tag of a moving slot")
	return ""
}

// TestKeysStreamThroughTheAdmin moves a slot with many more keys than one
// MIGRATE carries, and checks that the Admin never held more key names at
// once than its windows allow: its memory does not grow with the keys.
func TestKeysStreamThroughTheAdmin(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 4)
	c := f.threeMastersWithKeys(g)
	const hotKeys = 3000
	tag := movedKeyTag(g, f.servers["node-0"].Client(), []string{"a", "b", "c"}, []string{"a", "b", "c", "d"})
	ks := redistest.Keyspace{Prefix: tag, N: hotKeys, Size: 100}
	g.Expect(ks.Fill(context.Background(), c)).To(Succeed())

	opts := Options{KeysPerMigrate: 50, ParallelMoves: 2}
	a := f.admin(opts)
	converge(t, a, masters(f.names...))
	expectBalanced(g, slotsOf(g, a, masters(f.names...)), f.names...)

	bound := int64(opts.ParallelMoves * migrateWindow * opts.KeysPerMigrate)
	g.Expect(bound).To(BeNumerically("<", hotKeys), "the hot slot must not fit in the bound for this test to mean anything")
	g.Expect(a.peakHeld.Load()).To(BeNumerically("<=", bound), "key names held at once")
	g.Expect(a.peakHeld.Load()).To(BeNumerically(">=", opts.KeysPerMigrate), "the hot slot was listed in full lists")
	g.Expect(a.held.Load()).To(BeZero(), "every list is dropped after its MIGRATE")
	redistest.ExpectKeys(g, c)
	missing, _, err := ks.Sweep(context.Background(), c, 10)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(BeEmpty())
}
