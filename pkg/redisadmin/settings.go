package redisadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ReplicaMigration is the setting every node must run with turned off.
// With Redis's default (yes), a master that gives away its last slot
// turns into a replica of the node that took it, and replicas move to
// masters left without one on their own: the operator places every node
// itself, and a scale-down's drained master must stay a master that
// answers MOVED until it is removed.
const ReplicaMigration = "cluster-allow-replica-migration"

// disableReplicaMigration turns ReplicaMigration off in place on every
// node that runs with it on: nodes started before their configuration
// file said no (ConfigFile). It reads the setting on all nodes at once.
func (s *session) disableReplicaMigration(ctx context.Context) error {
	changed := make([]bool, len(s.nodes))
	errs := make([]error, len(s.nodes))
	eachParallel(len(s.nodes), connectParallelism, func(i int) {
		n := s.nodes[i]
		got, err := n.client.ConfigGet(ctx, ReplicaMigration).Result()
		if err != nil {
			errs[i] = fmt.Errorf("CONFIG GET %s on %s: %w", ReplicaMigration, n.name, err)
			return
		}
		if got[ReplicaMigration] == "no" {
			return
		}
		if err := n.client.ConfigSet(ctx, ReplicaMigration, "no").Err(); err != nil {
			errs[i] = fmt.Errorf("CONFIG SET %s no on %s: %w", ReplicaMigration, n.name, err)
			return
		}
		changed[i] = true
	})
	var names []string
	for i, n := range s.nodes {
		if changed[i] {
			names = append(names, n.name)
		}
	}
	if len(names) > 0 {
		s.act(ReasonReplicaMigrationDisabled, "%s no longer turn a master without slots into a replica (%s no)", strings.Join(names, ", "), ReplicaMigration)
	}
	return errors.Join(errs...)
}
