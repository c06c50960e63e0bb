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
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

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

// Observe reports the cluster's state without changing anything. Nodes that
// cannot be reached are listed in State.Unreachable and in the returned
// UnreachableError.
func (a *Admin) Observe(ctx context.Context, topo Topology) (State, error) {
	ctx, cancel := a.runContext(ctx)
	defer cancel()
	s, err := a.connect(ctx, topo)
	defer s.close()
	return s.state(err), err
}

// Reconcile moves the cluster one run towards topo: it heals membership,
// finishes interrupted slot migrations, assigns unserved slots, balances
// slots across the shards' masters, attaches replicas, and drains and
// forgets leaving nodes. It changes nothing when a node is unreachable and
// then returns an UnreachableError. Run it until Result.Done.
func (a *Admin) Reconcile(ctx context.Context, topo Topology) (Result, error) {
	ctx, cancel := a.runContext(ctx)
	defer cancel()
	s, err := a.connect(ctx, topo)
	defer s.close()
	if err != nil {
		return Result{State: s.state(err)}, err
	}
	res, err := s.reconcile(ctx)
	res.Actions, res.SlotsMoved, res.SlotsAssigned, res.Migration = s.actions, s.slotsMoved, s.slotsAssigned, s.migration.result()
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
	if err := s.disableReplicaMigration(ctx); err != nil {
		return res, err
	}
	// Leaving nodes are forgotten only in a run that found them drained
	// already: the run that drains them leaves them in the cluster, so
	// that they redirect clients for a while (longer with KeepDrained).
	drainedAtStart := len(s.topo.Leaving) > 0 && s.leavingDrained()
	res.LeavingDrained = drainedAtStart
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
	if len(s.topo.Leaving) > 0 && (s.topo.KeepDrained || !drainedAtStart) {
		res.Pending = "keeping the drained nodes in the cluster a while, to redirect clients with an old slot map"
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
