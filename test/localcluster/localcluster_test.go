package localcluster

import (
	"context"
	"net/netip"
	"os/exec"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func TestPodCIDR(t *testing.T) {
	for _, tc := range []struct {
		index int
		want  string
	}{
		{0, "127.64.0.0/24"},
		{1, "127.64.1.0/24"},
		{255, "127.64.255.0/24"},
		{256, "127.65.0.0/24"},
		{MaxSimulatedNodes - 1, "127.127.255.0/24"},
	} {
		g := NewWithT(t)
		got, err := PodCIDR(tc.index)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(tc.want), "index %d", tc.index)
		prefix := netip.MustParsePrefix(got)
		g.Expect(podRanges.Contains(prefix.Addr())).To(BeTrue())
		g.Expect(prefix.Addr().IsLoopback()).To(BeTrue())
	}
	for _, bad := range []int{-1, MaxSimulatedNodes} {
		_, err := PodCIDR(bad)
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("127.64.0.0/10")))
	}
}

func TestSimulatedNodeKeepsItsAddressesOnLoopback(t *testing.T) {
	g := NewWithT(t)
	node, err := SimulatedNode(3)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Name).To(Equal("kwok-node-00003"))
	g.Expect(node.Annotations).To(HaveKeyWithValue("kwok.x-k8s.io/node", "fake"), "kwok-controller manages it")
	g.Expect(node.Labels).To(HaveKeyWithValue(LabelSimulated, "true"))
	g.Expect(node.Spec.PodCIDR).To(Equal("127.64.3.0/24"))
	g.Expect(node.Spec.PodCIDRs).To(Equal([]string{"127.64.3.0/24"}))
	g.Expect(node.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}))
	for _, a := range node.Status.Addresses {
		if addr, err := netip.ParseAddr(a.Address); err == nil {
			g.Expect(addr.IsLoopback()).To(BeTrue(), "address %s", a.Address)
		}
	}
}

func TestParseRouteDevice(t *testing.T) {
	for _, tc := range []struct {
		out, want string
		err       bool
	}{
		{out: "local 127.64.0.5 dev lo table local src 127.0.0.1 uid 0 \n    cache <local> \n", want: "lo"},
		{out: "10.0.0.5 via 192.0.2.1 dev eth0 src 192.0.2.2 uid 0 \n    cache \n", want: "eth0"},
		{out: "10.88.0.7 dev mo-br0 src 10.88.0.1 uid 0\n", want: "mo-br0"},
		{out: "RTNETLINK answers: Network is unreachable\n", err: true},
		{out: "dev", err: true},
	} {
		g := NewWithT(t)
		got, err := parseRouteDevice(tc.out)
		if tc.err {
			g.Expect(err).To(HaveOccurred(), tc.out)
			continue
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(tc.want))
	}
}

// The kernel's own answer for the pod range: it must be loopback, or every
// simulated pod address would leave the machine.
func TestPodRangeRoutesToLoopback(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	g := NewWithT(t)
	addrs := []netip.Addr{netip.MustParseAddr(NodeIP)}
	for _, index := range []int{0, 1234, MaxSimulatedNodes - 1} {
		cidr, err := PodCIDR(index)
		g.Expect(err).NotTo(HaveOccurred())
		addrs = append(addrs, netip.MustParsePrefix(cidr).Addr().Next())
	}
	devices, err := RouteDevices(context.Background(), addrs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(devices).To(HaveLen(len(addrs)))
	for _, addr := range addrs {
		g.Expect(devices).To(HaveKeyWithValue(addr, LoopbackDevice))
	}
	dev, err := RouteDevice(context.Background(), addrs[1])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dev).To(Equal(LoopbackDevice))
}

func TestParseConnections(t *testing.T) {
	g := NewWithT(t)
	out := `ESTAB 0      0      127.0.0.1:46190 127.0.0.1:6443 users:(("kube-apiserver",pid=120,fd=7))
ESTAB 0      0      192.0.2.2:33832 203.0.113.80:443 users:(("go",pid=9121,fd=11))
SYN-SENT 0   1      192.0.2.2:40000 10.0.0.5:6379 users:(("manager",pid=300,fd=9),("manager",pid=301,fd=9))
ESTAB 0      0      [::1]:2379 [::1]:51234 users:(("etcd",pid=99,fd=12))
ESTAB 0      0      [::ffff:127.0.0.1]:6443 [::ffff:127.0.0.1]:5555 users:(("kube-apiserver",pid=120,fd=8))
ESTAB 0      0      [fe80::1]%eth0:22 [fe80::2]%eth0:5000 users:(("sshd",pid=7,fd=3))
TIME-WAIT 0  0      127.0.0.1:1 127.0.0.1:2
`
	conns, err := parseConnections(out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(conns).To(HaveLen(7))
	g.Expect(conns[0]).To(Equal(Connection{Process: "kube-apiserver", PID: 120, State: "ESTAB",
		Local: netip.MustParseAddrPort("127.0.0.1:46190"), Peer: netip.MustParseAddrPort("127.0.0.1:6443")}))
	g.Expect(conns[2].Process).To(Equal("manager"))
	g.Expect(conns[3].PID).To(Equal(301))
	g.Expect(conns[2].Peer.String()).To(Equal("10.0.0.5:6379"))
	g.Expect(conns[4].Peer.Addr().IsLoopback()).To(BeTrue())
	g.Expect(conns[6].Peer.Addr().String()).To(Equal("fe80::2"))

	_, err = parseConnections("ESTAB 0 0 nonsense 127.0.0.1:1 users:((\"x\",pid=1,fd=1))\n")
	g.Expect(err).To(HaveOccurred())
}

func TestOnMachine(t *testing.T) {
	podNetwork := netip.MustParsePrefix("10.88.0.0/16")
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.64.3.9", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"10.88.0.7", true},
		{"10.0.0.5", false},
		{"192.0.2.1", false},
		{"203.0.113.80", false},
	} {
		NewWithT(t).Expect(OnMachine(netip.MustParseAddr(tc.addr), podNetwork)).To(Equal(tc.want), tc.addr)
	}
}
