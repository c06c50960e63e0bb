package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Keyspace is N keys <Prefix>:<i>, each holding a value of Size bytes
// derived from i, so that a reader can tell a right value from a wrong one
// without keeping them.
type Keyspace struct {
	// Prefix starts every key.
	Prefix string
	// N is how many keys there are.
	N int
	// Size is the length of every value, in bytes; at least the length of
	// "value-<i>-".
	Size int
}

// fillBatch is how many SETs one pipeline of Fill carries, and
// fillWorkers how many pipelines are in flight: enough to keep every node
// busy without queueing much on any.
const (
	fillBatch   = 1000
	fillWorkers = 4
)

// Key is the name of key i.
func (k Keyspace) Key(i int) string { return k.Prefix + ":" + strconv.Itoa(i) }

// Value is what key i holds.
func (k Keyspace) Value(i int) string {
	v := "value-" + strconv.Itoa(i) + "-"
	if pad := k.Size - len(v); pad > 0 {
		v += strings.Repeat("x", pad)
	}
	return v
}

// Fill writes every key through c, in pipelines of fillBatch keys, several
// at once.
func (k Keyspace) Fill(ctx context.Context, c *redis.ClusterClient) error {
	// The first failure stops the feeding, and the other workers with it.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	starts := make(chan int)
	var wg sync.WaitGroup
	for range fillWorkers {
		wg.Go(func() {
			for start := range starts {
				if err := k.fillFrom(ctx, c, start); err != nil {
					cancel(err)
				}
			}
		})
	}
	for start := 0; start < k.N && ctx.Err() == nil; start += fillBatch {
		select {
		case starts <- start:
		case <-ctx.Done():
		}
	}
	close(starts)
	wg.Wait()
	return context.Cause(ctx)
}

func (k Keyspace) fillFrom(ctx context.Context, c *redis.ClusterClient, start int) error {
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := start; i < min(start+fillBatch, k.N); i++ {
			p.Set(ctx, k.Key(i), k.Value(i), 0)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing keys %d-%d: %w", start, min(start+fillBatch, k.N)-1, err)
	}
	return nil
}

// Sweep reads every key through c in pipelines and returns the keys that
// are missing or hold another value, at most limit of them, and how many
// there are. A read that fails (rather than finding no key) is an error:
// the caller cannot tell whether the key is there.
func (k Keyspace) Sweep(ctx context.Context, c *redis.ClusterClient, limit int) ([]string, int, error) {
	var bad []string
	count := 0
	for start := 0; start < k.N; start += fillBatch {
		end := min(start+fillBatch, k.N)
		cmds := make([]*redis.StringCmd, 0, end-start)
		// Each command carries its own error, read below.
		_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < end; i++ {
				cmds = append(cmds, p.Get(ctx, k.Key(i)))
			}
			return nil
		})
		for n, cmd := range cmds {
			got, err := cmd.Result()
			switch {
			case err != nil && !errors.Is(err, redis.Nil):
				return bad, count, fmt.Errorf("reading %s: %w", k.Key(start+n), err)
			case got == k.Value(start+n):
				continue
			}
			if count++; len(bad) < limit {
				bad = append(bad, k.Key(start+n))
			}
		}
	}
	return bad, count, nil
}
