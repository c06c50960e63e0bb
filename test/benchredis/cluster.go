// Package benchredis measures how fast a Redis Cluster reshards: 3 masters
// grow to 5 and shrink back to 3 with their keys, once by pkg/redisadmin
// (what the RedisCluster controller runs) and once by redis-cli --cluster,
// against real redis-server processes on loopback, while a client reads
// keys all the time. `make bench-redis` runs the full benchmark (build tag
// bench); the untagged test runs a small version of it in `make test`.
package benchredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// Before and After are the numbers of masters before and after growing.
const (
	Before = 3
	After  = 5
)

// ControllerMaxSlotsPerRun is the RedisCluster controller's bound on the
// slots one Reconcile moves, so that the benchmark runs Reconcile as the
// controller does.
const ControllerMaxSlotsPerRun = rediscluster.MaxSlotsPerRun

// maxRuns bounds the Reconcile runs of one scaling: 16384 slots in runs of
// 2048 take 8, and a few more wait for gossip.
const maxRuns = 200

// Cluster is After redis-server processes on loopback, named node-0 to
// node-4, of which the first Before are the masters at the start.
type Cluster struct {
	// Servers are the processes, in name order.
	Servers []*redistest.Server
	// Names are the node names.
	Names []string
	// Admin reaches the nodes by name.
	Admin *redisadmin.Admin
	// clients are one client per node, for DBSIZE and CLUSTER commands.
	clients []*redis.Client
	t       testing.TB
}

// StartCluster starts After empty nodes with more redis-server arguments
// args, and bootstraps the first Before of them as a cluster with
// pkg/redisadmin, each master serving an even range of slots. opts are the
// Admin's options.
func StartCluster(ctx context.Context, t testing.TB, opts redisadmin.Options, args ...string) (*Cluster, error) {
	c := &Cluster{t: t}
	for i := range After {
		s := redistest.StartWith(t, "127.0.0.1", 0, redistest.Options{Args: args})
		c.Servers = append(c.Servers, s)
		c.clients = append(c.clients, s.Client())
		c.Names = append(c.Names, fmt.Sprintf("node-%d", i))
	}
	c.Admin = redisadmin.New(c.resolve, opts)
	return c, c.Converge(ctx, c.Topology(Before))
}

func (c *Cluster) resolve(_ context.Context, name string) (string, error) {
	for i, n := range c.Names {
		if n == name {
			return c.Servers[i].Addr(), nil
		}
	}
	return "", fmt.Errorf("no node %s", name)
}

// Topology is n one-node shards, node-0 to node-(n-1), and the nodes from
// node-n to node-(n+leaving-1) leaving.
func (c *Cluster) Topology(n int, leaving ...string) redisadmin.Topology {
	t := redisadmin.Topology{Leaving: leaving}
	for _, name := range c.Names[:n] {
		t.Shards = append(t.Shards, []string{name})
	}
	return t
}

// Converge runs Reconcile until it reports Done, as the controller does:
// right again while slots are moving, after a pause while it waits for
// gossip.
func (c *Cluster) Converge(ctx context.Context, topo redisadmin.Topology) error {
	var res redisadmin.Result
	var err error
	for range maxRuns {
		if res, err = c.Admin.Reconcile(ctx, topo); err == nil && res.Done {
			return nil
		}
		if err != nil && !redisadmin.IsUnreachable(err) {
			return err
		}
		if res.SlotsMoved == 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("not converged after %d runs: %q (last error: %v)", maxRuns, res.Pending, err)
}

// Client returns a cluster client seeded with the first n nodes, closed
// when the test ends.
func (c *Cluster) Client(n int) *redis.ClusterClient {
	return redistest.ClusterClient(c.t, c.Servers[:n]...)
}

// Addrs returns host:port of the first n nodes.
func (c *Cluster) Addrs(n int) []string {
	out := make([]string, n)
	for i, s := range c.Servers[:n] {
		out[i] = s.Addr()
	}
	return out
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, s := range c.Servers {
		s.Stop()
	}
}

// slotSpread returns the fewest and the most slots that a master of the
// first n nodes serves, and an error when they do not serve every slot
// between them or another node serves one.
func (c *Cluster) slotSpread(ctx context.Context, n int) (lo, hi int, err error) {
	st, err := c.Admin.Observe(ctx, c.Topology(After))
	if err != nil {
		return 0, 0, err
	}
	lo, total := redisadmin.NumSlots, 0
	for i, ns := range st.Nodes {
		if i >= n {
			if ns.Slots > 0 {
				return 0, 0, fmt.Errorf("%s still serves %d slots", ns.Name, ns.Slots)
			}
			continue
		}
		lo, hi = min(lo, ns.Slots), max(hi, ns.Slots)
		total += ns.Slots
	}
	if total != redisadmin.NumSlots {
		return lo, hi, fmt.Errorf("the masters serve %d of %d slots", total, redisadmin.NumSlots)
	}
	return lo, hi, nil
}

// keyCounts returns DBSIZE of every node.
func (c *Cluster) keyCounts(ctx context.Context) ([]int64, error) {
	out := make([]int64, len(c.Servers))
	var errs []error
	for i, cl := range c.clients {
		var err error
		out[i], err = cl.DBSize(ctx).Result()
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// resetStats resets every node's statistics (CONFIG RESETSTAT), the
// errors it counted among them.
func (c *Cluster) resetStats(ctx context.Context) error {
	var errs []error
	for i, cl := range c.clients {
		if err := cl.ConfigResetStat(ctx).Err(); err != nil {
			errs = append(errs, fmt.Errorf("CONFIG RESETSTAT on %s: %w", c.Names[i], err))
		}
	}
	return errors.Join(errs...)
}

// Redirects count the MOVED and ASK replies the nodes sent.
type Redirects struct {
	// Moved is how many MOVED replies: a client's map of the slots was
	// out of date.
	Moved int64
	// Ask is how many ASK replies: the key's slot was migrating and its
	// keys had left.
	Ask int64
}

// redirects sums every node's MOVED and ASK replies since its statistics
// were reset, from INFO errorstats.
func (c *Cluster) redirects(ctx context.Context) (Redirects, error) {
	var r Redirects
	for i, cl := range c.clients {
		info, err := cl.Info(ctx, "errorstats").Result()
		if err != nil {
			return r, fmt.Errorf("INFO errorstats on %s: %w", c.Names[i], err)
		}
		moved, ask, err := parseRedirects(info)
		if err != nil {
			return r, fmt.Errorf("INFO errorstats on %s: %w", c.Names[i], err)
		}
		r.Moved += moved
		r.Ask += ask
	}
	return r, nil
}

// parseRedirects reads the MOVED and ASK counts of INFO errorstats, whose
// lines read "errorstat_MOVED:count=12".
func parseRedirects(info string) (moved, ask int64, err error) {
	for line := range strings.Lines(info) {
		name, count, ok := strings.Cut(strings.TrimSpace(line), ":count=")
		if !ok {
			continue
		}
		var n *int64
		switch name {
		case "errorstat_MOVED":
			n = &moved
		case "errorstat_ASK":
			n = &ask
		default:
			continue
		}
		if *n, err = strconv.ParseInt(count, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("%q: %w", line, err)
		}
	}
	return moved, ask, nil
}

// ids returns every node's cluster ID.
func (c *Cluster) ids(ctx context.Context) ([]string, error) {
	out := make([]string, len(c.clients))
	for i, cl := range c.clients {
		id, err := cl.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return nil, fmt.Errorf("CLUSTER MYID on %s: %w", c.Names[i], err)
		}
		out[i] = id
	}
	return out, nil
}

// waitKnown waits until each of the first n nodes knows n nodes and says
// cluster_state:ok.
func (c *Cluster) waitKnown(ctx context.Context, n int) error {
	want := fmt.Sprintf("cluster_known_nodes:%d", n)
	for deadline := time.Now().Add(30 * time.Second); ; {
		agreed := true
		for _, cl := range c.clients[:n] {
			info, err := cl.ClusterInfo(ctx).Result()
			if err != nil {
				return err
			}
			agreed = agreed && strings.Contains(info, want) && strings.Contains(info, "cluster_state:ok")
		}
		if agreed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the nodes do not know each other after 30s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// splitAddr splits host:port.
func splitAddr(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.Atoi(port)
	return host, p, err
}
