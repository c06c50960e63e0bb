package redistest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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
	// redirected holds a client per address a MOVED reply named, used
	// only by the load's goroutine.
	redirected map[string]*redis.Client
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
		// A failed write is not acknowledged: it is made again.
		err := l.c.Set(ctx, l.key(i), l.value(i), 0).Err()
		return err == nil, err
	}
	master, err := l.replicated.MasterForKey(ctx, l.key(i))
	if err != nil {
		return false, err
	}
	err = master.Set(ctx, l.key(i), l.value(i), 0).Err()
	if addr, moved := movedTo(err); moved {
		// The slot has a new master. Follow the redirect at once, as the
		// cluster client's own commands do, while its slot map reloads in
		// the background (which may first dial addresses of restarted pods
		// until its dial timeout).
		l.replicated.ReloadState(ctx)
		master = l.redirectedTo(addr)
		err = master.Set(ctx, l.key(i), l.value(i), 0).Err()
	}
	if err != nil {
		l.replicated.ReloadState(ctx)
		return false, err
	}
	n, err := master.Wait(ctx, 1, 500*time.Millisecond).Result()
	return err == nil && n >= 1, nil
}

// movedTo returns the address a MOVED reply names.
func movedTo(err error) (string, bool) {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return "", false
	}
	fields := strings.Fields(rerr.Error())
	if len(fields) != 3 || fields[0] != "MOVED" {
		return "", false
	}
	return fields[2], true
}

// redirectedTo returns a client of addr with the cluster client's
// credentials and timeouts.
func (l *Load) redirectedTo(addr string) *redis.Client {
	if c, ok := l.redirected[addr]; ok {
		return c
	}
	o := l.replicated.Options()
	c := redis.NewClient(&redis.Options{
		Addr: addr, Username: o.Username, Password: o.Password,
		DialTimeout: o.DialTimeout, DialerRetries: o.DialerRetries, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
	})
	if l.redirected == nil {
		l.redirected = map[string]*redis.Client{}
	}
	l.redirected[addr] = c
	return c
}

func (l *Load) key(i int) string   { return fmt.Sprintf("%s:%d", l.prefix, i) }
func (l *Load) value(i int) string { return fmt.Sprintf("value-%d", i) }

func (l *Load) run() {
	defer close(l.done)
	defer func() {
		for _, c := range l.redirected {
			_ = c.Close()
		}
	}()
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

// Stop stops the load and returns how many writes were acknowledged. It
// may be called more than once, from one goroutine.
func (l *Load) Stop() int {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
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

// readBackTimeout is how long ExpectNoLoss keeps retrying the reads of
// acknowledged keys that failed, refreshing the client's view of the
// slots between attempts: after a scale down or every pod replaced, a
// cluster client may still map slots to addresses that are gone (go-redis
// reloads its slot map on MOVED, not on a failed dial, and reloads it from
// the nodes it knows, which may all be gone).
const readBackTimeout = 60 * time.Second

// readBatch is how many keys one read-back pipeline carries, and
// readBatchTimeout how long it may take: a dial to an address that is gone
// may otherwise wait for the client's dial timeout on each of its retries.
const (
	readBatch        = 500
	readBatchTimeout = 10 * time.Second
)

// ExpectNoLoss stops the load and expects every acknowledged write, read
// through c, to hold its value, and no read to have seen a wrong value.
// A write is lost only when its key was read and is missing or holds
// another value; a read that fails (the node is gone, the client's slot
// map is stale) is retried until readBackTimeout (60s), and a key still
// unreadable then fails the test as such, not as a lost write.
func (l *Load) ExpectNoLoss(g gomega.Gomega, c redis.UniversalClient) int {
	return l.expectNoLoss(g, c, readBackTimeout)
}

func (l *Load) expectNoLoss(g gomega.Gomega, c redis.UniversalClient, timeout time.Duration) int {
	acked := l.Stop()
	g.Expect(acked).To(gomega.BeNumerically(">", 0), "the load wrote nothing")
	rb := l.readBack(context.Background(), c, acked, time.Now().Add(timeout))
	g.Expect(rb.lost).To(gomega.BeEmpty(), "acknowledged writes lost (%d more keys could not be read back)", rb.unread)
	g.Expect(rb.unread).To(gomega.BeZero(), "could not read back %d acknowledged keys within %s after %d attempts (read errors, not lost writes): %v",
		rb.unread, timeout, rb.attempts, rb.errors)
	l.mu.Lock()
	defer l.mu.Unlock()
	g.Expect(l.wrong).To(gomega.BeEmpty(), "reads saw wrong values")
	return acked
}

// readBackResult is what reading back the acknowledged keys found.
type readBackResult struct {
	// lost are the keys read and found missing or with another value.
	lost []string
	// unread is how many keys could not be read by the deadline.
	unread int
	// errors are the read errors of the last attempt, with how often.
	errors map[string]int
	// attempts is how many times reading was tried: 1 when every read
	// succeeded at once.
	attempts int
}

// readBack reads keys 0..acked-1 through c. Keys whose read failed are
// read again, through a new cluster client made from c's options and
// after a backoff, until they are read or the deadline passes.
func (l *Load) readBack(ctx context.Context, c redis.UniversalClient, acked int, deadline time.Time) readBackResult {
	var r readBackResult
	pending := make([]int, acked)
	for i := range pending {
		pending[i] = i
	}
	backoff := 100 * time.Millisecond
	reader := c
	for {
		r.attempts++
		r.errors = map[string]int{}
		pending = l.readPending(ctx, reader, pending, &r)
		if len(pending) == 0 {
			break
		}
		if !time.Now().Before(deadline) {
			r.unread = len(pending)
			break
		}
		if cc, ok := c.(*redis.ClusterClient); ok {
			// A fresh client from the same seed addresses: the old one may
			// know only nodes that are gone, and reloading its slot map
			// would dial each of them first.
			if reader != c {
				_ = reader.Close()
			}
			opts := *cc.Options()
			reader = redis.NewClusterClient(&opts)
		}
		time.Sleep(min(backoff, time.Until(deadline)))
		backoff = min(2*backoff, 2*time.Second)
	}
	if reader != c {
		_ = reader.Close()
	}
	return r
}

// readPending reads the pending keys in pipelines, recording the lost
// ones in r, and returns those still to read: the keys of the first
// pipeline in which a read failed, and every key after it. It stops
// there, because a node that is gone would fail every later pipeline
// too, each after the client's own retries.
func (l *Load) readPending(ctx context.Context, c redis.UniversalClient, pending []int, r *readBackResult) []int {
	for start := 0; start < len(pending); start += readBatch {
		batch := pending[start:min(start+readBatch, len(pending))]
		cmds := make([]*redis.StringCmd, len(batch))
		bctx, cancel := context.WithTimeout(ctx, readBatchTimeout)
		// Each command carries its own error, read below.
		_, _ = c.Pipelined(bctx, func(p redis.Pipeliner) error {
			for n, i := range batch {
				cmds[n] = p.Get(bctx, l.key(i))
			}
			return nil
		})
		cancel()
		var failed []int
		for n, i := range batch {
			switch got, err := cmds[n].Result(); {
			case errors.Is(err, redis.Nil):
				r.lost = append(r.lost, l.key(i)+": missing")
			case err != nil:
				failed = append(failed, i)
				r.errors[err.Error()]++
			case got != l.value(i):
				r.lost = append(r.lost, fmt.Sprintf("%s = %q, want %q", l.key(i), got, l.value(i)))
			}
		}
		if len(failed) > 0 {
			return append(failed, pending[start+len(batch):]...)
		}
	}
	return nil
}
