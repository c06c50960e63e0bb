package redisadmin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// promoteOrphans promotes a replica whose master is no node of the topology
// any more (its pod came back with a new identity, or never came back) while
// the replica still holds that master's slots: the replica has the only copy
// of the data, so it takes the slots over instead of being re-pointed.
func (s *session) promoteOrphans(ctx context.Context) (bool, error) {
	promoted := map[string]bool{}
	for _, n := range s.desired() {
		mid := n.self.MasterID
		if mid == "" || s.byID[mid] != nil || promoted[mid] {
			continue
		}
		if len(n.peers[mid].Slots) == 0 {
			continue // nothing to take over; attachReplicas re-points it
		}
		if err := n.client.Do(ctx, "CLUSTER", "FAILOVER", "TAKEOVER").Err(); err != nil {
			return false, fmt.Errorf("promoting %s, whose master %s is gone: %w", n.name, mid, err)
		}
		promoted[mid] = true
		s.act(ReasonReplicaPromoted, "promoted %s to master: its master %s is gone", n.name, mid)
		if err := s.until(ctx, func() bool { return n.self.IsMaster() }); err != nil {
			return false, err
		}
	}
	return len(promoted) > 0, nil
}

// errUnsettled says that the cluster did not reach a state within GossipTimeout.
var errUnsettled = errors.New("the cluster did not settle in time")

// until reloads the views until done holds or GossipTimeout passes, then
// returns errUnsettled.
func (s *session) until(ctx context.Context, done func() bool) error {
	return s.untilWithin(ctx, s.a.opts.GossipTimeout, done)
}

// untilWithin is until with its own timeout.
func (s *session) untilWithin(ctx context.Context, timeout time.Duration, done func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := s.reload(ctx); err != nil {
			return err
		}
		if done() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%s)", errUnsettled, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// forgetStale makes every node forget the nodes that are no node of the
// topology: a pod that restarted without its cluster config got a new ID,
// and a drained node was reset. A replica cannot forget its own master; it
// does so once attachReplicas re-pointed it.
func (s *session) forgetStale(ctx context.Context) error {
	forgot := map[string]bool{}
	for _, n := range s.nodes {
		for id, p := range n.peers {
			if s.byID[id] != nil || p.Has("handshake") || id == n.self.MasterID {
				continue
			}
			if err := n.client.ClusterForget(ctx, id).Err(); err != nil && !isErr(err, "Unknown node") {
				return fmt.Errorf("%s forgetting departed node %s: %w", n.name, id, err)
			}
			if !forgot[id] {
				forgot[id] = true
				s.act(ReasonNodeForgotten, "forgot departed node %s (last seen at %s)", id, p.Addr)
			}
		}
	}
	if len(forgot) == 0 {
		return nil
	}
	return s.reload(ctx)
}

// meet introduces every node of the shards to every other one it does not
// see at its current address: new nodes, and nodes that restarted with a new
// IP. Meeting a known ID at a new address updates the address.
func (s *session) meet(ctx context.Context) error {
	met := map[string]bool{}
	desired := s.desired()
	for _, q := range desired {
		for _, p := range desired {
			if q == p || q.knows(p.self.ID, p.addr) {
				continue
			}
			if err := q.client.ClusterMeet(ctx, p.host(), p.port()).Err(); err != nil {
				return fmt.Errorf("%s meeting %s at %s: %w", q.name, p.name, p.addr, err)
			}
			if !met[p.name] {
				met[p.name] = true
				s.act(ReasonNodeMet, "introduced %s at %s to the cluster", p.name, p.addr)
			}
		}
	}
	return nil
}

// waitMet waits until every node of the shards sees every other one at its
// address, and reports whether they do.
func (s *session) waitMet(ctx context.Context) (bool, error) {
	desired := s.desired()
	allMet := func() bool {
		for _, q := range desired {
			for _, p := range desired {
				if q != p && !q.knows(p.self.ID, p.addr) {
					return false
				}
			}
		}
		return true
	}
	if allMet() {
		return true, nil
	}
	err := s.until(ctx, allMet)
	if errors.Is(err, errUnsettled) {
		return false, nil
	}
	return err == nil, err
}

// candidate picks the master of a shard: the member serving the most slots,
// else the first member that is a master, else the first member.
func (s *session) candidate(shard []string) *node {
	var best *node
	for _, name := range shard {
		n := s.byName[name]
		if n.self.IsMaster() && len(n.self.Slots) > 0 && (best == nil || len(n.self.Slots) > len(best.self.Slots)) {
			best = n
		}
	}
	if best != nil {
		return best
	}
	for _, name := range shard {
		if n := s.byName[name]; n.self.IsMaster() {
			return n
		}
	}
	return s.byName[shard[0]]
}

// shardMasters returns each shard's master, and false while one of them is
// still a replica.
func (s *session) shardMasters() ([]*node, bool) {
	out := make([]*node, len(s.topo.Shards))
	for i, shard := range s.topo.Shards {
		out[i] = s.candidate(shard)
		if !out[i].self.IsMaster() {
			return out, false
		}
	}
	return out, true
}

// detachShardMasters turns a shard's chosen master that is a replica of
// another shard (the layout changed) into an empty master. CLUSTER RESET
// drops only a replica's copy of the data; the node is met again afterwards.
func (s *session) detachShardMasters(ctx context.Context) (bool, error) {
	detached := false
	for _, shard := range s.topo.Shards {
		c := s.candidate(shard)
		if c.self.IsMaster() {
			continue
		}
		if m := s.byID[c.self.MasterID]; m != nil && contains(shard, m.name) {
			continue
		}
		if err := c.client.ClusterResetSoft(ctx).Err(); err != nil {
			return false, fmt.Errorf("detaching %s to make it a master: %w", c.name, err)
		}
		detached = true
		s.act(ReasonNodeDetached, "detached replica %s to become the master of its shard", c.name)
	}
	if !detached {
		return false, nil
	}
	return true, s.reload(ctx)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// fixOpenSlots finishes slot migrations that a previous run left open. When
// both ends are nodes of the topology the migration is completed (a later
// rebalance moves the slot back if the plan changed); when one end is gone
// the slot is made stable again.
func (s *session) fixOpenSlots(ctx context.Context) error {
	open := map[pair][]int{}
	seen := map[int]bool{}
	for _, n := range s.nodes {
		for slot, dst := range n.self.Migrating {
			if !seen[slot] {
				seen[slot] = true
				open[pair{n.self.ID, dst}] = append(open[pair{n.self.ID, dst}], slot)
			}
		}
	}
	for _, n := range s.nodes {
		for slot, src := range n.self.Importing {
			if !seen[slot] {
				seen[slot] = true
				open[pair{src, n.self.ID}] = append(open[pair{src, n.self.ID}], slot)
			}
		}
	}
	if len(open) == 0 {
		return nil
	}
	pairs := make([]pair, 0, len(open))
	for p := range open {
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].from+pairs[i].to < pairs[j].from+pairs[j].to })
	for _, p := range pairs {
		slots := open[p]
		sort.Ints(slots)
		src, dst := s.byID[p.from], s.byID[p.to]
		if src != nil && dst != nil && dst.self.IsMaster() {
			if err := s.migration.timed(func() (int, error) {
				if err := s.moveSlots(ctx, src, dst, slots, s.masterNodes()); err != nil {
					return 0, err
				}
				return len(slots), nil
			}); err != nil {
				return err
			}
			s.act(ReasonSlotMigrationFinished, "finished the interrupted migration of %d slots from %s to %s", len(slots), src.name, dst.name)
			continue
		}
		for _, n := range s.nodes {
			for _, slot := range slots {
				if _, m := n.self.Migrating[slot]; !m {
					if _, i := n.self.Importing[slot]; !i {
						continue
					}
				}
				if err := n.client.Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err(); err != nil {
					return fmt.Errorf("making slot %d stable on %s: %w", slot, n.name, err)
				}
			}
		}
		s.act(ReasonSlotMigrationAborted, "aborted the interrupted migration of %d slots between departed node and %s", len(slots), nameOr(src, dst))
	}
	return s.reload(ctx)
}

func nameOr(a, b *node) string {
	if a != nil {
		return a.name
	}
	if b != nil {
		return b.name
	}
	return "unknown nodes"
}

// assignUnowned gives every slot that no node serves to the master whose
// even share holds it. On a new cluster that is every slot; after an
// interrupted bootstrap it is the rest.
func (s *session) assignUnowned(ctx context.Context, masters []*node) error {
	var claimed [NumSlots]bool
	for _, n := range s.nodes {
		for _, p := range n.peers {
			for _, slot := range p.Slots {
				claimed[slot] = true
			}
		}
	}
	perMaster := make([][]int, len(masters))
	for slot, c := range claimed {
		if !c {
			i := plannedOwner(slot, len(masters))
			perMaster[i] = append(perMaster[i], slot)
		}
	}
	assigned := false
	for i, slots := range perMaster {
		for _, r := range ranges(slots) {
			if err := masters[i].client.ClusterAddSlotsRange(ctx, r.From, r.To).Err(); err != nil {
				return fmt.Errorf("assigning slots %d-%d to %s: %w", r.From, r.To, masters[i].name, err)
			}
			assigned = true
			s.slotsAssigned += r.To - r.From + 1
			s.act(ReasonSlotsAssigned, "assigned slots %d-%d to %s", r.From, r.To, masters[i].name)
		}
	}
	if !assigned {
		return nil
	}
	return s.until(ctx, func() bool {
		for i, slots := range perMaster {
			if len(slots) > 0 && !containsAll(masters[i].self.Slots, slots) {
				return false
			}
		}
		return true
	})
}

// waitClusterOK waits until every node reports cluster_state:ok, and
// otherwise returns the first node that does not.
func (s *session) waitClusterOK(ctx context.Context) (string, error) {
	first := func() string {
		for _, n := range s.nodes {
			if n.info["cluster_state"] != "ok" {
				return n.name
			}
		}
		return ""
	}
	if first() == "" {
		return "", nil
	}
	err := s.until(ctx, func() bool { return first() == "" })
	if errors.Is(err, errUnsettled) {
		err = nil
	}
	return first(), err
}

func containsAll(have, want []int) bool {
	set := make(map[int]bool, len(have))
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

// owners maps each slot to the node that says it serves it.
func (s *session) owners() (*[NumSlots]string, error) {
	var owner [NumSlots]string
	for _, n := range s.nodes {
		for _, slot := range n.self.Slots {
			if owner[slot] != "" && owner[slot] != n.self.ID {
				return nil, fmt.Errorf("slot %d is claimed by both %s and %s; waiting for the cluster to agree", slot, s.byID[owner[slot]].name, n.name)
			}
			owner[slot] = n.self.ID
		}
	}
	return &owner, nil
}

// pipeline sends one command per item to n and fails on the first error
// reply that does not contain tolerated.
func pipeline(ctx context.Context, n *node, items []any, cmd func(redis.Pipeliner, any), tolerated string) error {
	if len(items) == 0 {
		return nil
	}
	p := n.client.Pipeline()
	for _, it := range items {
		cmd(p, it)
	}
	cmds, err := p.Exec(ctx)
	if err != nil && len(cmds) == 0 {
		return err
	}
	for _, c := range cmds {
		if e := c.Err(); e != nil && (tolerated == "" || !isErr(e, tolerated)) {
			return e
		}
	}
	return nil
}

func set(slots []int) map[int]bool {
	out := make(map[int]bool, len(slots))
	for _, s := range slots {
		out[s] = true
	}
	return out
}

// attachReplicas makes every other member of a shard a replica of the
// shard's master, including replicas whose master is gone. A member that
// still serves slots is skipped until rebalance drained it.
func (s *session) attachReplicas(ctx context.Context, masters []*node) error {
	attached := false
	for i, shard := range s.topo.Shards {
		m := masters[i]
		for _, name := range shard {
			n := s.byName[name]
			if n == m || len(n.self.Slots) > 0 || n.self.MasterID == m.self.ID {
				continue
			}
			if err := n.client.ClusterReplicate(ctx, m.self.ID).Err(); err != nil {
				return fmt.Errorf("making %s a replica of %s: %w", n.name, m.name, err)
			}
			attached = true
			s.act(ReasonReplicaAttached, "made %s a replica of %s", n.name, m.name)
		}
	}
	if !attached {
		return nil
	}
	return s.reload(ctx)
}

// leavingDrained reports whether every leaving node serves no slot.
func (s *session) leavingDrained() bool {
	for _, n := range s.nodes {
		if n.leaving && len(n.self.Slots) > 0 {
			return false
		}
	}
	return true
}

// forgetLeaving removes drained leaving nodes from the cluster: every other
// node forgets them, then each is reset so that it stops gossiping and gets
// a new ID (CLUSTER FORGET bans the old one for a minute). It reports whether
// every leaving node is out.
func (s *session) forgetLeaving(ctx context.Context) (bool, error) {
	all := true
	for _, l := range s.nodes {
		if !l.leaving {
			continue
		}
		if len(l.self.Slots) > 0 {
			all = false
			continue
		}
		if l.self.IsMaster() {
			keys, err := keyCount(ctx, l)
			if err != nil {
				return false, fmt.Errorf("counting keys on %s: %w", l.name, err)
			}
			if keys > 0 {
				return false, fmt.Errorf("leaving node %s serves no slot but holds %d keys; not removing it", l.name, keys)
			}
		}
		blocked := false
		for _, r := range s.nodes {
			if r != l && r.self.MasterID == l.self.ID && !r.leaving {
				blocked = true
			}
		}
		if blocked {
			all = false
			continue
		}
		changed := false
		for _, r := range s.nodes {
			if r == l {
				continue
			}
			if _, ok := r.peers[l.self.ID]; !ok {
				continue
			}
			if err := r.client.ClusterForget(ctx, l.self.ID).Err(); err != nil && !isErr(err, "Unknown node") && !isErr(err, "my master") {
				return false, fmt.Errorf("%s forgetting %s: %w", r.name, l.name, err)
			}
			changed = true
		}
		if len(l.peers) > 1 {
			if err := l.client.ClusterResetHard(ctx).Err(); err != nil {
				return false, fmt.Errorf("resetting %s: %w", l.name, err)
			}
			changed = true
		}
		if changed {
			s.act(ReasonNodeForgotten, "removed %s from the cluster", l.name)
		}
	}
	if err := s.reload(ctx); err != nil {
		return false, err
	}
	for _, l := range s.nodes {
		if !l.leaving {
			continue
		}
		for _, r := range s.desired() {
			if _, ok := r.peers[l.self.ID]; ok {
				all = false
			}
		}
	}
	return all, nil
}

// keyCount is how many keys n holds, from INFO keyspace: OperatorUser may
// run INFO but not DBSIZE, and needs no more rights for this.
func keyCount(ctx context.Context, n *node) (int64, error) {
	text, err := n.client.Info(ctx, "keyspace").Result()
	if err != nil {
		return 0, err
	}
	return keysInKeyspace(text)
}

// keysInKeyspace reads the key count of INFO keyspace's text. A cluster
// node has database 0 alone; no line for it means no key.
func keysInKeyspace(text string) (int64, error) {
	db, ok := parseInfo(text)["db0"]
	if !ok {
		return 0, nil
	}
	for _, field := range strings.Split(db, ",") {
		if v, found := strings.CutPrefix(field, "keys="); found {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO keyspace without a key count: %q", db)
}
