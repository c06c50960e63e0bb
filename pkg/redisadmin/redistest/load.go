package redistest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// Load is a client that keeps writing and reading keys, as an application
// would, while a test changes the cluster under it. A failed write is
// retried until it is acknowledged; every acknowledged write must be
// readable afterwards.
type Load struct {
	c      redis.UniversalClient
	prefix string
	// replicated, when set, counts a write as acknowledged only once a
	// replica has it too (WAIT 1): what a failover of a killed master
	// cannot lose.
	replicated *redis.ClusterClient
	stop       chan struct{}
	done       chan struct{}

	mu     sync.Mutex
	acked  int
	errors map[string]int
	wrong  []string
	// failingSince is when writes began to fail, zero while they succeed.
	failingSince time.Time
	// longest is the longest time writes kept failing.
	longest time.Duration
	// unreplicated counts writes made again because no replica had them.
	unreplicated int
}

// StartLoad starts writing keys <prefix>:<i> through c.
func StartLoad(c redis.UniversalClient, prefix string) *Load {
	return start(&Load{c: c, prefix: prefix})
}

// StartReplicatedLoad is StartLoad for a cluster with replicas: a write is
// acknowledged once its master's replica has it too, so that killing the
// master may not lose it.
func StartReplicatedLoad(c *redis.ClusterClient, prefix string) *Load {
	return start(&Load{c: c, prefix: prefix, replicated: c})
}

func start(l *Load) *Load {
	l.stop, l.done, l.errors = make(chan struct{}), make(chan struct{}), map[string]int{}
	go l.run()
	return l
}

// write writes key i. It returns an error when the write failed, and
// false when it succeeded but no replica has it yet: the write is then
// made again, without counting as an outage.
func (l *Load) write(ctx context.Context, i int) (bool, error) {
	if l.replicated == nil {
		return true, l.c.Set(ctx, l.key(i), l.value(i), 0).Err()
	}
	master, err := l.replicated.MasterForKey(ctx, l.key(i))
	if err != nil {
		return false, err
	}
	if err := master.Set(ctx, l.key(i), l.value(i), 0).Err(); err != nil {
		l.replicated.ReloadState(ctx) // MOVED: the slot has a new master
		return false, err
	}
	n, err := master.Wait(ctx, 1, 500*time.Millisecond).Result()
	return err == nil && n >= 1, nil
}

func (l *Load) key(i int) string   { return fmt.Sprintf("%s:%d", l.prefix, i) }
func (l *Load) value(i int) string { return fmt.Sprintf("value-%d", i) }

func (l *Load) run() {
	defer close(l.done)
	ctx := context.Background()
	for i := 0; ; {
		select {
		case <-l.stop:
			return
		default:
		}
		replicated, err := l.write(ctx, i)
		l.mu.Lock()
		switch {
		case err != nil:
			l.errors[err.Error()]++
			if l.failingSince.IsZero() {
				l.failingSince = time.Now()
			}
		case !l.failingSince.IsZero():
			l.longest = max(l.longest, time.Since(l.failingSince))
			l.failingSince = time.Time{}
		}
		if replicated {
			l.acked = i + 1
		} else if err == nil {
			l.unreplicated++
		}
		l.mu.Unlock()
		if !replicated {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		// Read back an earlier write, as clients read while the cluster changes.
		j := rand.IntN(i + 1)
		switch got, err := l.c.Get(ctx, l.key(j)).Result(); {
		case err != nil && !errors.Is(err, redis.Nil):
			l.failed(err)
		case got != l.value(j):
			l.mu.Lock()
			l.wrong = append(l.wrong, fmt.Sprintf("%s = %q", l.key(j), got))
			l.mu.Unlock()
		}
		i++
	}
}

func (l *Load) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors[err.Error()]++
}

// Stop stops the load and returns how many writes were acknowledged.
func (l *Load) Stop() int {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked
}

// Outage returns the longest time in which every write failed since the
// last call, for a report per step.
func (l *Load) Outage() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	longest := l.longestLocked()
	if !l.failingSince.IsZero() {
		l.failingSince = time.Now() // still failing: the next period counts from now
	}
	l.longest = 0
	return longest
}

// LongestOutage is the longest time in which every write failed.
func (l *Load) LongestOutage() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.longestLocked()
}

// longestLocked is the longest outage so far, counting one that lasts.
func (l *Load) longestLocked() time.Duration {
	if l.failingSince.IsZero() {
		return l.longest
	}
	return max(l.longest, time.Since(l.failingSince))
}

// Unreplicated is how many writes succeeded on a master whose replica
// did not confirm them, and were made again.
func (l *Load) Unreplicated() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unreplicated
}

// Errors returns each error the load saw, with how often.
func (l *Load) Errors() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.errors))
	for k, v := range l.errors {
		out[k] = v
	}
	return out
}

// ExpectNoLoss stops the load and expects every acknowledged write, read
// through c, to hold its value, and no read to have seen a wrong value.
func (l *Load) ExpectNoLoss(g gomega.Gomega, c redis.UniversalClient) int {
	acked := l.Stop()
	g.Expect(acked).To(gomega.BeNumerically(">", 0), "the load wrote nothing")
	ctx := context.Background()
	var lost []string
	for i := range acked {
		if got, err := c.Get(ctx, l.key(i)).Result(); err != nil || got != l.value(i) {
			lost = append(lost, fmt.Sprintf("%s: %q %v", l.key(i), got, err))
		}
	}
	g.Expect(lost).To(gomega.BeEmpty(), "acknowledged writes lost")
	l.mu.Lock()
	defer l.mu.Unlock()
	g.Expect(l.wrong).To(gomega.BeEmpty(), "reads saw wrong values")
	return acked
}
