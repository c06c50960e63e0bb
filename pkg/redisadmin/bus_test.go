package redisadmin

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// masterLink is a replica's master_link_status.
func masterLink(g Gomega, s *redistest.Server) string {
	info, err := s.Client().Info(context.Background(), "replication").Result()
	g.Expect(err).NotTo(HaveOccurred())
	return parseInfo(info)["master_link_status"]
}

// With the bus and replication on TLS and clients on the plain port, the
// operator still finds every node at the address it resolves (CLUSTER
// NODES and MOVED name the plain port), replicas follow their masters over
// TLS, and MIGRATE moves keys over the plain port.
func TestTLSBusReplicatesAndNamesThePlainPort(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixtureWith(t, 6, fixtureOptions{busTLS: true})
	a := f.admin(Options{})
	topo := Topology{Shards: [][]string{{"node-0", "node-1"}, {"node-2", "node-3"}}}
	converge(t, a, topo)
	f.expectHealthy(g, f.names[:4]...)
	for _, name := range f.names[:4] {
		addrs := map[string]bool{}
		for _, p := range f.view(g, name) {
			addrs[p.Addr] = true
		}
		for _, other := range f.names[:4] {
			g.Expect(addrs).To(HaveKey(f.servers[other].Addr()), "%s names %s at its plain port", name, other)
		}
	}
	g.Eventually(func(g Gomega) {
		g.Expect(masterLink(g, f.servers["node-1"])).To(Equal("up"))
		g.Expect(masterLink(g, f.servers["node-3"])).To(Equal("up"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	// A client of the wrong master is sent to the other's plain port.
	var moved []string
	for _, pair := range [][2]string{{"node-0", "node-2"}, {"node-2", "node-0"}} {
		if err := f.servers[pair[0]].Client().Set(context.Background(), "k", "1", 0).Err(); err != nil {
			g.Expect(err.Error()).To(MatchRegexp(`^MOVED \d+ %s$`, regexp.QuoteMeta(f.servers[pair[1]].Addr())))
			moved = append(moved, pair[0])
		}
	}
	g.Expect(moved).To(HaveLen(1))

	c := f.cluster(f.names[:4]...)
	redistest.WriteKeys(g, c)
	grown := Topology{Shards: append(topo.Shards, []string{"node-4", "node-5"})}
	converge(t, a, grown)
	f.expectHealthy(g, f.names...)
	redistest.ExpectKeys(g, f.cluster(f.names...))
	g.Eventually(func(g Gomega) { g.Expect(masterLink(g, f.servers["node-5"])).To(Equal("up")) }, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// A node whose bus certificate another CA signed, told by its own tenant
// to MEET a node of the cluster, never becomes one of its peers: the
// cluster bus requires a certificate of the cluster's own CA.
func TestTLSBusRefusesANodeOfAnotherCA(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixtureWith(t, 2, fixtureOptions{busTLS: true})
	converge(t, f.admin(Options{}), masters(f.names...))
	f.expectHealthy(g, f.names...)
	foreignCert := redistest.NewCA(t).Issue(t)
	intruder := redistest.StartWith(t, "127.0.0.1", 0, redistest.Options{Password: "intruder", BusTLS: &foreignCert})
	victim := f.servers["node-0"]
	g.Expect(intruder.Client().Do(context.Background(), "CLUSTER", "MEET", victim.Host, victim.Port, victim.Port+10000).Err()).To(Succeed())
	g.Consistently(func(g Gomega) {
		for _, name := range f.names {
			text, err := f.servers[name].Client().ClusterNodes(context.Background()).Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(strings.Count(strings.TrimSpace(text), "\n")+1).To(Equal(2), "%s lists only its cluster's nodes:\n%s", name, text)
		}
	}, 8*time.Second, 200*time.Millisecond).Should(Succeed())
}
