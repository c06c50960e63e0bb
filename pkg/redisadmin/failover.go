package redisadmin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// A manual failover lapses after 5 seconds in Redis; Failover waits a
// little longer for each of its attempts.
const (
	manualFailoverTimeout = 7 * time.Second
	failoverAttempts      = 3
)

// ErrNoReplica says that a master has no replica in sync to take over.
var ErrNoReplica = errors.New("no replica in sync")

// replication is what INFO replication says of a node.
type replication struct {
	// offset is master_repl_offset on a master, slave_repl_offset on a replica.
	offset int64
	// linkUp is true on a replica whose link to its master is up.
	linkUp bool
}

func (n *node) replication(ctx context.Context) (replication, error) {
	text, err := n.client.Info(ctx, "replication").Result()
	if err != nil {
		return replication{}, fmt.Errorf("INFO replication on %s: %w", n.name, err)
	}
	info := parseInfo(text)
	r := replication{linkUp: info["master_link_status"] == "up"}
	key := "master_repl_offset"
	if info["role"] == "slave" {
		key = "slave_repl_offset"
	}
	r.offset, _ = strconv.ParseInt(info[key], 10, 64)
	return r, nil
}

// InSyncReplicas returns the replicas of master whose link is up, best
// first (highest replication offset). Every node of topo must be reachable.
func (a *Admin) InSyncReplicas(ctx context.Context, topo Topology, master string) ([]string, error) {
	ctx, cancel := a.runContext(ctx)
	defer cancel()
	s, err := a.connect(ctx, topo)
	defer s.close()
	if err != nil {
		return nil, err
	}
	best, err := s.inSyncReplicas(ctx, master)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(best))
	for i, n := range best {
		out[i] = n.name
	}
	return out, nil
}

func (s *session) inSyncReplicas(ctx context.Context, master string) ([]*node, error) {
	m := s.byName[master]
	if m == nil {
		return nil, fmt.Errorf("%s is not a node of the cluster", master)
	}
	var out []*node
	offsets := map[*node]int64{}
	for _, n := range s.nodes {
		if n.self.MasterID != m.self.ID {
			continue
		}
		r, err := n.replication(ctx)
		if err != nil {
			return nil, err
		}
		if !r.linkUp {
			continue
		}
		offsets[n] = r.offset
		i := len(out)
		for i > 0 && offsets[out[i-1]] < r.offset {
			i--
		}
		out = append(out[:i], append([]*node{n}, out[i:]...)...)
	}
	return out, nil
}

// Failover hands master's slots to its replica with the highest
// replication offset, without losing a write: CLUSTER FAILOVER on the
// replica makes the master stop accepting writes until the replica has
// caught up, then the replica takes over. Failover waits until the roles
// have switched, the new master's offset has reached the old master's and
// every node sees the new roles, and returns the new master. It returns
// ErrNoReplica when no replica's link is up. Every node of topo must be
// reachable.
func (a *Admin) Failover(ctx context.Context, topo Topology, master string) (string, error) {
	ctx, cancel := a.runContext(ctx)
	defer cancel()
	s, err := a.connect(ctx, topo)
	defer s.close()
	if err != nil {
		return "", err
	}
	m := s.byName[master]
	if m == nil {
		return "", fmt.Errorf("%s is not a node of the cluster", master)
	}
	if !m.self.IsMaster() {
		return "", fmt.Errorf("%s is not a master", master)
	}
	replicas, err := s.inSyncReplicas(ctx, master)
	if err != nil {
		return "", err
	}
	if len(replicas) == 0 {
		return "", fmt.Errorf("failing over %s: %w", master, ErrNoReplica)
	}
	r := replicas[0]
	// The master ignores a failover request, and the other masters deny
	// their votes, while they do not yet see the node as the master's
	// replica, as after a fresh CLUSTER REPLICATE until gossip tells them.
	err = s.until(ctx, func() bool {
		for _, n := range s.nodes {
			if n != r && n.peers[r.self.ID].MasterID != m.self.ID {
				return false
			}
		}
		return true
	})
	if err != nil {
		return "", fmt.Errorf("waiting for every node to see %s as a replica of %s: %w", r.name, master, err)
	}
	before, err := m.replication(ctx)
	if err != nil {
		return "", err
	}
	switched := func() bool { return r.self.IsMaster() && m.self.MasterID == r.self.ID }
	// Redis gives a manual failover 5 seconds; a busy machine can miss
	// that, and the request then lapses with the roles unchanged. It is
	// safe to ask again: the master keeps every write until the replica
	// has caught up.
	for attempt := 1; ; attempt++ {
		if err := r.client.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
			return "", fmt.Errorf("CLUSTER FAILOVER on %s: %w", r.name, err)
		}
		err = s.untilWithin(ctx, manualFailoverTimeout, switched)
		if err == nil {
			break
		}
		if !errors.Is(err, errUnsettled) || attempt == failoverAttempts {
			return "", fmt.Errorf("waiting for %s to take over from %s: %w", r.name, master, err)
		}
	}
	var caughtUp bool
	err = s.until(ctx, func() bool {
		now, rerr := r.replication(ctx)
		caughtUp = rerr == nil && now.offset >= before.offset
		return caughtUp
	})
	if err != nil {
		return "", fmt.Errorf("waiting for %s to reach %s's replication offset %d: %w", r.name, master, before.offset, err)
	}
	// A client asks any node for the slot map; until gossip has told every
	// node, some still send it to the old master.
	err = s.until(ctx, func() bool {
		for _, n := range s.nodes {
			if !n.peers[r.self.ID].IsMaster() || n.peers[m.self.ID].MasterID != r.self.ID {
				return false
			}
		}
		return true
	})
	if err != nil {
		return "", fmt.Errorf("waiting for every node to see %s as the master of %s's slots: %w", r.name, master, err)
	}
	return r.name, nil
}
