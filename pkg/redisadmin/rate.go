package redisadmin

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"
)

// Migration is what a run's moves of slots with their keys amounted to:
// enough to tell how fast this cluster migrates, and so how long a
// future scale will take.
type Migration struct {
	// Slots is how many slots moved with their keys.
	Slots int
	// Keys is how many keys those slots held.
	Keys int64
	// Bytes estimates the memory those keys took: each key counts its
	// source's dataset memory per key (INFO memory), since MIGRATE does not
	// tell the size it sent.
	Bytes int64
	// Duration is the wall time the moves took, waves of parallel moves
	// counted once.
	Duration time.Duration
}

// migrationTally sums a run's moves. The goroutines of a wave add keys
// and bytes together; slots and time are added by the one goroutine that
// runs the waves.
type migrationTally struct {
	keys, bytes atomic.Int64
	slots       int
	took        time.Duration
}

// addKeys records n keys moved from src.
func (t *migrationTally) addKeys(src *node, n int) {
	t.keys.Add(int64(n))
	t.bytes.Add(int64(float64(n) * src.bytesPerKey))
}

// timed runs move, which moves slots, and adds its wall time and, when it
// succeeds or moves some, the slots it reports.
func (t *migrationTally) timed(move func() (slots int, err error)) error {
	start := time.Now()
	slots, err := move()
	t.took += time.Since(start)
	t.slots += slots
	return err
}

// result is the tally as a Migration.
func (t *migrationTally) result() Migration {
	return Migration{Slots: t.slots, Keys: t.keys.Load(), Bytes: t.bytes.Load(), Duration: t.took}
}

// datasetBytesPerKey is n's dataset memory per key, from INFO memory and
// keyspace; 0 when the node has no key or does not say. It is an estimate
// for reporting, so a failure to read it leaves the migration alone.
func datasetBytesPerKey(ctx context.Context, n *node) float64 {
	text, err := n.client.Info(ctx, "memory", "keyspace").Result()
	if err != nil {
		return 0
	}
	keys, err := keysInKeyspace(text)
	if err != nil || keys == 0 {
		return 0
	}
	dataset, err := strconv.ParseInt(parseInfo(text)["used_memory_dataset"], 10, 64)
	if err != nil || dataset <= 0 {
		return 0
	}
	return float64(dataset) / float64(keys)
}
