package redistest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// readerBatch is how many keys one read of the Reader carries: half of
// them random, half the next ones of its sweep. A pipeline covers more
// keys per second than single GETs for the same CPU, and the cluster
// client follows MOVED and ASK for each command of it.
const readerBatch = 16

// retryPause is how long the Reader waits before it reads a key again
// that it could not read: it measures how long the key stays unavailable
// to within about this much.
const retryPause = time.Millisecond

// Reader reads the keys of a Keyspace all the time through a cluster
// client, as an application does while the cluster reshards: random keys,
// and a sweep that goes over every key in turn. A key that reads as
// missing or with another value is a failure; a key whose read fails (a
// redirection the client could not follow, a closed connection) is read
// again until it succeeds, and the time in between is how long that key
// was unavailable.
type Reader struct {
	c    *redis.ClusterClient
	ks   Keyspace
	rate int
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	stats ReaderStats
	// latencies are how long the pipelines that succeeded at once took,
	// and latency their sum.
	latencies []time.Duration
	latency   time.Duration
}

// ReaderStats is what a Reader saw.
type ReaderStats struct {
	// Reads counts the keys read, retries included.
	Reads int
	// Missing counts the reads that found no key, and Wrong those that
	// found another value: both are failures.
	Missing, Wrong int
	// Failed lists some of the missing or wrong keys.
	Failed []string
	// Errors counts the read errors by message.
	Errors map[string]int
	// MaxUnavailable is the longest time one key could not be read.
	MaxUnavailable time.Duration
	// MaxLatency is the longest a read of a pipeline took that succeeded
	// at once, MeanLatency their mean, and P50Latency and P99Latency the
	// times that half of them and 99% of them took at most: a node busy
	// with MIGRATEs answers nobody else meanwhile.
	MaxLatency, MeanLatency, P50Latency, P99Latency time.Duration
}

// maxFailed bounds ReaderStats.Failed.
const maxFailed = 20

// StartReader starts reading ks through c, about rate keys a second (no
// bound when rate <= 0).
func StartReader(c *redis.ClusterClient, ks Keyspace, rate int) *Reader {
	r := &Reader{c: c, ks: ks, rate: rate, stop: make(chan struct{}), done: make(chan struct{}),
		stats: ReaderStats{Errors: map[string]int{}}}
	go r.run()
	return r
}

// Stop stops reading and returns what the Reader saw. It may be called
// more than once, from one goroutine.
func (r *Reader) Stop() ReaderStats {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
	return r.Stats()
}

// Stats returns what the Reader saw so far.
func (r *Reader) Stats() ReaderStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.stats
	out.Errors = make(map[string]int, len(r.stats.Errors))
	for k, v := range r.stats.Errors {
		out.Errors[k] = v
	}
	out.Failed = append([]string(nil), r.stats.Failed...)
	if len(r.latencies) > 0 {
		sorted := slices.Clone(r.latencies)
		slices.Sort(sorted)
		out.P50Latency = quantile(sorted, 0.50)
		out.P99Latency = quantile(sorted, 0.99)
	}
	return out
}

// quantile is the q-quantile of sorted, which is not empty: the smallest
// value that at least q of them do not exceed.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func (r *Reader) stopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

func (r *Reader) run() {
	defer close(r.done)
	ctx := context.Background()
	next := 0
	var pace time.Duration
	if r.rate > 0 {
		pace = time.Second * readerBatch / time.Duration(r.rate)
	}
	for start := time.Now(); !r.stopped(); {
		keys := make([]int, 0, readerBatch)
		for range readerBatch / 2 {
			keys = append(keys, rand.IntN(r.ks.N), next)
			if next++; next == r.ks.N {
				next = 0
			}
		}
		sent := time.Now()
		failed := r.readBatch(ctx, keys)
		if len(failed) == 0 {
			r.recordLatency(time.Since(sent))
		}
		for _, i := range failed {
			r.readUntilAvailable(ctx, i, sent)
		}
		if pace > 0 {
			start = start.Add(pace)
			time.Sleep(time.Until(start))
		}
	}
}

// recordLatency records the latency of a pipeline that succeeded at once.
func (r *Reader) recordLatency(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latencies = append(r.latencies, d)
	r.latency += d
	r.stats.MaxLatency = max(r.stats.MaxLatency, d)
	r.stats.MeanLatency = r.latency / time.Duration(len(r.latencies))
}

// readBatch reads keys in one pipeline, records what it found, and returns
// the keys whose read failed.
func (r *Reader) readBatch(ctx context.Context, keys []int) []int {
	cmds := make([]*redis.StringCmd, len(keys))
	// Each command carries its own error, read below.
	_, _ = r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n, i := range keys {
			cmds[n] = p.Get(ctx, r.ks.Key(i))
		}
		return nil
	})
	var failed []int
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, i := range keys {
		if !r.recordLocked(i, cmds[n]) {
			failed = append(failed, i)
		}
	}
	return failed
}

// readUntilAvailable reads key i, unavailable since its failed read was
// sent, until a read succeeds or the Reader is stopped, and records how
// long the key was unavailable.
func (r *Reader) readUntilAvailable(ctx context.Context, i int, since time.Time) {
	for {
		// The client reloads its slot map on MOVED, not on other errors:
		// a node that left the cluster answers CLUSTERDOWN for the slots
		// the map still gives it, until the map is ten seconds old. An
		// application does better by reloading it, and so does the Reader,
		// so that it measures the cluster rather than the client's lag.
		r.c.ReloadState(ctx)
		time.Sleep(retryPause)
		ok := r.record(i, r.c.Get(ctx, r.ks.Key(i)))
		if ok || r.stopped() {
			r.mu.Lock()
			r.stats.MaxUnavailable = max(r.stats.MaxUnavailable, time.Since(since))
			r.mu.Unlock()
			return
		}
	}
}

func (r *Reader) record(i int, cmd *redis.StringCmd) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recordLocked(i, cmd)
}

// recordLocked counts the read of key i and reports whether the key could
// be read: a missing or wrong key could, and is a failure.
func (r *Reader) recordLocked(i int, cmd *redis.StringCmd) bool {
	r.stats.Reads++
	got, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		r.stats.Missing++
	case err != nil:
		r.stats.Errors[err.Error()]++
		return false
	case got != r.ks.Value(i):
		r.stats.Wrong++
	default:
		return true
	}
	if len(r.stats.Failed) < maxFailed {
		r.stats.Failed = append(r.stats.Failed, r.ks.Key(i))
	}
	return true
}
