package apply

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createdMemory is how long Children trusts that a child it created exists
// although the cache does not show it yet. The cache catches up within
// milliseconds; past this, the child is looked up as any other.
const createdMemory = time.Minute

// Children applies a controller's children as Apply does, and remembers the
// ones it created until the cache shows them. A reconcile that runs in
// between, as the create of a first child triggers one while the same
// reconcile still creates the second, would otherwise find the second
// missing from the cache and create it again, only to be refused with
// AlreadyExists: a wasted write. Children reads such a child from the API
// server instead. The zero value is ready to use; a controller keeps one.
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
	if ch.recentlyCreated(key) {
		cached, err := getCached(ctx, c, desired)
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

func (ch *Children) recentlyCreated(key string) bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	at, ok := ch.created[key]
	if ok && time.Since(at) > createdMemory {
		delete(ch.created, key)
		return false
	}
	return ok
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
