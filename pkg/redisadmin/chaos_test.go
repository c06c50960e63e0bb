package redisadmin

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// shardsOf is a topology of n shards of a master and a replica each:
// node-0 and node-1, node-2 and node-3, ...
func shardsOf(n int) Topology {
	t := Topology{}
	for i := range n {
		t.Shards = append(t.Shards, []string{fmt.Sprintf("node-%d", 2*i), fmt.Sprintf("node-%d", 2*i+1)})
	}
	return t
}

// roles returns each node's state by name.
func roles(g *WithT, a *Admin, topo Topology) map[string]NodeState {
	st, err := a.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]NodeState{}
	for _, n := range st.Nodes {
		out[n.Name] = n
	}
	return out
}

// TestChaosSequenceLosesNoAcknowledgedWrite runs the chaos sequence of the
// end-to-end suite against redis-server processes, for the logic alone,
// under a load whose writes count once a replica has them: a rolling
// restart (replicas, then masters after a failover), two masters killed,
// every node restarted at once with its data, and a scale 3 -> 5 -> 3.
func TestChaosSequenceLosesNoAcknowledgedWrite(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixtureWith(t, 10, fixtureOptions{persist: true})
	a := f.admin(Options{})
	topo := shardsOf(3)
	nodes := topo.Nodes()
	converge(t, a, topo)
	f.expectHealthy(g, nodes...)
	f.expectReplicationUp(g, "node-1", "node-3", "node-5")
	load := redistest.StartReplicatedLoad(f.cluster(nodes...), "chaos")
	settle := func(what string, topo Topology) {
		converge(t, a, topo)
		f.expectHealthy(g, Topology{Shards: topo.Shards}.Nodes()...)
		t.Logf("%s: writes failed for at most %s", what, load.Outage())
	}
	restart := func(name string) { f.servers[name].Restart(f.servers[name].Port) }

	// A rolling restart: replicas first, each master after its failover.
	for name, n := range roles(g, a, topo) {
		if !n.Master {
			restart(name)
			settle("restarting replica "+name, topo)
		}
	}
	for name, n := range roles(g, a, topo) {
		if n.Master {
			_, err := a.Failover(context.Background(), topo, name)
			g.Expect(err).NotTo(HaveOccurred())
			restart(name)
			settle("restarting master "+name+" after its failover", topo)
		}
	}

	// Two masters crash; Redis promotes their replicas by itself.
	var killed []string
	for name, n := range roles(g, a, topo) {
		if n.Master && len(killed) < 2 {
			f.servers[name].Stop()
			killed = append(killed, name)
		}
	}
	var alive []string
	for _, n := range nodes {
		if n != killed[0] && n != killed[1] {
			alive = append(alive, n)
		}
	}
	f.expectHealthy(g, alive...)
	for _, name := range killed {
		restart(name)
	}
	settle("two masters killed", topo)

	// Every node restarts at once and comes back with its data.
	for _, n := range nodes {
		f.servers[n].Stop()
	}
	time.Sleep(time.Second)
	for _, n := range nodes {
		restart(n)
	}
	settle("every node restarted at once", topo)

	// Scale 3 -> 5 -> 3.
	settle("scale to 5", shardsOf(5))
	shrink := shardsOf(3)
	shrink.Leaving = shardsOf(5).Nodes()[6:]
	settle("scale to 3", shrink)

	acked := load.ExpectNoLoss(g, f.cluster(nodes...))
	t.Logf("%d acknowledged writes, none lost; errors seen: %v", acked, load.Errors())
}
