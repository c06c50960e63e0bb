package localcluster

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ClusterProcesses are the names (as the kernel keeps them, at most 15
// characters) of the processes that make up the local cluster, its real
// node and the manager: the connections Watch looks at.
var ClusterProcesses = []string{
	"etcd", "kube-apiserver", "kube-controller", "kube-scheduler",
	"kwok", "kwok-controller", "manager", "kubectl",
	"kubelet", "kube-proxy", "containerd", "containerd-shim", "coredns", "imagebuild",
}

// Connection is one TCP connection of a process, as `ss -tnp` shows it.
type Connection struct {
	// Process and PID own the socket.
	Process string
	PID     int
	// State is the TCP state, such as ESTAB or SYN-SENT.
	State string
	// Local and Peer are the two ends.
	Local, Peer netip.AddrPort
}

func (c Connection) String() string {
	return fmt.Sprintf("%s (pid %d) %s %s -> %s", c.Process, c.PID, c.State, c.Local, c.Peer)
}

// usersField matches one process in the users:(...) column of ss.
var usersField = regexp.MustCompile(`\("([^"]*)",pid=(\d+),`)

// parseConnections reads the output of `ss -tnpH`: one socket a line,
// "STATE RECV-Q SEND-Q LOCAL PEER users:((...))". A socket shared by several
// processes gives one Connection each; sockets with no process (TIME-WAIT)
// give none.
func parseConnections(out string) ([]Connection, error) {
	var conns []Connection
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		local, err := parseAddrPort(fields[3])
		if err != nil {
			return nil, fmt.Errorf("ss line %q: %w", strings.TrimSpace(line), err)
		}
		peer, err := parseAddrPort(fields[4])
		if err != nil {
			return nil, fmt.Errorf("ss line %q: %w", strings.TrimSpace(line), err)
		}
		for _, m := range usersField.FindAllStringSubmatch(strings.Join(fields[5:], " "), -1) {
			pid, _ := strconv.Atoi(m[2])
			conns = append(conns, Connection{Process: m[1], PID: pid, State: fields[0], Local: local, Peer: peer})
		}
	}
	return conns, nil
}

// parseAddrPort reads an ss address, "127.0.0.1:6443", "[::1]:6443" or
// "[::ffff:127.0.0.1]:6443". A link-local address may carry its zone after
// the brackets ("[fe80::1]%eth0:22"); the zone is dropped.
func parseAddrPort(s string) (netip.AddrPort, error) {
	if i, j := strings.IndexByte(s, '%'), strings.LastIndexByte(s, ':'); i >= 0 && j > i {
		s = s[:i] + s[j:]
	}
	return netip.ParseAddrPort(s)
}

// OnMachine reports whether traffic to addr stays on this machine: a
// loopback address, or one of the given prefixes (the networks the local
// cluster made itself).
func OnMachine(addr netip.Addr, local ...netip.Prefix) bool {
	addr = addr.Unmap()
	if addr.IsLoopback() {
		return true
	}
	for _, p := range local {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Allowed names what the local cluster made on this machine besides
// loopback: the interfaces its addresses route through (the real node's
// bridge; an address on lo routes through lo) and the address ranges no
// interface has (Service addresses, which kube-proxy translates).
type Allowed struct {
	// Devices are interfaces whose addresses stay on this machine.
	Devices []string
	// Prefixes are ranges whose addresses stay on this machine.
	Prefixes []netip.Prefix
}

// Watcher samples the cluster processes' TCP connections until stopped
// and keeps every one whose peer is off this machine.
type Watcher struct {
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	mu       sync.Mutex
	seen     map[string]Connection
	samples  int
	err      error
}

// Watch starts sampling `ss -tnpH` every interval. It looks at the
// processes named in ClusterProcesses and at this process; a peer is on
// this machine when it is a loopback address, in one of allowed's ranges,
// or routed by the kernel through lo or one of allowed's interfaces.
//
// Stop lets a sample in progress finish rather than killing its commands:
// a killed `ip route get` would read as a failed watch, and the connections
// of that last sample would go unchecked.
func Watch(interval time.Duration, allowed Allowed) *Watcher {
	w := &Watcher{stop: make(chan struct{}), done: make(chan struct{}), seen: map[string]Connection{}}
	self := os.Getpid()
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			w.sample(self, allowed)
			// A tick that came during the sample must not win over Stop.
			select {
			case <-w.stop:
				return
			default:
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// sampleTimeout bounds one sample's commands, so that a hung `ss` or `ip`
// cannot hold Stop forever.
const sampleTimeout = 30 * time.Second

func (w *Watcher) sample(self int, allowed Allowed) {
	ctx, cancel := context.WithTimeout(context.Background(), sampleTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ss", "-tnpH").Output()
	var conns, suspects []Connection
	if err == nil {
		conns, err = parseConnections(string(out))
	}
	for _, c := range conns {
		if (c.PID == self || isClusterProcess(c.Process)) && !OnMachine(c.Peer.Addr(), allowed.Prefixes...) {
			suspects = append(suspects, c)
		}
	}
	var devices map[netip.Addr]string
	if err == nil && len(suspects) > 0 {
		peers := make([]netip.Addr, 0, len(suspects))
		for _, c := range suspects {
			peers = append(peers, c.Peer.Addr().Unmap())
		}
		devices, err = RouteDevices(ctx, peers)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = fmt.Errorf("ss -tnpH: %w", err)
		return
	}
	w.samples++
	for _, c := range suspects {
		dev := devices[c.Peer.Addr().Unmap()]
		if dev != LoopbackDevice && !slices.Contains(allowed.Devices, dev) {
			w.seen[c.Process+" "+c.Peer.String()] = c
		}
	}
}

func isClusterProcess(name string) bool {
	for _, p := range ClusterProcesses {
		if name == p {
			return true
		}
	}
	return false
}

// Stop ends the sampling and returns the connections seen to a peer off
// this machine, one per process and peer, and an error when sampling failed
// or never succeeded. It waits for the sample in progress, up to
// sampleTimeout, and may be called more than once.
func (w *Watcher) Stop() ([]Connection, error) {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && w.samples == 0 {
		w.err = fmt.Errorf("ss -tnpH never ran")
	}
	out := make([]Connection, 0, len(w.seen))
	for _, c := range w.seen {
		out = append(out, c)
	}
	return out, w.err
}
