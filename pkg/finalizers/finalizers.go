// Package finalizers runs a cleanup before an object goes away: Ensure adds
// the finalizer while the object lives, and Finalize runs the cleanup once
// the object is being deleted and removes the finalizer only after the
// cleanup succeeded. A failing cleanup is never dropped: it is shown as
// Ready=False with reason CleanupFailed plus a Warning event, and its error
// goes back to controller-runtime, which retries with backoff.
package finalizers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
)

// Cleanup is the work that must finish before the object may be deleted. It
// must be safe to run more than once. A cleanup that has started work
// elsewhere (a Job) and waits for it returns a *PendingError (Wait).
type Cleanup func(ctx context.Context) error

// PendingError is a cleanup under way: not a failure, so Finalize shows
// it as Ready=False with its own reason, records no Warning and returns
// no error; a watch of what it waits for, or RequeueAfter, brings the
// next try.
type PendingError struct {
	// Reason and Message are the Ready condition's while it waits.
	Reason, Message string
	// RequeueAfter, when above 0, is when to look again: the time of a
	// change that no watch reports.
	RequeueAfter time.Duration
}

func (e *PendingError) Error() string { return e.Message }

// Wait is a PendingError with reason and message, looked at again after
// requeueAfter when that is above 0.
func Wait(requeueAfter time.Duration, reason, format string, args ...any) error {
	return &PendingError{Reason: reason, Message: fmt.Sprintf(format, args...), RequeueAfter: requeueAfter}
}

// Ensure adds the finalizer to obj unless it is there already, and reports
// whether it wrote. The patch carries obj's resourceVersion, so it never
// overwrites a finalizer another client added meanwhile.
func Ensure(ctx context.Context, c client.Client, obj client.Object, finalizer string) (bool, error) {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return false, nil
	}
	return true, patchFinalizers(ctx, c, obj, func() { controllerutil.AddFinalizer(obj, finalizer) })
}

// Finalize runs cleanup for an object that is being deleted and still holds
// finalizer, then removes the finalizer. When cleanup fails, obj gets
// Ready=False (reason CleanupFailed) and a Warning event, the finalizer stays,
// and the error is returned so that the caller's reconcile is retried with
// backoff; a cleanup still under way (a *PendingError) sets Ready=False with
// its reason, and neither warns nor fails. It reports whether the
// finalizer is gone.
func Finalize(ctx context.Context, c client.Client, rec events.Recorder, obj conditions.Object, finalizer string, cleanup Cleanup) (bool, error) {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return true, nil
	}
	var pending *PendingError
	if err := cleanup(ctx); errors.As(err, &pending) {
		conditions.MarkFalse(obj, conditions.Ready, pending.Reason, pending.Message)
		return false, nil
	} else if err != nil {
		conditions.MarkFalse(obj, conditions.Ready, conditions.ReasonCleanupFailed, err.Error())
		rec.Warning(obj, conditions.ReasonCleanupFailed, events.ActionFinalize, "Cleanup before deletion failed, will retry: %v", err)
		return false, fmt.Errorf("cleanup of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	err := patchFinalizers(ctx, c, obj, func() { controllerutil.RemoveFinalizer(obj, finalizer) })
	if apierrors.IsNotFound(err) {
		// A reconcile of a stale copy: the finalizer was removed before, and
		// the object is gone.
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// patchFinalizers applies change to obj's finalizers and sends the new
// list with obj's resourceVersion, as a merge patch: the list replaces the
// server's whole, and a resourceVersion that moved on fails the patch
// with a conflict instead of dropping another client's finalizer. The
// patch is made from the list alone, not by diffing the whole object.
func patchFinalizers(ctx context.Context, c client.Client, obj client.Object, change func()) error {
	if obj.GetResourceVersion() == "" {
		// Without it the patch would overwrite whatever list the server has.
		return fmt.Errorf("updating finalizers of %s: the object has no resourceVersion; read it first", client.ObjectKeyFromObject(obj))
	}
	change()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers":      obj.GetFinalizers(),
		"resourceVersion": obj.GetResourceVersion(),
	}})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("updating finalizers of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}
