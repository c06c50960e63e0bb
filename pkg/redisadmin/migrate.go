package redisadmin

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// migrateWindow is the most slots that share one pipeline of
// GETKEYSINSLOT and the pipeline of MIGRATEs that follows it: the pacer
// (see pacer) makes windows smaller when they keep the source busy too
// long. A MIGRATE carries the keys of one slot only (Redis refuses keys of
// several slots with CROSSSLOT), so pipelining is what spares the round
// trip per slot; the source runs the MIGRATEs one after the other anyway.
// The window bounds what the Admin holds at once, migrateWindow ×
// KeysPerMigrate key names, and how long the replies of one pipeline may
// take (see Admin.dialMigrator). Larger windows gain nothing
// (docs/scale.md has the measurements).
const migrateWindow = 8

// handOverAfter groups the hand-overs of slots whose keys all moved: the
// slots emptied meanwhile are handed over together at the end of the
// first window that ends handOverAfter or more after the first of them
// emptied, or with the batch's last. Until then their source answers each
// read of their keys with ASK; each hand-over makes dst save its
// configuration with an fsync, and costs a round trip to every master.
const handOverAfter = 20 * time.Millisecond

// rebalance moves slots until every master serves its even share and no
// other node serves any, at most MaxSlotsPerRun of them. Batches between
// disjoint pairs of nodes move in parallel (see waves). It returns the
// moves still to do.
func (s *session) rebalance(ctx context.Context, masters []*node) ([]move, error) {
	ids := make([]string, len(masters))
	for i, m := range masters {
		ids[i] = m.self.ID
	}
	owner, err := s.owners()
	if err != nil {
		return nil, err
	}
	moves := planMoves(ids, owner)
	if len(moves) == 0 {
		return nil, nil
	}
	tally := &moveTally{count: map[pair]int{}}
	batches := planBatches(moves, s.a.opts.SlotsPerBatch, s.a.opts.MaxSlotsPerRun)
	for _, wave := range waves(batches, s.a.opts.ParallelMoves) {
		err := s.migration.timed(func() (int, error) {
			done, err := s.runWave(ctx, wave, s.masterNodes())
			tally.add(done)
			return batchSlots(done), err
		})
		if err != nil {
			s.report(tally)
			return nil, err
		}
	}
	s.report(tally)
	if err := s.reload(ctx); err != nil {
		return nil, err
	}
	if owner, err = s.owners(); err != nil {
		return nil, err
	}
	return planMoves(ids, owner), nil
}

// moveTally counts the slots moved per source and destination, in the
// order the pairs first moved, for one event each.
type moveTally struct {
	count map[pair]int
	order []pair
}

// batchSlots counts the slots of batches.
func batchSlots(batches []batch) int {
	n := 0
	for _, b := range batches {
		n += len(b.slots)
	}
	return n
}

func (t *moveTally) add(done []batch) {
	for _, b := range done {
		p := pair{b.from, b.to}
		if t.count[p] == 0 {
			t.order = append(t.order, p)
		}
		t.count[p] += len(b.slots)
	}
}

// report records one SlotsMoved action per pair of the tally.
func (s *session) report(t *moveTally) {
	for _, p := range t.order {
		s.act(ReasonSlotsMoved, "moved %d slots from %s to %s", t.count[p], s.byID[p.from].name, s.byID[p.to].name)
		s.slotsMoved += t.count[p]
	}
}

// masterNodes returns the nodes that are masters now. A wave takes this
// snapshot before it starts, because its goroutines reload the views of
// their own nodes meanwhile.
func (s *session) masterNodes() []*node {
	var out []*node
	for _, n := range s.nodes {
		if n.self.IsMaster() {
			out = append(out, n)
		}
	}
	return out
}

// runWave moves the batches of one wave in parallel, one goroutine each,
// and returns those that completed. The batches touch disjoint nodes, so
// each goroutine alone reloads and changes the views of its two nodes. The
// first failure cancels the others: their slots stay open and the next run
// finishes them, as after a crash.
func (s *session) runWave(ctx context.Context, wave []batch, masters []*node) ([]batch, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(wave))
	var wg sync.WaitGroup
	for i, b := range wave {
		wg.Go(func() {
			if errs[i] = s.moveSlots(ctx, s.byID[b.from], s.byID[b.to], b.slots, masters); errs[i] != nil {
				cancel(errs[i])
			}
		})
	}
	wg.Wait()
	var done []batch
	for i, b := range wave {
		if errs[i] == nil {
			done = append(done, b)
		}
	}
	// The cause is the first failure, or the caller's cancellation: not
	// the cancellations that the first failure caused.
	return done, context.Cause(ctx)
}

// moveSlots moves slots from src to dst with their keys, the way Redis
// Cluster specifies: dst IMPORTING, src MIGRATING, MIGRATE every key, then
// SETSLOT NODE on dst, src and every other of masters, for the slots whose
// keys moved, in groups (see handOverAfter). Each step checks what is done
// already, so it also finishes a move that a crash interrupted. Every step
// is one pipeline for its slots, not a round trip per slot.
func (s *session) moveSlots(ctx context.Context, src, dst *node, slots []int, masters []*node) error {
	if err := src.load(ctx); err != nil {
		return err
	}
	if err := dst.load(ctx); err != nil {
		return err
	}
	srcOwns, dstOwns := set(src.self.Slots), set(dst.self.Slots)
	var importing, migrating []any
	for _, slot := range slots {
		if !dstOwns[slot] && dst.self.Importing[slot] != src.self.ID {
			importing = append(importing, slot)
		}
		if srcOwns[slot] && src.self.Migrating[slot] != dst.self.ID {
			migrating = append(migrating, slot)
		}
	}
	if err := pipeline(ctx, dst, importing, func(p redis.Pipeliner, slot any) {
		p.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", src.self.ID)
	}, "already the owner"); err != nil {
		return fmt.Errorf("opening slots for import on %s: %w", dst.name, err)
	}
	if err := pipeline(ctx, src, migrating, func(p redis.Pipeliner, slot any) {
		p.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dst.self.ID)
	}, ""); err != nil {
		return fmt.Errorf("opening slots for migration on %s: %w", src.name, err)
	}
	return s.migrateKeys(ctx, src, dst, slots, masters)
}

// handOver gives slots to dst with SETSLOT NODE: on dst first, so that it
// serves them before src redirects there, then on src, then on every other
// master at once, since src's next window waits for them.
func handOver(ctx context.Context, src, dst *node, slots []int, masters []*node) error {
	all := make([]any, len(slots))
	for i, slot := range slots {
		all[i] = slot
	}
	setNode := func(p redis.Pipeliner, slot any) { p.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dst.self.ID) }
	if err := pipeline(ctx, dst, all, setNode, ""); err != nil {
		return fmt.Errorf("assigning slots to %s: %w", dst.name, err)
	}
	// src stays a master, even without slots: every node runs with
	// ReplicaMigration off (disableReplicaMigration).
	if err := pipeline(ctx, src, all, setNode, ""); err != nil {
		return fmt.Errorf("handing slots over from %s to %s: %w", src.name, dst.name, err)
	}
	var wg sync.WaitGroup
	for _, n := range masters {
		if n != src && n != dst {
			// Best effort: gossip spreads the new owner to anyone missed.
			wg.Go(func() { _ = pipeline(ctx, n, all, setNode, "") })
		}
	}
	wg.Wait()
	return nil
}

// migrateKeys moves every key of slots from src to dst in windows that
// src's pacer sizes, src resting between them (src.restUntil), and hands
// the slots whose keys moved over to dst (handOver) in groups, as
// handOverAfter says. The keys stream through: the Admin lists at most a
// window's keys per slot, MIGRATEs them and lists again, so it never holds
// more than migrateWindow × KeysPerMigrate key names, however many keys
// the slots have. REPLACE is right: while a slot migrates, clients read a key from
// src as long as src has it, so src's copy is the current one. A
// MIGRATING slot only loses keys on src (new keys go to dst), so a slot
// that listed fewer keys than asked for is empty once they moved; one
// that listed as many goes round again. Until it is handed over, src
// answers every read of a key that moved with ASK, which clients follow
// with a round trip more (go-redis's pipelines after a pause), so slots
// do not wait for the batch's last.
func (s *session) migrateKeys(ctx context.Context, src, dst *node, slots []int, masters []*node) error {
	if src.pace == nil {
		src.pace = newPacer(s.a.opts.MigrateBudget, s.a.opts.MigrateRest, s.a.opts.KeysPerMigrate)
		src.bytesPerKey = datasetBytesPerKey(ctx, src)
	}
	pending := slots
	var emptied []int
	var emptiedSince time.Time
	for len(pending) > 0 {
		if err := sleep(ctx, time.Until(src.restUntil)); err != nil {
			return err
		}
		w := src.pace.next()
		win := pending[:min(w.slots, len(pending))]
		keys, err := s.listKeys(ctx, src, win, w.keys)
		if err != nil {
			return err
		}
		held := 0
		for _, k := range keys {
			held += len(k)
		}
		s.a.keysHeld(held)
		start := time.Now()
		err = s.migrateListed(ctx, src, dst, win, keys)
		src.restUntil = time.Now().Add(src.pace.took(time.Since(start)))
		s.a.keysHeld(-held)
		if err != nil {
			return err
		}
		s.migration.addKeys(src, held)
		var again []int
		for i, slot := range win {
			if len(keys[i]) >= w.keys {
				again = append(again, slot)
				continue
			}
			if len(emptied) == 0 {
				emptiedSince = time.Now()
			}
			emptied = append(emptied, slot)
		}
		pending = append(again, pending[len(win):]...)
		if len(emptied) == 0 || (len(pending) > 0 && time.Since(emptiedSince) < handOverAfter) {
			continue
		}
		// During src's rest: src is idle then.
		if err := handOver(ctx, src, dst, emptied, masters); err != nil {
			return err
		}
		emptied = nil
	}
	return nil
}

// sleep waits for d or until ctx ends. Since Go 1.23 an unfired
// time.After is collected, so it leaks nothing when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// listKeys returns up to n keys of each slot on src.
func (s *session) listKeys(ctx context.Context, src *node, slots []int, n int) ([][]string, error) {
	p := src.client.Pipeline()
	lists := make([]*redis.StringSliceCmd, len(slots))
	for i, slot := range slots {
		lists[i] = p.ClusterGetKeysInSlot(ctx, slot, n)
	}
	if _, err := p.Exec(ctx); err != nil {
		return nil, fmt.Errorf("listing keys of %d slots on %s: %w", len(slots), src.name, err)
	}
	out := make([][]string, len(slots))
	for i, l := range lists {
		out[i] = l.Val()
	}
	return out, nil
}

// migrateListed sends one MIGRATE per slot that listed keys, in one
// pipeline on src's migration connection, and runs the afterMigrate hook
// after each reply.
func (s *session) migrateListed(ctx context.Context, src, dst *node, slots []int, keys [][]string) error {
	port, err := migratePort(ctx, src, dst)
	if err != nil {
		return err
	}
	p := src.migrator.Pipeline()
	cmds := make([]*redis.Cmd, len(slots))
	for i := range slots {
		if len(keys[i]) > 0 {
			cmds[i] = p.Do(ctx, s.migrateArgs(dst, port, keys[i])...)
		}
	}
	if p.Len() == 0 {
		return nil
	}
	// Each reply carries its own error, read below.
	_, _ = p.Exec(ctx)
	for i, slot := range slots {
		if cmds[i] == nil {
			continue
		}
		if err := cmds[i].Err(); err != nil && !isErr(err, "NOKEY") {
			return fmt.Errorf("migrating %d keys of slot %d from %s to %s: %w", len(keys[i]), slot, src.name, dst.name, err)
		}
		if err := s.afterMigrate(slot); err != nil {
			return err
		}
	}
	return nil
}

// migratePort is the port of dst that MIGRATE from src reaches. A node
// with tls-cluster speaks TLS to MIGRATE's target, so it needs dst's TLS
// port: the client port with spec.tls, another one when only the bus and
// replication speak TLS. The host stays the resolved one whatever dst
// reports.
func migratePort(ctx context.Context, src, dst *node) (string, error) {
	srcTLS, err := src.tlsConfig(ctx)
	if err != nil {
		return "", err
	}
	if !srcTLS.cluster {
		return dst.port(), nil
	}
	dstTLS, err := dst.tlsConfig(ctx)
	if err != nil {
		return "", err
	}
	if dstTLS.port == "" {
		return "", fmt.Errorf("%s speaks TLS to %s, which has no tls-port", src.name, dst.name)
	}
	return dstTLS.port, nil
}

// nodeTLS is what a node's configuration says of TLS between nodes.
type nodeTLS struct {
	// cluster is tls-cluster: the node speaks TLS on the bus and to
	// MIGRATE's target.
	cluster bool
	// port is tls-port, empty when the node has none.
	port string
}

// tlsConfig reads the node's TLS settings once per session: every MIGRATE
// window needs them, and they change only with a restart.
func (n *node) tlsConfig(ctx context.Context) (nodeTLS, error) {
	n.tlsOnce.Do(func() {
		got, err := n.client.Do(ctx, "CONFIG", "GET", "tls-cluster", "tls-port").StringSlice()
		if err != nil {
			n.tlsErr = fmt.Errorf("CONFIG GET tls-cluster tls-port on %s: %w", n.name, err)
			return
		}
		for i := 0; i+1 < len(got); i += 2 {
			switch got[i] {
			case "tls-cluster":
				n.tls.cluster = got[i+1] == "yes"
			case "tls-port":
				if port, err := strconv.ParseUint(got[i+1], 10, 16); err == nil && port != 0 {
					n.tls.port = strconv.FormatUint(port, 10)
				}
			}
		}
	})
	return n.tls, n.tlsErr
}

// migrateArgs is MIGRATE of keys to dst's port.
func (s *session) migrateArgs(dst *node, port string, keys []string) []any {
	args := make([]any, 0, 10+len(keys))
	args = append(args, "MIGRATE", dst.host(), port, "", 0,
		strconv.FormatInt(s.a.opts.MigrateTimeout.Milliseconds(), 10), "REPLACE")
	switch {
	case s.a.opts.Username != "":
		// The source node logs in to the destination as the Admin.
		args = append(args, "AUTH2", s.a.opts.Username, s.a.opts.Password)
	case s.a.opts.Password != "":
		args = append(args, "AUTH", s.a.opts.Password)
	}
	args = append(args, "KEYS")
	for _, k := range keys {
		args = append(args, k)
	}
	return args
}

// afterMigrate runs the Admin's afterMigrate hook, one call at a time:
// batches of a wave migrate in parallel.
func (s *session) afterMigrate(slot int) error {
	if s.a.afterMigrate == nil {
		return nil
	}
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return s.a.afterMigrate(slot)
}
