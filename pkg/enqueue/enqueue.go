// Package enqueue holds the event handlers that turn a child's change into
// a reconcile of its owner.
package enqueue

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ChildUpdatePriority is the queue priority of a reconcile that a child's
// update asks for. It is above the default 0 of every other event.
const ChildUpdatePriority = 10

// Owner is the event handler for a child whose status the owner
// reports, such as a Deployment or a Job: like the one Owns sets up, it
// reconciles the child's controller. In addition, a change to the child goes
// ahead of other queued work. When a thousand CRs are created at once, the
// first of them are not kept from turning Ready by the first reconciles of
// the rest: work that has started is finished before new work begins.
func Owner(scheme *runtime.Scheme, mapper meta.RESTMapper, owner client.Object) handler.EventHandler {
	return updatesFirst{handler.EnqueueRequestForOwner(scheme, mapper, owner, handler.OnlyControllerOwner())}
}

// updatesFirst raises the priority of the requests its handler adds on an
// update event.
type updatesFirst struct{ handler.EventHandler }

// Update passes the event on with a queue that adds at ChildUpdatePriority.
func (u updatesFirst) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		q = withPriority{PriorityQueue: pq, priority: ChildUpdatePriority}
	}
	u.EventHandler.Update(ctx, e, q)
}

// withPriority adds at its priority unless the caller sets one, as
// controller-runtime does to lower the priority of a resync.
type withPriority struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	priority int
}

func (w withPriority) Add(item reconcile.Request) { w.AddWithOpts(priorityqueue.AddOpts{}, item) }

func (w withPriority) AddAfter(item reconcile.Request, after time.Duration) {
	w.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (w withPriority) AddRateLimited(item reconcile.Request) {
	w.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

func (w withPriority) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = ptr.To(w.priority)
	}
	w.PriorityQueue.AddWithOpts(o, items...)
}
