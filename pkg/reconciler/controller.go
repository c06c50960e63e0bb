package reconciler

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/multi-operator/multi-operator/pkg/enqueue"
	"github.com/multi-operator/multi-operator/pkg/events"
)

// EventRecorder returns the recorder of the named controller's events, as
// every controller of this project names its event source.
func EventRecorder(mgr ctrl.Manager, controllerName string) events.Recorder {
	return events.NewRecorder(mgr.GetEventRecorder(controllerName + "-controller"))
}

// NewControllerBuilder starts the controller every controller of this
// project registers: named name, reconciling owner, whose own status writes
// trigger nothing (they bump no generation), with each reported child
// (one whose status the owner reports, such as a Deployment or a Job)
// watched so that its progress goes ahead of new work, and each owned
// child watched so that drift is corrected; a child's create, the
// controller's own doing, triggers nothing. The caller adds any other
// watch and completes it with its reconciler.
func NewControllerBuilder(mgr ctrl.Manager, name string, owner client.Object, reported, owned []client.Object) *builder.Builder {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(owner, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	for _, child := range reported {
		b = b.Watches(child, enqueue.Owner(mgr.GetScheme(), mgr.GetRESTMapper(), owner), builder.WithPredicates(notCreated))
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
