package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LoopbackDevice is the interface every simulated address must route to.
const LoopbackDevice = "lo"

// RouteDevices asks the kernel which interface traffic to each address
// leaves through: `ip route get` for all of them in one `ip -batch` run,
// one line of answer per address.
func RouteDevices(ctx context.Context, addrs []netip.Addr) (map[netip.Addr]string, error) {
	if len(addrs) == 0 {
		return map[netip.Addr]string{}, nil
	}
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "route get %s\n", a)
	}
	cmd := exec.CommandContext(ctx, "ip", "-oneline", "-batch", "-")
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ip route get: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(addrs) {
		return nil, fmt.Errorf("ip route get: %d answers for %d addresses: %s", len(lines), len(addrs), out)
	}
	devices := make(map[netip.Addr]string, len(addrs))
	for i, line := range lines {
		dev, err := parseRouteDevice(line)
		if err != nil {
			return nil, err
		}
		devices[addrs[i]] = dev
	}
	return devices, nil
}

// RouteDevice is RouteDevices for one address.
func RouteDevice(ctx context.Context, addr netip.Addr) (string, error) {
	devices, err := RouteDevices(ctx, []netip.Addr{addr})
	if err != nil {
		return "", err
	}
	return devices[addr], nil
}

// parseRouteDevice reads the interface from the output of `ip route get`,
// such as "local 127.64.0.5 dev lo table local src 127.0.0.1 uid 0".
func parseRouteDevice(out string) (string, error) {
	fields := strings.Fields(out)
	for i, f := range fields {
		if f == "dev" && i+1 < len(fields) {
			return fields[i+1], nil
		}
	}
	return "", fmt.Errorf("no device in the route %q", strings.TrimSpace(out))
}

// ClusterAddress is one address the cluster hands out, with where it came from.
type ClusterAddress struct {
	// Owner names the object, such as "node kwok-node-00000" or "pod ns/name".
	Owner string
	// Addr is the address.
	Addr netip.Addr
}

// ClusterAddresses lists every IP address of every Node and every Pod IP.
// Host names among a node's addresses are not IPs and are left out.
func ClusterAddresses(ctx context.Context, c client.Reader) ([]ClusterAddress, error) {
	var out []ClusterAddress
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		for _, a := range n.Status.Addresses {
			if addr, err := netip.ParseAddr(a.Address); err == nil {
				out = append(out, ClusterAddress{Owner: "node " + n.Name, Addr: addr})
			}
		}
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		for _, ip := range p.Status.PodIPs {
			if addr, err := netip.ParseAddr(ip.IP); err == nil {
				out = append(out, ClusterAddress{Owner: "pod " + p.Namespace + "/" + p.Name, Addr: addr})
			}
		}
	}
	return out, nil
}

// CheckAddresses fails when a Node address or Pod IP of the cluster routes
// through any interface but loopback and the allowed ones (those the
// cluster created itself). The error names every such address.
func CheckAddresses(ctx context.Context, c client.Reader, allowedDevices ...string) error {
	addrs, err := ClusterAddresses(ctx, c)
	if err != nil {
		return err
	}
	allowed := append([]string{LoopbackDevice}, allowedDevices...)
	unique := map[netip.Addr]bool{}
	var query []netip.Addr
	for _, a := range addrs {
		if !unique[a.Addr] {
			unique[a.Addr] = true
			query = append(query, a.Addr)
		}
	}
	devices, err := RouteDevices(ctx, query)
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range addrs {
		if dev := devices[a.Addr]; !slices.Contains(allowed, dev) {
			errs = append(errs, fmt.Errorf("%s has address %s, which routes through %s, off this machine (allowed: %s)", a.Owner, a.Addr, dev, strings.Join(allowed, ", ")))
		}
	}
	return errors.Join(errs...)
}
