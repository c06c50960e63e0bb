// Package reconciler is the one reconcile skeleton every controller of this
// project runs, after cluster-api's controllers: fetch, finalize (once the
// object is being deleted), the controller's own phases in order, and the
// status written once at the end, only when it changed.
//
// A controller supplies a Flow: how to make an empty object, its finalizer
// and cleanup if it has one, the scope its phases share, and the phases.
// Its Reconcile is then Flow.Reconcile, and it never writes status, sets
// its observedGeneration, adds finalizers or decides on stale reads itself.
package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/finalizers"
	"github.com/multi-operator/multi-operator/pkg/status"
)

// Result is what a phase asks of the skeleton.
type Result struct {
	// RequeueAfter asks for another reconcile that much later; of all
	// phases' requests the soonest wins.
	RequeueAfter time.Duration
	// Stop skips the phases after this one. The status is still written.
	Stop bool
	// HoldStatus skips this reconcile's status write: the status computed so
	// far would be replaced a moment later, by a reconcile that an event
	// already on its way triggers (such as a child's first status report).
	HoldStatus bool
	// AfterStatus run once this reconcile's status is written (or found
	// unchanged), in the order the phases gave them, and not when the write
	// failed or was held. They announce what the status now records, such
	// as an event for a transition: the next reconcile repeats a transition
	// whose write was lost, and would announce it twice.
	AfterStatus []func()
}

// Requeue is a Result that asks for a reconcile after d.
func Requeue(d time.Duration) Result { return Result{RequeueAfter: d} }

// StopAndRequeue is a Result that skips the remaining phases and asks for a
// reconcile after d, the way a phase that has to wait for something says so.
func StopAndRequeue(d time.Duration) Result { return Result{RequeueAfter: d, Stop: true} }

// merge adds a phase's result to the result so far: the soonest requeue,
// a held status stays held, and the announcements add up. Stop is acted on by the loop itself.
func (r Result) merge(next Result) Result {
	if next.RequeueAfter > 0 && (r.RequeueAfter == 0 || next.RequeueAfter < r.RequeueAfter) {
		r.RequeueAfter = next.RequeueAfter
	}
	r.HoldStatus = r.HoldStatus || next.HoldStatus
	r.AfterStatus = append(r.AfterStatus, next.AfterStatus...)
	return r
}

// Phase is one step of a reconcile. It gets the reconcile's scope S: the
// object, and whatever earlier phases found out for later ones (such as the
// child whose status the last phase reports). A phase changes the object's
// status in memory; the skeleton writes it.
type Phase[S any] func(ctx context.Context, scope S) (Result, error)

// NamedPhase is a Phase with a name, which its errors carry: an error of
// the phase "children" comes back from Reconcile as "children: <err>", so
// that a log line or a status says which step of which controller failed.
type NamedPhase[S any] struct {
	// Name is short and lower case, such as "children" or "status".
	Name string
	// Run is the phase.
	Run Phase[S]
}

// Flow is a controller's reconcile: what it reconciles, the scope its
// phases share, and the phases.
type Flow[T conditions.Object, S any] struct {
	// Client reads the object (from the cache) and writes its status.
	Client client.Client
	// Events records the finalizer's events.
	Events events.Recorder
	// NewObject returns an empty object of the reconciled kind.
	NewObject func() T
	// Finalizer, when not empty, is added to every object and removed only
	// after Cleanup succeeded.
	Finalizer string
	// NeedsFinalizer, when set, limits the finalizer to the objects it
	// returns true for, so that objects with nothing to clean up are
	// deleted at once. Optional: nil adds it to every object.
	NeedsFinalizer func(obj T) bool
	// Cleanup runs once an object holding Finalizer is being deleted. It
	// must be safe to repeat. One that waits for work it started returns
	// a *finalizers.PendingError (finalizers.Wait): the status shows it,
	// and the reconcile ends without an error, to be retried after its
	// RequeueAfter or when a watch says so.
	Cleanup func(ctx context.Context, obj T) error
	// Finalizing marks the object's conditions before Cleanup runs, so that
	// a cleanup that fails shows what was being done. Optional.
	Finalizing func(obj T)
	// Gone, when set, runs for a request whose object no longer exists,
	// such as to drop the object's metrics. Optional.
	Gone func(key types.NamespacedName)
	// NewScope makes the scope of one reconcile of obj.
	NewScope func(obj T) S
	// Phases run in order on that scope; an error that one returns is
	// wrapped with its name (with %w: errors.Is and errors.As still see
	// it).
	Phases []NamedPhase[S]
	// ObservedGeneration, when set, returns a pointer to the object's
	// status.observedGeneration, which the Flow sets to the object's
	// generation before the phases run: every controller records the
	// generation its status was computed from the same way, and no phase
	// has to remember it. Optional.
	ObservedGeneration func(obj T) *int64

	// writes tells reads that predate our own status writes.
	writes status.Writes
	// share, when set, bounds the reconciles one namespace runs at once.
	share *NamespaceShare
}

// ShareWorkers bounds the reconciles one namespace runs at once with
// share; SetupWith calls it when Options.PerNamespace is set.
func (f *Flow[T, S]) ShareWorkers(share *NamespaceShare) { f.share = share }

// ShareSource is the watch through which the Flow's NamespaceShare puts
// the reconciles it turned away back into the queue as soon as their
// namespace has room (NamespaceShare.Source); without a share, a source
// that does nothing. NewControllerBuilder's callers watch it; a controller
// that does not still works, each turned-away reconcile then trying again
// after a second.
func (f *Flow[T, S]) ShareSource() source.Source {
	if f.share == nil {
		return source.Func(func(context.Context, workqueue.TypedRateLimitingInterface[ctrl.Request]) error { return nil })
	}
	return f.share.Source()
}

// Reconcile runs fetch, finalize or the phases, and one status write. A
// phase's error stops the phases after it and is returned, with the
// phase's name, after the status is written, so that controller-runtime
// retries with backoff; the result of a failed reconcile carries no
// requeue, which controller-runtime would ignore beside the error anyway.
func (f *Flow[T, S]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if f.share != nil {
		leave, retry, ok := f.share.Enter(req)
		if !ok {
			return ctrl.Result{RequeueAfter: retry}, nil
		}
		defer leave()
	}
	obj := f.NewObject()
	if result, ok, err := f.writes.Fetch(ctx, f.Client, req.NamespacedName, obj); !ok {
		// Neither an error nor a retry of a stale read: the object is gone.
		if err == nil && result.IsZero() && f.Gone != nil {
			f.Gone(req.NamespacedName)
		}
		return result, err
	}
	patcher := f.writes.NewPatcher(f.Client, obj)

	var (
		result Result
		err    error
	)
	if !obj.GetDeletionTimestamp().IsZero() {
		result, err = f.finalize(ctx, obj)
	} else {
		result, err = f.run(ctx, obj)
	}
	if !result.HoldStatus {
		if _, patchErr := patcher.Patch(ctx, obj); patchErr != nil {
			err = errors.Join(err, patchErr)
		} else {
			for _, announce := range result.AfterStatus {
				announce()
			}
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: result.RequeueAfter}, nil
}

// run adds the finalizer, then runs the phases until one fails or stops.
func (f *Flow[T, S]) run(ctx context.Context, obj T) (Result, error) {
	if f.Finalizer != "" && (f.NeedsFinalizer == nil || f.NeedsFinalizer(obj)) {
		if _, err := finalizers.Ensure(ctx, f.Client, obj, f.Finalizer); err != nil {
			return Result{}, err
		}
	}
	if f.ObservedGeneration != nil {
		*f.ObservedGeneration(obj) = obj.GetGeneration()
	}
	var result Result
	scope := f.NewScope(obj)
	for _, phase := range f.Phases {
		next, err := phase.Run(ctx, scope)
		result = result.merge(next)
		if err != nil {
			err = fmt.Errorf("%s: %w", phase.Name, err)
			return result, err
		}
		if next.Stop {
			break
		}
	}
	return result, nil
}

// finalize runs the cleanup of an object that is being deleted and still
// holds the finalizer. Without one, its children go with it through
// garbage collection and nothing is written. Once the cleanup succeeded and
// the finalizer is removed, the object is gone and its status is not
// written; a failed cleanup is shown in the status.
func (f *Flow[T, S]) finalize(ctx context.Context, obj T) (Result, error) {
	if f.Finalizer == "" || !controllerutil.ContainsFinalizer(obj, f.Finalizer) {
		return Result{HoldStatus: true}, nil
	}
	if f.Finalizing != nil {
		f.Finalizing(obj)
	}
	var pending *finalizers.PendingError
	gone, err := finalizers.Finalize(ctx, f.Client, f.Events, obj, f.Finalizer, func(ctx context.Context) error {
		err := f.Cleanup(ctx, obj)
		errors.As(err, &pending)
		return err
	})
	if gone && err == nil {
		return Result{HoldStatus: true}, nil
	}
	if pending != nil && err == nil {
		return Result{RequeueAfter: pending.RequeueAfter}, nil
	}
	return Result{}, err
}
