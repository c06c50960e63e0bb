package redisadmin

import (
	"net"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// requireIPv6Loopback skips the test when the host has no ::1 to listen on.
func requireIPv6Loopback(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	_ = l.Close()
}

// A cluster whose nodes listen and announce on IPv6 forms, and its slots
// move with their keys: MEET and MIGRATE get the whole address, not what
// precedes its first colon.
func TestIPv6ClusterFormsAndMovesKeys(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	requireIPv6Loopback(t)
	g := NewWithT(t)
	f := newFixtureWith(t, 4, fixtureOptions{host: "::1"})
	a := f.admin(Options{})
	c := f.threeMastersWithKeys(g)

	res := converge(t, a, masters(f.names...))
	g.Expect(res.Actions).To(ContainElement(HaveField("Reason", ReasonSlotsMoved)))
	f.expectHealthy(g, f.names...)
	st, err := a.Observe(t.Context(), masters(f.names...))
	g.Expect(err).NotTo(HaveOccurred())
	for _, n := range st.Nodes {
		g.Expect(n.Addr).To(Equal(f.servers[n.Name].Addr()))
		g.Expect(n.KnownNodes).To(Equal(4), "node %s", n.Name)
	}
	expectBalanced(g, slotsOf(g, a, masters(f.names...)), f.names...)
	redistest.ExpectKeys(g, c)
}

func TestParseNodeLineAddresses(t *testing.T) {
	for _, tc := range []struct{ field, want string }{
		{"10.0.0.5:6379@16379", "10.0.0.5:6379"},
		{"10.0.0.5:6379@16379,redis-0", "10.0.0.5:6379"},
		{"fd00::5:6379@16379", "[fd00::5]:6379"},
		{"fd00::5:6379@16379,redis-0.redis", "[fd00::5]:6379"},
		{"::1:7000@17000", "[::1]:7000"},
		{"[fd00::5]:6379@16379", "[fd00::5]:6379"},
		{":0@0", ""},
		{":6379@16379", ""},
	} {
		t.Run(tc.field, func(t *testing.T) {
			g := NewWithT(t)
			p, err := parseNodeLine("07c37dfeb235213a872192d90877d0cd55635b91 " + tc.field +
				" master - 0 1426238317239 4 connected 0-10")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Addr).To(Equal(tc.want))
		})
	}
}

func TestNodeHostAndPortOfIPv6(t *testing.T) {
	g := NewWithT(t)
	n := &node{addr: "[fd00::5]:6379"}
	g.Expect(n.host()).To(Equal("fd00::5"))
	g.Expect(n.port()).To(Equal("6379"))
	n = &node{addr: "10.0.0.5:6379"}
	g.Expect(n.host()).To(Equal("10.0.0.5"))
	g.Expect(n.port()).To(Equal("6379"))
}
