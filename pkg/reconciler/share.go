package reconciler

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// shareRetry is how soon a reconcile turned away by a NamespaceShare is
// tried again when the share cannot wake it (its Source was never
// started): by then one of its namespace's reconciles has usually finished.
const shareRetry = time.Second

// NamespaceShare bounds how many reconciles of one namespace a controller
// runs at once. Each namespace is a tenant: its objects decide how long
// their reconciles take (a RedisCluster's nodes may answer slowly, or
// not at all), and without a bound one tenant's slow objects could hold
// every worker while the others' wait. A reconcile over the bound is put
// back without running, which frees its worker at once, and waits in its
// namespace's line: the namespace's next reconcile to end puts the first
// in line back into the controller's queue. So a burst of one tenant's
// objects runs at the bound without delay, and no reconcile is tried
// again before there is room for it.
type NamespaceShare struct {
	limit int

	mu      sync.Mutex
	running map[string]int
	// waiting is each namespace's line of requests turned away, first
	// come first; inLine says which requests are in a line, so that a
	// request waits at most once however often it is turned away.
	waiting map[string][]reconcile.Request
	inLine  map[reconcile.Request]bool
	// queue is the controller's, once Source has started; until then a
	// request turned away is tried again after shareRetry.
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// NewNamespaceShare returns a share that lets each namespace run at most
// limit reconciles at once; limit below 1 counts as 1.
func NewNamespaceShare(limit int) *NamespaceShare {
	return &NamespaceShare{
		limit:   max(limit, 1),
		running: map[string]int{},
		waiting: map[string][]reconcile.Request{},
		inLine:  map[reconcile.Request]bool{},
	}
}

// Source is the watch through which the share puts waiting requests back
// into the controller's queue: the controller that reconciles with the
// share must watch it (WatchesRawSource).
func (s *NamespaceShare) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.queue = q
		return nil
	})
}

// Enter starts a reconcile of req when its namespace's share allows one
// more: ok is true, and leave must be called when the reconcile ends.
// Otherwise retry is zero when req now waits in its namespace's line, to
// be put back into the queue when there is room, or how long to wait
// before trying again when the share cannot do that.
func (s *NamespaceShare) Enter(req reconcile.Request) (leave func(), retry time.Duration, ok bool) {
	ns := req.Namespace
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[ns] >= s.limit {
		if s.queue == nil {
			return nil, shareRetry, false
		}
		if !s.inLine[req] {
			s.inLine[req] = true
			s.waiting[ns] = append(s.waiting[ns], req)
		}
		return nil, 0, false
	}
	s.running[ns]++
	// A request in line that got in by another way (an event of its own)
	// no longer waits; its stale place in the line is skipped.
	delete(s.inLine, req)
	return func() { s.leave(ns) }, 0, true
}

// leave ends a reconcile of ns and puts the first request in ns's line
// back into the queue.
func (s *NamespaceShare) leave(ns string) {
	s.mu.Lock()
	if s.running[ns]--; s.running[ns] == 0 {
		delete(s.running, ns)
	}
	var next reconcile.Request
	found := false
	line := s.waiting[ns]
	for len(line) > 0 && !found {
		next, line = line[0], line[1:]
		found = s.inLine[next]
		delete(s.inLine, next)
	}
	if len(line) == 0 {
		delete(s.waiting, ns)
	} else {
		s.waiting[ns] = line
	}
	queue := s.queue
	s.mu.Unlock()
	if found {
		queue.Add(next)
	}
}

// Waiting is how many requests of ns wait in line.
func (s *NamespaceShare) Waiting(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, req := range s.waiting[ns] {
		if s.inLine[req] {
			n++
		}
	}
	return n
}

// PerNamespaceShare is the default of Options.PerNamespace: a quarter of a
// controller's workers, at least one, so that four tenants at their bound
// still leave workers to the others only when there are more workers than
// that; a lone busy tenant keeps most of them.
func PerNamespaceShare(workers int) int { return max(workers/4, 1) }
