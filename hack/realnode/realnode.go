// Package realnode describes the real node of the local cluster: kubelet,
// containerd, runc, a CNI bridge, kube-proxy and CoreDNS on this machine,
// beside kwok's simulated nodes. realnode.sh starts and removes it and
// hack/make/realnode.mk wires it into make dev-cluster; see README.md here.
//
// Every address the real node hands out stays on this machine: the node
// address is on lo, pods live on a bridge whose traffic is dropped on its way
// to any other interface, and Service addresses route to that bridge. Tests
// that watch the cluster's connections (localcluster.Watch) and check its
// addresses (localcluster.CheckAddresses) take Allowed, or BridgeDevice, as
// this machine's own.
//
// The values here are those of hack/make/realnode.mk; a test keeps them in step.
package realnode

import (
	"net/netip"

	"github.com/multi-operator/multi-operator/hack/localcluster"
)

const (
	// NodeName is the real node's name.
	NodeName = "mo-realnode"
	// LabelRealNode marks the real node, with the value "true".
	LabelRealNode = "multi-operator.dev/real-node"
	// BridgeDevice is the pod network's bridge: the one interface besides
	// lo that cluster addresses may route through.
	BridgeDevice = "mo-br0"
	// NodeIP is the node's InternalIP, an address on lo: the API server
	// dials kubelet there, and pods reach the API server there.
	NodeIP = "10.87.0.1"
	// PodCIDR holds every pod IP of the real node.
	PodCIDR = "10.88.0.0/16"
	// ServiceCIDR holds every Service's ClusterIP when the real node is up.
	ServiceCIDR = "10.96.0.0/16"
	// DNSIP is CoreDNS's Service address (kube-system/kube-dns).
	DNSIP = "10.96.0.10"
	// SimulatedTaint keeps pods without a toleration off the kwok nodes
	// while the real node is up, as key=value:effect.
	SimulatedTaint = "kwok.x-k8s.io/node=fake:NoSchedule"
	// Unavailable is the exit status of `realnode.sh check` (and of
	// `make dev-cluster REALNODE=on`) when this machine cannot run a real node.
	Unavailable = 3
)

// Allowed is what the real node adds to this machine's own addresses, as
// localcluster.Watch takes it: the bridge that pod IPs route through (the
// node address is on lo) and the Service range, which no interface holds.
func Allowed() localcluster.Allowed {
	return localcluster.Allowed{
		Devices:  []string{BridgeDevice},
		Prefixes: []netip.Prefix{netip.MustParsePrefix(ServiceCIDR)},
	}
}
