package redisadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// node is one connected node and its latest view of the cluster.
type node struct {
	name    string
	addr    string
	leaving bool
	client  *redis.Client
	// migrator sends the pipelines of MIGRATE, whose replies may take
	// longer than client's read timeout allows (see Admin.dialMigrator).
	migrator *redis.Client
	// pace sizes the windows of MIGRATE when the node is a source. One
	// goroutine at a time moves slots from a node (see runWave).
	pace *pacer
	// bytesPerKey is the node's dataset memory per key when it first
	// became a source in this run, to estimate the bytes its keys take.
	bytesPerKey float64
	// restUntil is when the node, as a source, may run its next window:
	// the rest is owed between windows, also across batches of slots, and
	// not after the last one.
	restUntil time.Time
	self      Peer
	peers     map[string]Peer
	info      map[string]string
	// tls is the node's TLS settings, which tlsConfig reads once.
	tlsOnce sync.Once
	tls     nodeTLS
	tlsErr  error
}

// host and port split the node's address as CLUSTER MEET and MIGRATE take
// it; an IPv6 host has colons of its own, so only net.SplitHostPort splits
// it right. The address comes from the Resolver, which joins it with
// net.JoinHostPort.
func (n *node) host() string { h, _, _ := net.SplitHostPort(n.addr); return h }
func (n *node) port() string { _, p, _ := net.SplitHostPort(n.addr); return p }

// knows reports whether n sees the node id at addr.
func (n *node) knows(id, addr string) bool {
	p, ok := n.peers[id]
	return ok && p.Addr == addr && !p.Has("handshake") && !p.Has("noaddr")
}

func (n *node) load(ctx context.Context) error {
	text, err := n.client.ClusterNodes(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER NODES on %s: %w", n.name, err)
	}
	peers, err := parseNodes(text)
	if err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	n.peers = make(map[string]Peer, len(peers))
	for _, p := range peers {
		n.peers[p.ID] = p
		if p.Has("myself") {
			n.self = p
		}
	}
	if n.self.ID == "" {
		return fmt.Errorf("node %s: CLUSTER NODES has no myself line", n.name)
	}
	info, err := n.client.ClusterInfo(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER INFO on %s: %w", n.name, err)
	}
	n.info = parseInfo(info)
	return nil
}

// session is one run against a cluster.
type session struct {
	a       *Admin
	topo    Topology
	nodes   []*node // topology order
	byName  map[string]*node
	byID    map[string]*node
	actions []Action
	// slotsMoved counts the slots moved with their keys.
	slotsMoved int
	// migration tallies the moves of slots with their keys, both the
	// rebalance's and the interrupted ones finished, for the measured
	// migration rate (Result.Migration).
	migration migrationTally
	// slotsAssigned counts the slots given to a master because no node
	// served them.
	slotsAssigned int
	// hookMu serializes the Admin's test hooks, which parallel moves call.
	hookMu sync.Mutex
}

func (s *session) act(reason Reason, format string, args ...any) {
	s.actions = append(s.actions, Action{Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (s *session) close() {
	for _, n := range s.nodes {
		_ = n.client.Close()
		_ = n.migrator.Close()
	}
}

// connect resolves and reaches every node, several at once (see
// connectParallelism). Nodes that fail are returned in an UnreachableError;
// the others stay usable for observation.
func (a *Admin) connect(ctx context.Context, topo Topology) (*session, error) {
	s := &session{a: a, topo: topo, byName: map[string]*node{}, byID: map[string]*node{}}
	leaving := map[string]bool{}
	for _, l := range topo.Leaving {
		leaving[l] = true
	}
	var names []string
	seen := map[string]bool{}
	for _, name := range topo.Nodes() {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	nodes := make([]*node, len(names))
	errs := make([]error, len(names))
	eachParallel(len(names), connectParallelism, func(i int) {
		nodes[i], errs[i] = a.connectNode(ctx, names[i], leaving[names[i]])
	})
	unreachable := &UnreachableError{}
	for i, n := range nodes {
		if errs[i] != nil {
			unreachable.add(names[i], errs[i])
			continue
		}
		s.nodes = append(s.nodes, n)
		s.byName[n.name] = n
		s.byID[n.self.ID] = n
	}
	if len(unreachable.Nodes) > 0 {
		return s, unreachable
	}
	return s, nil
}

// connectNode resolves and reaches one node and loads its view.
func (a *Admin) connectNode(ctx context.Context, name string, leaving bool) (*node, error) {
	addr, err := a.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	n := &node{name: name, addr: addr, leaving: leaving, client: a.dial(addr), migrator: a.dialMigrator(addr)}
	if err := n.load(ctx); err != nil {
		_ = n.client.Close()
		_ = n.migrator.Close()
		return nil, err
	}
	return n, nil
}

func (a *Admin) dial(addr string) *redis.Client {
	return a.dialAs(addr, a.opts.Username, a.opts.Password, nil)
}

// dialAs returns a client of addr that authenticates as username (the
// default user when empty) and, with TLS, records the node's certificate
// in served when served is not nil.
func (a *Admin) dialAs(addr, username, password string, served *servedCert) *redis.Client {
	return redis.NewClient(a.clientOptions(addr, username, password, served))
}

// dialMigrator returns a client of addr for pipelines of MIGRATE. go-redis
// gives a pipeline's replies one read deadline together, and each of a
// window's MIGRATEs may take up to MigrateTimeout (redis-server's own
// bound on its I/O with the destination), so the deadline covers the whole
// window. The connection is made on first use: most nodes never send one.
func (a *Admin) dialMigrator(addr string) *redis.Client {
	o := a.clientOptions(addr, a.opts.Username, a.opts.Password, nil)
	o.ReadTimeout = migrateWindow*a.opts.MigrateTimeout + 5*time.Second
	o.PoolSize = 1
	return redis.NewClient(o)
}

// clientOptions are the options of every client of a node. Every
// connection reads through a replyGuard.
func (a *Admin) clientOptions(addr, username, password string, served *servedCert) *redis.Options {
	o := &redis.Options{
		Addr:                     addr,
		Username:                 username,
		Password:                 password,
		TLSConfig:                a.tlsConfig(served),
		Protocol:                 2,
		DisableIdentity:          true,
		MaxRetries:               -1,
		PoolSize:                 2,
		DialTimeout:              a.opts.DialTimeout,
		ReadTimeout:              a.opts.MigrateTimeout + 5*time.Second,
		WriteTimeout:             a.opts.DialTimeout,
		ContextTimeoutEnabled:    true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	// One dial per attempt: the run itself is retried by the next
	// reconcile, and the client's own retries would multiply what a node
	// that drops packets costs a worker (a dial timeout each).
	o.DialerRetries = 1
	// The default dialer reads DialTimeout and TLSConfig from o when it
	// dials.
	o.Dialer = guardDialer(redis.NewDialer(o), a.opts.ReplyLimits)
	return o
}

// add records that node could not be used, and why.
func (e *UnreachableError) add(node string, err error) {
	if e.Nodes == nil {
		e.Nodes = map[string]string{}
	}
	e.Nodes[node] = err.Error()
	if redis.IsLoadingError(err) {
		if e.Loading == nil {
			e.Loading = map[string]bool{}
		}
		e.Loading[node] = true
	}
}

// reload refreshes every node's view. A node that stopped answering
// since the session reached it, or answers LOADING after a restart, is
// unreachable like one never reached.
func (s *session) reload(ctx context.Context) error {
	s.byID = map[string]*node{}
	for _, n := range s.nodes {
		if err := n.load(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			u := &UnreachableError{}
			u.add(n.name, err)
			return u
		}
		s.byID[n.self.ID] = n
	}
	return nil
}

// desired returns the nodes of the shards, without the leaving ones.
func (s *session) desired() []*node {
	var out []*node
	for _, n := range s.nodes {
		if !n.leaving {
			out = append(out, n)
		}
	}
	return out
}

// state describes the cluster as the session's views show it, with the
// nodes that connectErr, an UnreachableError, says were out of reach.
func (s *session) state(connectErr error) State {
	st := State{}
	var u *UnreachableError
	if errors.As(connectErr, &u) {
		st.Unreachable = u.Nodes
	}
	served := map[int]bool{}
	open := map[int]bool{}
	for _, n := range s.nodes {
		ns := NodeState{
			Name: n.name, Addr: n.addr, ID: n.self.ID, Master: n.self.IsMaster(),
			Slots: len(n.self.Slots), ClusterState: n.info["cluster_state"], Leaving: n.leaving,
			KnownNodes: len(n.peers),
		}
		if m := n.self.MasterID; m != "" {
			ns.MasterName = m
			if mn := s.byID[m]; mn != nil {
				ns.MasterName = mn.name
			}
		}
		st.Nodes = append(st.Nodes, ns)
		for _, slot := range n.self.Slots {
			served[slot] = true
		}
		for slot := range n.self.Migrating {
			open[slot] = true
		}
		for slot := range n.self.Importing {
			open[slot] = true
		}
		if ns.Master && ns.Slots > 0 {
			st.Masters++
		}
		if !n.leaving && (st.ClusterState == "" || st.ClusterState == "ok") {
			st.ClusterState = ns.ClusterState
		}
	}
	if len(st.Unreachable) > 0 && st.ClusterState == "ok" {
		// Unreachable nodes may see it otherwise; claim nothing.
		st.ClusterState = "unknown"
	}
	st.SlotsAssigned = len(served)
	st.OpenSlots = len(open)
	return st
}

// isErr reports whether err is a Redis error reply containing text.
func isErr(err error, text string) bool {
	return err != nil && strings.Contains(err.Error(), text)
}
