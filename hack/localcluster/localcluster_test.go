package localcluster

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func TestPodCIDR(t *testing.T) {
	for _, tc := range []struct {
		ranges netip.Prefix
		index  int
		want   string
	}{
		{RoutedPodRanges, 0, "198.18.0.0/24"},
		{RoutedPodRanges, 1, "198.18.1.0/24"},
		{RoutedPodRanges, 256, "198.19.0.0/24"},
		{RoutedPodRanges, MaxSimulatedNodes(RoutedPodRanges) - 1, "198.19.255.0/24"},
		{LoopbackPodRanges, 0, "127.64.0.0/24"},
		{LoopbackPodRanges, 255, "127.64.255.0/24"},
		{LoopbackPodRanges, 256, "127.65.0.0/24"},
		{LoopbackPodRanges, MaxSimulatedNodes(LoopbackPodRanges) - 1, "127.127.255.0/24"},
	} {
		g := NewWithT(t)
		got, err := PodCIDR(tc.ranges, tc.index)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(tc.want), "%s index %d", tc.ranges, tc.index)
		g.Expect(tc.ranges.Contains(netip.MustParsePrefix(got).Addr())).To(BeTrue())
	}
	g := NewWithT(t)
	g.Expect(MaxSimulatedNodes(RoutedPodRanges)).To(Equal(512))
	g.Expect(MaxSimulatedNodes(LoopbackPodRanges)).To(Equal(16384))
	for _, bad := range []int{-1, MaxSimulatedNodes(RoutedPodRanges)} {
		_, err := PodCIDR(RoutedPodRanges, bad)
		g.Expect(err).To(MatchError(ContainSubstring("198.18.0.0/15")))
	}
}

func TestSimulatedNodeKeepsItsAddressesOnLoopback(t *testing.T) {
	g := NewWithT(t)
	node, err := SimulatedNode(RoutedPodRanges, 3)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Name).To(Equal("kwok-node-00003"))
	g.Expect(node.Annotations).To(HaveKeyWithValue("kwok.x-k8s.io/node", "fake"), "kwok-controller manages it")
	g.Expect(node.Labels).To(HaveKeyWithValue(LabelSimulated, "true"))
	g.Expect(node.Spec.PodCIDR).To(Equal("198.18.3.0/24"))
	g.Expect(node.Spec.PodCIDRs).To(Equal([]string{"198.18.3.0/24"}))
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

// The kernel's own answer for the pod ranges: they must route to lo, or
// every simulated pod address would leave the machine. As root, this routes
// RoutedPodRanges to lo as make dev-cluster does, and leaves the route
// (a local cluster may be using it; make dev-cluster-down removes it).
func TestPodRangesRouteToLoopback(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	g := NewWithT(t)
	ranges, err := ChoosePodRanges(context.Background())
	if os.Geteuid() == 0 {
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ranges).To(Equal(RoutedPodRanges))
		g.Expect(RouteToLoopback(context.Background(), RoutedPodRanges)).To(Succeed(), "a second time changes nothing")
	} else {
		g.Expect(err).To(HaveOccurred())
		g.Expect(ranges).To(Equal(LoopbackPodRanges))
	}
	addrs := []netip.Addr{netip.MustParseAddr(NodeIP)}
	for _, index := range []int{0, 123, MaxSimulatedNodes(ranges) - 1} {
		cidr, err := PodCIDR(ranges, index)
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

// TestWatcherStopLetsTheSampleFinish stops a watcher while its first sample
// runs, with a connection of this process to one of the machine's own
// non-loopback addresses, so that the sample asks the kernel for its route.
// Stopping must neither fail the watch (a killed `ip route get` did, in a
// CI run) nor skip that sample, and the address routes through lo.
func TestWatcherStopLetsTheSampleFinish(t *testing.T) {
	g := NewWithT(t)
	own := ownNonLoopbackAddr(t)
	ln, err := net.Listen("tcp", netip.AddrPortFrom(own, 0).String())
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = ln.Close() }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close() }()

	for range 5 {
		w := Watch(time.Hour, Allowed{})
		conns, err := w.Stop()
		g.Expect(err).NotTo(HaveOccurred())
		// Only this process's connections: other cluster processes of a
		// running dev cluster are not this test's business.
		var own []Connection
		for _, c := range conns {
			if c.PID == os.Getpid() {
				own = append(own, c)
			}
		}
		g.Expect(own).To(BeEmpty(), "an address of this machine routes through lo")
		_, err = w.Stop()
		g.Expect(err).NotTo(HaveOccurred(), "a second Stop is harmless")
	}
}

// ownNonLoopbackAddr returns an IPv4 address of one of this machine's
// interfaces that are up, other than lo.
func ownNonLoopbackAddr(t *testing.T) netip.Addr {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatalf("listing interfaces: %v", err)
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			t.Fatalf("listing the addresses of %s: %v", iface.Name, err)
		}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
				return p.Addr()
			}
		}
	}
	t.Skip("this machine has no IPv4 address on an interface that is up, besides loopback")
	return netip.Addr{}
}

// The manager's Deployment requests every resource it names (ephemeral
// storage too): a simulated node must offer each, or the benchmarks' manager
// would stay Pending there.
func TestSimulatedNodeFitsTheManager(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := os.ReadFile(filepath.Join(root, "config", "manager", "manager.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	deployment := &appsv1.Deployment{}
	g.Expect(yaml.Unmarshal(raw, deployment)).To(Succeed())
	node, err := SimulatedNode(RoutedPodRanges, 0)
	g.Expect(err).NotTo(HaveOccurred())
	containers := deployment.Spec.Template.Spec.Containers
	g.Expect(containers).NotTo(BeEmpty())
	for _, c := range containers {
		g.Expect(c.Resources.Requests).NotTo(BeEmpty(), "container %s", c.Name)
		for name, request := range c.Resources.Requests {
			offered, ok := node.Status.Allocatable[name]
			g.Expect(ok).To(BeTrue(), "a simulated node offers no %s, which container %s requests", name, c.Name)
			g.Expect(request.Cmp(offered)).To(BeNumerically("<=", 0), "container %s requests %s %s", c.Name, request.String(), name)
		}
	}
}
