// Package redisadmin manages the membership and slot layout of a Redis
// Cluster: bootstrap, scale up, scale down and heal, over plain Redis
// commands (CLUSTER MEET, ADDSLOTSRANGE, SETSLOT, MIGRATE, FORGET, ...).
//
// It knows nothing of Kubernetes. Nodes are named (a pod name, say) and an
// injectable Resolver turns a name into host:port, so the same code drives
// pods in a cluster and local redis-server processes in tests.
//
// Every step reads the cluster's state first and does only what is missing,
// so Reconcile is idempotent and resumes where an interrupted run stopped:
// a slot left MIGRATING or IMPORTING is finished, a half-assigned slot space
// is completed, and a drained node that was not forgotten yet is forgotten.
package redisadmin

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Resolver returns the host:port at which the named node accepts clients.
// The host must be an IP address: CLUSTER MEET takes no host names.
type Resolver func(ctx context.Context, node string) (string, error)

// Topology is the cluster that Reconcile builds.
type Topology struct {
	// Shards lists the nodes of each shard. The first node is the preferred
	// master, the others are its replicas; a shard whose replica was
	// promoted by a failover keeps the promoted master.
	Shards [][]string
	// Leaving are nodes that still run but are to be removed: their slots
	// are moved to the shards' masters, then every other node forgets them.
	Leaving []string
}

// Nodes returns every node of the topology, shards first.
func (t Topology) Nodes() []string {
	var out []string
	for _, s := range t.Shards {
		out = append(out, s...)
	}
	return append(out, t.Leaving...)
}

// Options tune an Admin. The zero value is usable.
type Options struct {
	// GossipTimeout bounds how long Reconcile waits for nodes to learn about
	// each other after CLUSTER MEET; 15s when zero.
	GossipTimeout time.Duration
	// MaxSlotsPerRun bounds the slots one Reconcile moves, so that a caller
	// can report progress between runs; no bound when zero.
	MaxSlotsPerRun int
	// SlotsPerBatch is how many slots move together from one node to
	// another: opened for migration at once, handed over with one pipeline
	// of SETSLOT NODE; 64 when zero. A batch costs a few round trips and,
	// for SETSLOT NODE, a config save with fsync on every master: in
	// test/benchredis (1M keys, 400k moved) 16 slots per batch took 5.5s
	// to shrink 5 -> 3 masters, 64 took 2.3s, and 128 or 256 no less, with
	// more slots answering ASK at once.
	SlotsPerBatch int
	// KeysPerMigrate is how many keys one MIGRATE carries at most; 100 when
	// zero. With 1M keys a slot holds about 60, so one MIGRATE empties it;
	// larger slots stream through in rounds of this many keys.
	KeysPerMigrate int
	// ParallelMoves is how many batches move at once, each between its own
	// source and destination; 4 when zero, 1 for one at a time. The
	// source/destination pairs of a rebalance bound it too: 3 -> 5 masters
	// has at most two disjoint pairs. In test/benchredis, growing 3 -> 5
	// took 10.2s one at a time and 8.1s two at a time, 5s of either being
	// the new nodes' wait for cluster_state:ok.
	ParallelMoves int
	// MigrateTimeout is MIGRATE's timeout; 10s when zero.
	MigrateTimeout time.Duration
	// DialTimeout bounds connecting to a node; 3s when zero.
	DialTimeout time.Duration
	// Username and Password authenticate the Admin to every node, and the
	// nodes to each other when MIGRATE carries keys. Without a password the
	// Admin connects as the default user with none.
	Username, Password string
	// TLSRootCAs, when set, makes the Admin speak TLS and accept a node's
	// certificate when it chains to one of these CAs. Like Redis between
	// its nodes, it checks no host name: nodes are reached at pod IPs,
	// which certificates seldom name.
	TLSRootCAs *x509.CertPool
}

func (o Options) withDefaults() Options {
	if o.GossipTimeout == 0 {
		o.GossipTimeout = 15 * time.Second
	}
	if o.SlotsPerBatch == 0 {
		o.SlotsPerBatch = 64
	}
	if o.KeysPerMigrate == 0 {
		o.KeysPerMigrate = 100
	}
	if o.ParallelMoves == 0 {
		o.ParallelMoves = 4
	}
	if o.MigrateTimeout == 0 {
		o.MigrateTimeout = 10 * time.Second
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 3 * time.Second
	}
	return o
}

// Admin reconciles Redis Clusters.
type Admin struct {
	resolve Resolver
	opts    Options
	// afterMigrate, when set, runs after each MIGRATE; an error stops the run
	// there, as a crash of the caller would. Tests use it.
	afterMigrate func(slot int) error
	// held is how many key names the Admin holds now, and peakHeld the most
	// it ever held: tests check that keys stream through.
	held, peakHeld atomic.Int64
}

// keysHeld records that the Admin took (delta > 0) or dropped key names.
func (a *Admin) keysHeld(delta int) {
	now := a.held.Add(int64(delta))
	for {
		peak := a.peakHeld.Load()
		if now <= peak || a.peakHeld.CompareAndSwap(peak, now) {
			return
		}
	}
}

// New returns an Admin that reaches nodes through resolve.
func New(resolve Resolver, opts Options) *Admin {
	return &Admin{resolve: resolve, opts: opts.withDefaults()}
}

// Action is one change Reconcile made, for events and logs.
type Action struct {
	// Reason is a CamelCase word: NodeMet, SlotsAssigned, SlotsMoved,
	// SlotMigrationFinished, SlotMigrationAborted, ReplicaAttached,
	// ReplicaPromoted, NodeDetached, NodeForgotten.
	Reason string
	// Message says what happened, naming nodes.
	Message string
}

// NodeState is what one node reports about itself.
type NodeState struct {
	// Name is the node's name, as given in the Topology.
	Name string
	// Addr is the address the resolver gave.
	Addr string
	// ID is the node's cluster ID.
	ID string
	// Master is true for a master, false for a replica.
	Master bool
	// MasterName names the master of a replica, or holds its ID when the
	// master is not a node of the topology.
	MasterName string
	// Slots is how many slots the node serves.
	Slots int
	// ClusterState is cluster_state from the node's CLUSTER INFO.
	ClusterState string
	// Leaving is true for a node of Topology.Leaving.
	Leaving bool
	// KnownNodes is how many nodes the node knows, itself included.
	KnownNodes int
}

// State describes the cluster.
type State struct {
	// Nodes are the reachable nodes, in topology order.
	Nodes []NodeState
	// Unreachable maps the nodes that could not be reached to why.
	Unreachable map[string]string
	// ClusterState is "ok" when every reachable node of a shard says so,
	// and otherwise the first other state reported ("fail").
	ClusterState string
	// SlotsAssigned is how many slots a reachable node serves.
	SlotsAssigned int
	// OpenSlots is how many slots are MIGRATING or IMPORTING somewhere.
	OpenSlots int
	// Masters is how many masters serve slots.
	Masters int
}

// Result is what Reconcile did and what is left.
type Result struct {
	// State is the cluster after the run.
	State State
	// Actions lists the changes made, in order.
	Actions []Action
	// Done is true when the cluster is the topology's: every node met,
	// slots balanced across the shard masters, replicas attached, no open
	// slot, and every leaving node drained and forgotten.
	Done bool
	// LeavingForgotten is true when every leaving node serves no slot and
	// no other node knows it, so it may be shut down.
	LeavingForgotten bool
	// Pending says what is still to do when Done is false, e.g. "moving
	// 3277 slots to example-rediscluster-4".
	Pending string
	// SlotsMoved is how many slots the run moved with their keys.
	SlotsMoved int
}

// UnreachableError says that some nodes could not be reached. Reconcile
// changes nothing while a node is unreachable: it cannot tell a node that
// is gone from one that is slow.
type UnreachableError struct {
	// Nodes maps each unreachable node to its error.
	Nodes map[string]string
}

func (e *UnreachableError) Error() string {
	names := make([]string, 0, len(e.Nodes))
	for n := range e.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + e.Nodes[n]
	}
	return "unreachable nodes: " + strings.Join(parts, "; ")
}

// IsUnreachable reports whether err is, or wraps, an UnreachableError.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// node is one connected node and its latest view of the cluster.
type node struct {
	name    string
	addr    string
	leaving bool
	client  *redis.Client
	// migrator sends the pipelines of MIGRATE, whose replies may take
	// longer than client's read timeout allows (see Admin.dialMigrator).
	migrator *redis.Client
	self     Peer
	peers    map[string]Peer
	info     map[string]string
}

func (n *node) host() string { h, _, _ := strings.Cut(n.addr, ":"); return h }
func (n *node) port() string { _, p, _ := strings.Cut(n.addr, ":"); return p }

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
	// hookMu serializes the Admin's test hooks, which parallel moves call.
	hookMu sync.Mutex
}

func (s *session) act(reason, format string, args ...any) {
	s.actions = append(s.actions, Action{Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (s *session) close() {
	for _, n := range s.nodes {
		_ = n.client.Close()
		_ = n.migrator.Close()
	}
}

// connect resolves and reaches every node. Nodes that fail are returned in
// an UnreachableError; the others stay usable for observation.
func (a *Admin) connect(ctx context.Context, topo Topology) (*session, error) {
	s := &session{a: a, topo: topo, byName: map[string]*node{}, byID: map[string]*node{}}
	leaving := map[string]bool{}
	for _, l := range topo.Leaving {
		leaving[l] = true
	}
	unreachable := map[string]string{}
	for _, name := range topo.Nodes() {
		if _, dup := s.byName[name]; dup {
			continue
		}
		addr, err := a.resolve(ctx, name)
		if err != nil {
			unreachable[name] = err.Error()
			continue
		}
		n := &node{name: name, addr: addr, leaving: leaving[name], client: a.dial(addr), migrator: a.dialMigrator(addr)}
		if err := n.load(ctx); err != nil {
			_ = n.client.Close()
			_ = n.migrator.Close()
			unreachable[name] = err.Error()
			continue
		}
		s.nodes = append(s.nodes, n)
		s.byName[name] = n
		s.byID[n.self.ID] = n
	}
	if len(unreachable) > 0 {
		return s, &UnreachableError{Nodes: unreachable}
	}
	return s, nil
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

// clientOptions are the options of every client of a node.
func (a *Admin) clientOptions(addr, username, password string, served *servedCert) *redis.Options {
	return &redis.Options{
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
}

// reload refreshes every node's view.
func (s *session) reload(ctx context.Context) error {
	s.byID = map[string]*node{}
	for _, n := range s.nodes {
		if err := n.load(ctx); err != nil {
			return err
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

// Observe reports the cluster's state without changing anything. Nodes that
// cannot be reached are listed in State.Unreachable and in the returned
// UnreachableError.
func (a *Admin) Observe(ctx context.Context, topo Topology) (State, error) {
	s, err := a.connect(ctx, topo)
	defer s.close()
	return s.state(err), err
}

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

// Reconcile moves the cluster one run towards topo: it heals membership,
// finishes interrupted slot migrations, assigns unserved slots, balances
// slots across the shards' masters, attaches replicas, and drains and
// forgets leaving nodes. It changes nothing when a node is unreachable and
// then returns an UnreachableError. Run it until Result.Done.
func (a *Admin) Reconcile(ctx context.Context, topo Topology) (Result, error) {
	s, err := a.connect(ctx, topo)
	defer s.close()
	if err != nil {
		return Result{State: s.state(err)}, err
	}
	res, err := s.reconcile(ctx)
	res.Actions, res.SlotsMoved = s.actions, s.slotsMoved
	if err != nil {
		// Report what is known; the error says why the run stopped.
		if rerr := s.reload(ctx); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	res.State = s.state(nil)
	return res, err
}

func (s *session) reconcile(ctx context.Context) (Result, error) {
	var res Result
	for pass := 0; ; pass++ {
		promoted, err := s.promoteOrphans(ctx)
		if err != nil {
			return res, err
		}
		if err := s.forgetStale(ctx); err != nil {
			return res, err
		}
		if err := s.meet(ctx); err != nil {
			return res, err
		}
		met, err := s.waitMet(ctx)
		if err != nil {
			return res, err
		}
		if !met {
			res.Pending = "waiting for the nodes to learn about each other"
			return res, nil
		}
		detached, err := s.detachShardMasters(ctx)
		if err != nil {
			return res, err
		}
		if !detached && !promoted || pass == 2 {
			break
		}
	}
	masters, ok := s.shardMasters()
	if !ok {
		res.Pending = "waiting for every shard to have a master"
		return res, nil
	}
	if err := s.assignUnowned(ctx, masters); err != nil {
		return res, err
	}
	// A node refuses MIGRATE's RESTORE while it thinks the cluster is down,
	// as a node does for a moment after it starts or joins.
	if notOK, err := s.waitClusterOK(ctx); err != nil || notOK != "" {
		res.Pending = "waiting for cluster_state:ok on " + notOK
		return res, err
	}
	if err := s.fixOpenSlots(ctx); err != nil {
		return res, err
	}
	remaining, err := s.rebalance(ctx, masters)
	if err != nil {
		return res, err
	}
	if err := s.attachReplicas(ctx, masters); err != nil {
		return res, err
	}
	if len(remaining) > 0 {
		res.Pending = describeMoves(remaining, s.byID)
		return res, nil
	}
	forgotten, err := s.forgetLeaving(ctx)
	if err != nil {
		return res, err
	}
	res.LeavingForgotten = forgotten
	if err := s.reload(ctx); err != nil {
		return res, err
	}
	res.Pending = s.pending(masters)
	if !forgotten && res.Pending == "" {
		res.Pending = "forgetting the leaving nodes"
	}
	res.Done = res.Pending == ""
	return res, nil
}

// pending describes what a converged cluster would not show.
func (s *session) pending(masters []*node) string {
	podIDs := map[string]bool{}
	for _, n := range s.nodes {
		podIDs[n.self.ID] = true
	}
	desired := s.desired()
	for _, n := range desired {
		for _, p := range desired {
			if n != p && !n.knows(p.self.ID, p.addr) {
				return fmt.Sprintf("waiting for %s to learn about %s", n.name, p.name)
			}
		}
		for id, p := range n.peers {
			if !podIDs[id] && !p.Has("handshake") {
				return fmt.Sprintf("waiting for %s to forget the departed node %s", n.name, id)
			}
		}
		if len(n.self.Migrating)+len(n.self.Importing) > 0 {
			return "finishing slot migrations on " + n.name
		}
	}
	served := 0
	for _, m := range masters {
		served += len(m.self.Slots)
	}
	if served != NumSlots {
		return fmt.Sprintf("waiting for the masters to serve all slots (%d of %d)", served, NumSlots)
	}
	for i, shard := range s.topo.Shards {
		for _, name := range shard {
			n := s.byName[name]
			if n != masters[i] && n.self.MasterID != masters[i].self.ID {
				return fmt.Sprintf("attaching replica %s to %s", n.name, masters[i].name)
			}
		}
	}
	return ""
}

func describeMoves(moves []move, byID map[string]*node) string {
	count := map[string]int{}
	var order []string
	for _, m := range moves {
		if count[m.to] == 0 {
			order = append(order, m.to)
		}
		count[m.to]++
	}
	parts := make([]string, len(order))
	for i, id := range order {
		name := id
		if n := byID[id]; n != nil {
			name = n.name
		}
		parts[i] = fmt.Sprintf("%d slots to %s", count[id], name)
	}
	return "moving " + strings.Join(parts, ", ")
}

// isErr reports whether err is a Redis error reply containing text.
func isErr(err error, text string) bool {
	return err != nil && strings.Contains(err.Error(), text)
}
