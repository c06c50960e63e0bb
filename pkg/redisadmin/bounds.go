package redisadmin

import (
	"context"
	"sync"
)

// connectParallelism is how many nodes of a cluster are reached at once. A
// node that accepts connections but never answers holds its slot for a
// whole read timeout; reaching the nodes together costs one such timeout
// instead of one per node, and the bound keeps a large cluster from
// opening all its connections at the same moment.
const connectParallelism = 16

// eachParallel calls f(i) for every i below n, at most limit at once, and
// returns when every call has.
func eachParallel(n, limit int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// runContext bounds one run by Options.RunTimeout on top of ctx's own
// deadline: a node that answers every command just before its read timeout
// would otherwise hold the caller for as many timeouts as the run sends
// commands.
func (a *Admin) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if a.opts.RunTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, a.opts.RunTimeout)
}
