package status

import (
	"context"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StaleRetry is how soon a reconcile that read a stale object runs again:
// the cache catches up with the controller's own write within milliseconds.
const StaleRetry = 100 * time.Millisecond

// Writes remembers the resourceVersion each of a controller's status writes
// produced, so that a reconcile can tell when the cache still holds the
// object from before that write. Reconciling such an object would compute
// the status already written and send it again: a write that changes
// nothing. The zero value is ready to use; a controller keeps one.
type Writes struct {
	mu   sync.Mutex
	last map[types.NamespacedName]uint64
}

// Stale reports whether obj is older than the controller's last status write
// to it. Resource versions are compared as the etcd revisions they are; one
// that does not parse is never called stale.
func (w *Writes) Stale(obj client.Object) bool {
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return rv < w.last[client.ObjectKeyFromObject(obj)]
}

// Forget drops what is remembered of an object that is gone.
func (w *Writes) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}

func (w *Writes) record(obj client.Object) {
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[types.NamespacedName]uint64{}
	}
	w.last[client.ObjectKeyFromObject(obj)] = rv
}

// NewPatcher is status.NewPatcher whose writes are remembered.
func (w *Writes) NewPatcher(c client.Client, obj client.Object) *Patcher {
	p := NewPatcher(c, obj)
	p.writes = w
	return p
}

// Fetch reads the object a reconcile is for into obj. proceed is false when
// there is nothing to reconcile now: the object is gone (and forgotten here),
// or the cache has not caught up with our last status write, in which case
// result asks for a retry after StaleRetry. Reconciling a stale object would
// only repeat that write.
func (w *Writes) Fetch(ctx context.Context, c client.Reader, key types.NamespacedName, obj client.Object) (result ctrl.Result, proceed bool, err error) {
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			w.Forget(key)
			return ctrl.Result{}, false, nil
		}
		return ctrl.Result{}, false, err
	}
	if w.Stale(obj) {
		return ctrl.Result{RequeueAfter: StaleRetry}, false, nil
	}
	return ctrl.Result{}, true, nil
}
