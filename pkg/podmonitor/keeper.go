package podmonitor

import (
	"context"

	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Reasons are the event reasons a Keeper records on the owner, the
// owner kind's own constants.
type Reasons struct {
	Created, Updated, Deleted string
}

// Keeper is a controller's PodMonitor phase: it keeps each custom
// resource's PodMonitor where the cluster serves the kind, and does
// nothing, saying nothing, where it does not, since a cluster without
// the Prometheus Operator is an ordinary one.
type Keeper struct {
	// Served says whether the kind is served; NewKeeper makes it and
	// Watch starts it with the manager.
	Served *Served
	// Kind is the owner's kind, for the events' messages.
	Kind    string
	Reasons Reasons

	client   client.Client
	events   events.Recorder
	children reconciler.Children
}

// NewKeeper returns a Keeper that asks the API server of mgr whether
// PodMonitors are served, and applies them with its client.
func NewKeeper(mgr manager.Manager, rec events.Recorder, kind string, reasons Reasons) (*Keeper, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	c := mgr.GetClient()
	return &Keeper{
		Served: &Served{Discovery: dc}, Kind: kind, Reasons: reasons,
		client: c, events: rec, children: reconciler.Children{Client: c, Events: rec},
	}, nil
}

// Reconcile creates or corrects owner's PodMonitor, built from target,
// while monitoring runs the exporter and does not disable the PodMonitor,
// and deletes it otherwise. Where the kind is not served it does nothing.
func (k *Keeper) Reconcile(ctx context.Context, owner conditions.Object, monitoring *shared.Monitoring, target Target) (reconciler.Result, error) {
	if !k.Served.Served() {
		return reconciler.Result{}, nil
	}
	if !Wanted(monitoring) {
		return reconciler.Result{}, k.delete(ctx, owner, target, ": the "+k.Kind+" asks for none")
	}
	_, result, err := k.children.Apply(ctx, owner, reconciler.Child{
		Object:  Desired(target),
		Created: k.Reasons.Created,
		Updated: k.Reasons.Updated, UpdatedNote: " to match the " + k.Kind,
	})
	return result, err
}

// Delete deletes owner's PodMonitor, named by target, before owner goes,
// for owners whose finalizer deletes their children.
func (k *Keeper) Delete(ctx context.Context, owner client.Object, target Target) error {
	if !k.Served.Served() {
		return nil
	}
	return k.delete(ctx, owner, target, "")
}

// delete deletes the PodMonitor and records it with note after its name.
func (k *Keeper) delete(ctx context.Context, owner client.Object, target Target, note string) error {
	deleted, err := Delete(ctx, k.client, owner, target.Namespace, target.Name)
	if err != nil {
		return err
	}
	if deleted {
		k.events.Normal(owner, k.Reasons.Deleted, events.ActionDelete, "Deleted PodMonitor %s%s", target.Name, note)
	}
	return nil
}

// Watch starts k.Served with mgr and returns the source that enqueues
// every object list returns when the kind becomes served or goes, for
// the controller to watch: PodMonitors themselves are not watched, since
// the kind may not be served and a watch would need list and watch of
// every namespace's PodMonitors.
func Watch[T client.Object](mgr manager.Manager, k *Keeper, list func(ctx context.Context) ([]T, error)) (source.Source, error) {
	changed := make(chan event.TypedGenericEvent[T])
	k.Served.OnChange = func(ctx context.Context, served bool) {
		log.FromContext(ctx).Info("PodMonitor kind served: reconciling every "+k.Kind, "served", served)
		objects, err := list(ctx)
		if err != nil {
			log.FromContext(ctx).Error(err, "listing "+k.Kind+"s to reconcile their PodMonitors")
			return
		}
		for _, obj := range objects {
			select {
			case changed <- event.TypedGenericEvent[T]{Object: obj}:
			case <-ctx.Done():
				return
			}
		}
	}
	if err := mgr.Add(k.Served); err != nil {
		return nil, err
	}
	return source.Channel(changed, &handler.TypedEnqueueRequestForObject[T]{}), nil
}
