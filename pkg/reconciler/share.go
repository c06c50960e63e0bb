package reconciler

import (
	"sync"
	"time"
)

// shareRetry is how soon a reconcile turned away by a NamespaceShare is
// tried again: by then one of its namespace's reconciles has usually
// finished.
const shareRetry = time.Second

// NamespaceShare bounds how many reconciles of one namespace a controller
// runs at once. Each namespace is a tenant: its objects decide how long
// their reconciles take (a RedisCluster's nodes may answer slowly, or
// not at all), and without a bound one tenant's slow objects could hold
// every worker while the others' wait. A reconcile over the bound is put
// back without running, which frees its worker at once.
type NamespaceShare struct {
	limit   int
	mu      sync.Mutex
	running map[string]int
}

// NewNamespaceShare returns a share that lets each namespace run at most
// limit reconciles at once; limit below 1 counts as 1.
func NewNamespaceShare(limit int) *NamespaceShare {
	return &NamespaceShare{limit: max(limit, 1), running: map[string]int{}}
}

// Enter starts a reconcile of namespace when its share allows one more:
// ok is true, and leave must be called when the reconcile ends.
func (s *NamespaceShare) Enter(namespace string) (leave func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[namespace] >= s.limit {
		return nil, false
	}
	s.running[namespace]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.running[namespace]--; s.running[namespace] == 0 {
			delete(s.running, namespace)
		}
	}, true
}

// PerNamespaceShare is the default of Options.PerNamespace: a quarter of a
// controller's workers, at least one, so that four tenants at their bound
// still leave workers to the others only when there are more workers than
// that; a lone busy tenant keeps most of them.
func PerNamespaceShare(workers int) int { return max(workers/4, 1) }
