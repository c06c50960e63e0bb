package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteControlled deletes obj, a child that the caller read (usually from
// the cache) and found its owner controls. It is how every controller of
// this project deletes a child of its own.
//
// The delete carries obj's UID as a precondition, so that it can only
// remove the object the caller read: a cache that is behind may still show
// our child after it was deleted and replaced by a new object of the same
// name (someone else's, or a later create), and a delete by name would take
// the replacement.
//
// The API server refuses a delete whose UID does not match with a
// Conflict. With no other precondition set, that means the object the
// caller read is gone (a name holds one object at a time, and a UID is
// never reused), so DeleteControlled counts it as done, as it does
// NotFound: nothing of ours is left to delete, and a retry could never
// succeed. Whatever holds the name now is left alone; the next reconcile,
// from a cache that has caught up, decides about it.
//
// The propagation is background, so that the child's own dependents, such
// as a Job's pods, go with it through garbage collection; batch/v1 Jobs
// would otherwise orphan their pods, and the Job would stay until the
// garbage collector removed the orphan finalizer.
//
// obj must carry its UID: without one there is no telling it from a
// replacement, so it is refused without a request.
func DeleteControlled(ctx context.Context, c client.Client, obj client.Object) error {
	uid := obj.GetUID()
	if uid == "" {
		return fmt.Errorf("deleting %s: it has no UID to tell it from a replacement; read it first", describe(c, obj))
	}
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("deleting %s: %w", describe(c, obj), err)
}
