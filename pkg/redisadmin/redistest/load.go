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
	stop   chan struct{}
	done   chan struct{}

	mu     sync.Mutex
	acked  int
	errors map[string]int
	wrong  []string
}

// StartLoad starts writing keys <prefix>:<i> through c.
func StartLoad(c redis.UniversalClient, prefix string) *Load {
	l := &Load{c: c, prefix: prefix, stop: make(chan struct{}), done: make(chan struct{}), errors: map[string]int{}}
	go l.run()
	return l
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
		if err := l.c.Set(ctx, l.key(i), l.value(i), 0).Err(); err != nil {
			l.failed(err)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		l.mu.Lock()
		l.acked = i + 1
		l.mu.Unlock()
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
