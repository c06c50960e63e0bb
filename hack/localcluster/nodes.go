// Package localcluster keeps the local cluster's traffic on this machine.
// It creates the simulated (kwok) nodes with loopback addresses, checks
// that every Node address and Pod IP of the cluster routes to loopback or
// to an interface the cluster made, and watches the cluster's processes
// for a connection to any other address.
//
// kwokctl's own `scale node` gives nodes addresses from 192.0.2.0/24 and pod
// ranges from 10.0.0.0/16, which route off this machine: the API server's
// log reads and the manager's Redis dials then reach whoever answers there.
// The nodes made here have InternalIP 127.0.0.1, where kwok-controller
// itself serves the kubelet API (`--node-ip=127.0.0.1`), and pod ranges in
// 198.18.0.0/15, which is routed to lo as local addresses, so a dial to a
// simulated pod is refused at once (RoutedPodRanges).
package localcluster

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// NodeIP is every simulated node's InternalIP: the loopback address on
	// which kwok-controller serves the kubelet API (logs, exec) for all of them.
	NodeIP = "127.0.0.1"
	// LabelSimulated marks the nodes made here, so that scaling finds them.
	LabelSimulated = "multi-operator.dev/simulated-node"
	// annotationKwokNode makes kwok-controller manage a node; kwokctl
	// starts it with this annotation as its selector.
	annotationKwokNode = "kwok.x-k8s.io/node"
	// namePrefix starts every simulated node's name.
	namePrefix = "kwok-node-"
)

// RoutedPodRanges is where the simulated nodes' pod ranges come from when
// the kernel routes it to lo (RouteToLoopback, which needs root):
// 198.18.0.0/15, the range RFC 2544 sets aside for benchmarks, one /24 per
// node. Unlike 127.0.0.0/8, Endpoints and EndpointSlices accept these
// addresses, so a Service over simulated pods gets its endpoints the way it
// would on a real cluster: over loopback addresses the endpoint controllers
// fail and retry each Service about 17 times, with a Warning event each time,
// which made every Service of a benchmark cost the API server more than
// the rest of its operator's work.
var RoutedPodRanges = netip.MustParsePrefix("198.18.0.0/15")

// LoopbackPodRanges is where the pod ranges come from when RoutedPodRanges
// cannot be routed to lo (no root): 127.64.0.0/10, on loopback without any
// set-up, whose addresses Services' endpoints reject.
var LoopbackPodRanges = netip.MustParsePrefix("127.64.0.0/10")

// MaxSimulatedNodes is how many nodes, one /24 each, fit into ranges.
func MaxSimulatedNodes(ranges netip.Prefix) int { return 1 << (24 - ranges.Bits()) }

// NodeName is the name of the simulated node with the given index.
func NodeName(index int) string { return fmt.Sprintf("%s%05d", namePrefix, index) }

// PodCIDR is the pod range of the simulated node with the given index: the
// index-th /24 of ranges.
func PodCIDR(ranges netip.Prefix, index int) (string, error) {
	if max := MaxSimulatedNodes(ranges); index < 0 || index >= max {
		return "", fmt.Errorf("node index %d is outside 0..%d: %s has no more /24 ranges", index, max-1, ranges)
	}
	base := ranges.Masked().Addr().As4()
	offset := uint32(index) << 8
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	n += offset
	addr := netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	return netip.PrefixFrom(addr, 24).String(), nil
}

// ChoosePodRanges routes RoutedPodRanges to lo and returns it; when that
// fails (no root), it returns LoopbackPodRanges and why.
func ChoosePodRanges(ctx context.Context) (netip.Prefix, error) {
	if err := RouteToLoopback(ctx, RoutedPodRanges); err != nil {
		return LoopbackPodRanges, err
	}
	return RoutedPodRanges, nil
}

// RouteToLoopback makes every address of p local to this machine, as
// 127.0.0.0/8 is: a route of type local on lo in the local table. A dial to
// such an address never leaves the machine; with nothing listening it is
// refused at once. Repeating it changes nothing.
func RouteToLoopback(ctx context.Context, p netip.Prefix) error {
	return ipRoute(ctx, "replace", p)
}

// UnrouteFromLoopback removes what RouteToLoopback added; a missing route
// is no error.
func UnrouteFromLoopback(ctx context.Context, p netip.Prefix) error {
	dev, err := RouteDevice(ctx, p.Masked().Addr().Next())
	if err != nil || dev != LoopbackDevice {
		return nil
	}
	return ipRoute(ctx, "del", p)
}

func ipRoute(ctx context.Context, verb string, p netip.Prefix) error {
	out, err := exec.CommandContext(ctx, "ip", "route", verb, "local", p.Masked().String(), "dev", LoopbackDevice, "table", "local").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip route %s local %s dev %s: %w: %s", verb, p, LoopbackDevice, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// SimulatedNode is the Node object of the simulated node with the given
// index, as kwok-controller manages it: loopback InternalIP, a pod range
// from ranges, and the capacity kwokctl gives its nodes plus ephemeral
// storage, which kwokctl leaves out: without it no pod that requests
// ephemeral storage (the manager does) would schedule there.
func SimulatedNode(ranges netip.Prefix, index int) (*corev1.Node, error) {
	cidr, err := PodCIDR(ranges, index)
	if err != nil {
		return nil, err
	}
	name := NodeName(index)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		// Enough for every pod the benchmarks place.
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				annotationKwokNode:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				LabelSimulated:                  "true",
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/os":              "linux",
				"kubernetes.io/hostname":        name,
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{
			// No Hostname address: the API server would look a node's name
			// up in DNS, off this machine, to read logs (it is also told to
			// prefer the InternalIP).
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: NodeIP}},
			Capacity:    capacity,
			Allocatable: capacity,
			NodeInfo:    corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux"},
		},
	}, nil
}

// ScaleSimulatedNodes makes the cluster have exactly count simulated nodes:
// it creates the missing ones (a Node's status is taken as given on create,
// so the addresses are there before kwok-controller first looks) and
// deletes those with a higher index.
func ScaleSimulatedNodes(ctx context.Context, c client.Client, ranges netip.Prefix, count int) error {
	if max := MaxSimulatedNodes(ranges); count < 0 || count > max {
		return fmt.Errorf("cannot make %d simulated nodes: at most %d fit into %s", count, max, ranges)
	}
	existing := &corev1.NodeList{}
	if err := c.List(ctx, existing, client.MatchingLabels{LabelSimulated: "true"}); err != nil {
		return fmt.Errorf("listing simulated nodes: %w", err)
	}
	have := map[string]bool{}
	for i := range existing.Items {
		have[existing.Items[i].Name] = true
	}
	for i := range count {
		if have[NodeName(i)] {
			continue
		}
		node, err := SimulatedNode(ranges, i)
		if err != nil {
			return err
		}
		if err := c.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
	}
	wanted := map[string]bool{}
	for i := range count {
		wanted[NodeName(i)] = true
	}
	names := make([]string, 0, len(existing.Items))
	for i := range existing.Items {
		names = append(names, existing.Items[i].Name)
	}
	slices.Sort(names)
	for _, name := range names {
		if wanted[name] {
			continue
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting node %s: %w", name, err)
		}
	}
	return nil
}

// NewClient returns a client of the local cluster for the built-in kinds,
// from its kubeconfig file.
func NewClient(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
}
