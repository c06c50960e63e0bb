package redisadmin

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

func TestFailoverUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 5)
	topo := Topology{Shards: [][]string{{"node-0", "node-1", "node-2"}, {"node-3", "node-4"}}}
	a := f.admin(Options{})
	converge(t, a, topo)
	f.expectHealthy(g, f.names...)
	f.expectReplicationUp(g, "node-1", "node-2", "node-4")
	load := redistest.StartLoad(f.cluster(f.names...), "failover")

	replicas, err := a.InSyncReplicas(context.Background(), topo, "node-0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(replicas).To(ConsistOf("node-1", "node-2"))

	promoted, err := a.Failover(context.Background(), topo, "node-0")
	if err != nil {
		for _, n := range f.names {
			t.Logf("%s log:\n%s", n, f.servers[n].Log())
		}
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(promoted).To(BeElementOf(replicas))
	// Every node already tells clients the new map: none sends them to the
	// old master, whose pod the rollout deletes next.
	for _, n := range f.names {
		byAddr := map[string]Peer{}
		for _, p := range f.view(g, n) {
			byAddr[p.Addr] = p
		}
		g.Expect(byAddr[f.servers[promoted].Addr()].IsMaster()).To(BeTrue(), "%s sees %s as a master", n, promoted)
		g.Expect(byAddr[f.servers["node-0"].Addr()].IsMaster()).To(BeFalse(), "%s sees node-0 as a replica", n)
	}
	st, err := a.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	for _, n := range st.Nodes {
		switch n.Name {
		case promoted:
			g.Expect(n.Master).To(BeTrue())
			g.Expect(n.Slots).To(BeNumerically(">", 0))
		case "node-0":
			g.Expect(n.Master).To(BeFalse(), "the old master follows the new one")
			g.Expect(n.MasterName).To(Equal(promoted))
		}
	}
	// The cluster keeps the promoted master: nothing to change.
	res := converge(t, a, topo)
	g.Expect(res.Actions).To(BeEmpty())
	load.ExpectNoLoss(g, f.cluster(f.names...))

	// A master whose replica is not part of the run has nobody to fail over to.
	_, err = a.Failover(context.Background(), Topology{Shards: [][]string{{"node-3"}}}, "node-3")
	g.Expect(errors.Is(err, ErrNoReplica)).To(BeTrue(), "got %v", err)
}
