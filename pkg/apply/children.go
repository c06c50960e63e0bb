package apply

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	waitutil "k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createdMemory is how long Children trusts that a child it created exists
// although the cache does not show it yet. The cache catches up within
// milliseconds; past this, the child is looked up as any other.
const createdMemory = time.Minute

// cacheWait bounds how long after its create a reconcile waits for the
// cache to show a child it created. The watch delivers a create within
// milliseconds; a read past the cache costs a request, and a token of the
// client-side limit that a write could have had.
const cacheWait = 250 * time.Millisecond

// cachePoll is how often the cache is looked at meanwhile: a read of the
// cache is a map lookup, and the watch's delay is a few milliseconds.
const cachePoll = 5 * time.Millisecond

// Children applies a controller's children as Apply does, and remembers the
// ones it created until the cache shows them. A reconcile that runs in
// between, as the first report of a child created last reconciles the
// owner again at once, would otherwise find the child missing from the
// cache and create it again, only to be refused with AlreadyExists: a
// wasted write. Children waits for the cache to show such a child, until
// cacheWait after its create at most (a third of new Memcacheds' second
// reconciles came before their Service's create reached the cache), and
// only then reads it from the API server. The zero value is ready to use;
// a controller keeps one.
type Children struct {
	mu      sync.Mutex
	created map[string]time.Time
}

// Apply is Apply with the memory of recent creates.
func (ch *Children) Apply(ctx context.Context, c client.Client, owner, desired client.Object) (Result, error) {
	result, _, err := ch.ApplyWithPrevious(ctx, c, owner, desired)
	return result, err
}

// ApplyWithPrevious is Apply, and when it updated the child, it also
// returns the child as it was before, such as to tell a scale in an event.
func (ch *Children) ApplyWithPrevious(ctx context.Context, c client.Client, owner, desired client.Object) (Result, client.Object, error) {
	key := childKey(desired)
	var existing client.Object
	if createdAt, ok := ch.recentlyCreated(key); ok {
		cached, err := awaitCached(ctx, c, desired, createdAt.Add(cacheWait))
		if apierrors.IsNotFound(err) {
			live, err := getLive(ctx, c, desired)
			if err == nil {
				return apply(ctx, c, owner, desired, live)
			}
			if !apierrors.IsNotFound(err) {
				return Unchanged, nil, fmt.Errorf("reading %s: %w", describe(c, desired), err)
			}
		}
		// The cache has caught up (what it has is compared, not read
		// again), or the child was deleted since (it is created again), or
		// the cache failed (apply reads it again and reports why).
		ch.forget(key)
		if err == nil {
			existing = cached
		}
	}
	result, previous, err := apply(ctx, c, owner, desired, existing)
	if result == Created {
		ch.remember(key)
	}
	return result, previous, err
}

// awaitCached reads the child like desired from the cache, until deadline
// at most while the cache does not have it. The deadline is counted from
// the create, so a child that was deleted since, or that the cache cannot
// see (its labels removed), costs a wait only in the moments after its
// create, and is NotFound after that.
func awaitCached(ctx context.Context, c client.Client, desired client.Object, deadline time.Time) (client.Object, error) {
	cached, err := getCached(ctx, c, desired)
	wait := time.Until(deadline)
	if !apierrors.IsNotFound(err) || wait <= 0 {
		return cached, err
	}
	// The poll's own error is the timeout or ctx's end; err says what the
	// cache said last, and a read past it then reports ctx's end.
	_ = waitutil.PollUntilContextTimeout(ctx, cachePoll, wait, false, func(ctx context.Context) (bool, error) {
		cached, err = getCached(ctx, c, desired)
		return !apierrors.IsNotFound(err), nil
	})
	return cached, err
}

// recentlyCreated reports whether this Children created the child under
// key within createdMemory, and when.
func (ch *Children) recentlyCreated(key string) (time.Time, bool) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	at, ok := ch.created[key]
	if ok && time.Since(at) > createdMemory {
		delete(ch.created, key)
		return time.Time{}, false
	}
	return at, ok
}

func (ch *Children) remember(key string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.created == nil {
		ch.created = map[string]time.Time{}
	}
	now := time.Now()
	// Drop what was never looked at again, such as the children of an
	// owner deleted right after its creation, so the map stays small.
	for k, at := range ch.created {
		if now.Sub(at) > createdMemory {
			delete(ch.created, k)
		}
	}
	ch.created[key] = now
}

func (ch *Children) forget(key string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	delete(ch.created, key)
}

func childKey(obj client.Object) string {
	return fmt.Sprintf("%T %s", obj, client.ObjectKeyFromObject(obj))
}
