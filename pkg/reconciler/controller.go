package reconciler

import (
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/multi-operator/multi-operator/pkg/enqueue"
	"github.com/multi-operator/multi-operator/pkg/events"
)

// EventRecorder returns the recorder of the named controller's events, as
// every controller of this project names its event source.
func EventRecorder(mgr ctrl.Manager, controllerName string) events.Recorder {
	return events.NewRecorder(mgr.GetEventRecorder(controllerName + "-controller"))
}

// Reported is a child whose status its owner reports, such as a Deployment
// or a Job, with what the owner's status reads of it.
type Reported struct {
	// Object is an empty child of the kind, such as &appsv1.Deployment{}.
	Object client.Object
	// Report returns what the owner's status is computed from: an update
	// of the child that leaves it (and the child's generation, labels,
	// annotations, owner references, finalizers and deletion) as it was
	// reconciles nothing. Most of a Deployment's status reports only move a
	// condition's reason or time that no owner shows.
	Report func(client.Object) any
}

// ReportOf makes the Reported of children of obj's type, whose owner's
// status reads report(child) and nothing else of them: the controller's
// status code takes R, not the child, so that nothing it reads can be
// missing from the comparison.
func ReportOf[T client.Object, R any](obj T, report func(T) R) Reported {
	return Reported{Object: obj, Report: func(o client.Object) any {
		child, ok := o.(T)
		if !ok {
			return o // not of the kind: never equal to a report
		}
		return report(child)
	}}
}

// SharedFlow is the reconciler a controller completes: a Flow, whose
// NamespaceShare puts the reconciles it turned away back into the queue.
type SharedFlow interface{ ShareSource() source.Source }

// NewControllerBuilder starts the controller every controller of this
// project registers: named name, reconciling owner with flow (whose
// NamespaceShare's watch it adds), whose own status writes
// trigger nothing (they bump no generation), with each reported child
// watched so that its progress goes ahead of new work (only changes to
// what the owner reads of it count), and each owned child watched so that
// drift is corrected; a child's create, the controller's own doing,
// triggers nothing. The caller adds any other watch and completes it with
// its reconciler.
func NewControllerBuilder(mgr ctrl.Manager, name string, flow SharedFlow, owner client.Object, reported []Reported, owned []client.Object) *builder.Builder {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(owner, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(flow.ShareSource())
	for _, child := range reported {
		b = b.Watches(child.Object, enqueue.Owner(mgr.GetScheme(), mgr.GetRESTMapper(), owner),
			builder.WithPredicates(notCreated, reportChanged(child.Report)))
	}
	for _, child := range owned {
		b = b.Owns(child, builder.WithPredicates(notCreated))
	}
	return b
}

// notCreated lets a child's updates and deletes through, not its creates:
// the controller made the child itself, in a reconcile that already
// reported it, and the informers' first list of children after a start
// comes with each owner's own first event. Half of a new custom resource's
// reconciles were these repeats.
var notCreated = predicate.Funcs{CreateFunc: func(event.CreateEvent) bool { return false }}

// reportChanged lets a reported child's update through when the owner
// would see it: its spec (the generation), its labels, annotations, owner
// references, finalizers or deletion changed, which a correction of drift or a
// cleanup needs, or its report did.
func reportChanged(report func(client.Object) any) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		// reflect.DeepEqual, not equality.Semantic: reports may have
		// unexported fields, and a false "changed" costs only a reconcile.
		return metadataChanged(e.ObjectOld, e.ObjectNew) || !reflect.DeepEqual(report(e.ObjectOld), report(e.ObjectNew))
	}}
}

// metadataChanged reports whether anything of a child's identity that a
// reconcile compares or acts on differs between old and new.
func metadataChanged(old, new client.Object) bool {
	return old.GetGeneration() != new.GetGeneration() ||
		!maps.Equal(old.GetLabels(), new.GetLabels()) ||
		!maps.Equal(old.GetAnnotations(), new.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(old.GetOwnerReferences(), new.GetOwnerReferences()) ||
		!old.GetDeletionTimestamp().Equal(new.GetDeletionTimestamp()) ||
		!slices.Equal(old.GetFinalizers(), new.GetFinalizers())
}
