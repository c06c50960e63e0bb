package tdset

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
)

// watchTargets makes b reconcile a TDSet when its scale target is created,
// deleted or has its spec changed (a change of spec.replicas bumps the
// generation), so that someone else's count is set back at once, and when
// another TDSet of the same target is deleted.
//
// The targets are watched metadata only, in a cache of their own: the
// manager's cache holds Deployments only with the managed-by label (it
// keeps the TDSet's own), and a user's Deployment has none. A kind the
// API server does not serve when the manager starts is not watched (the
// TDSet still sees its target every TargetResync).
func (r *Reconciler) watchTargets(mgr ctrl.Manager, b *builder.Builder, namespaces []string) (*builder.Builder, error) {
	targets, err := cache.New(mgr.GetConfig(), targetCacheOptions(mgr.GetScheme(), mgr.GetRESTMapper(), namespaces))
	if err != nil {
		return nil, fmt.Errorf("creating the scale targets' cache: %w", err)
	}
	b = b.Watches(&schedulev2.TDSet{}, handler.EnqueueRequestsFromMapFunc(r.heirsOf), builder.WithPredicates(onlyDeletes))
	watched := 0
	for _, gk := range r.scalableKinds {
		mapping, err := mgr.GetRESTMapper().RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			mgr.GetLogger().Info("not watching a scalable kind the API server does not serve", "controller", Name, "kind", gk.String())
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("mapping scalable kind %s: %w", gk, err)
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(mapping.GroupVersionKind)
		b = b.WatchesRawSource(source.Kind[client.Object](targets, obj, handler.EnqueueRequestsFromMapFunc(r.tdsetsOf(mapping.GroupVersionKind.Group, gk.Kind)),
			predicate.GenerationChangedPredicate{}))
		watched++
	}
	if watched == 0 {
		return b, nil
	}
	return b, mgr.Add(targets)
}

// targetCacheOptions are the options of the scale targets' cache: limited
// to namespaces (all when empty), and keeping of each object only what the
// watch uses (targetMetadata).
func targetCacheOptions(scheme *runtime.Scheme, mapper meta.RESTMapper, namespaces []string) cache.Options {
	opts := cache.Options{Scheme: scheme, Mapper: mapper, DefaultTransform: targetMetadata}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// targetMetadata is the scale targets' cache transform. The cache holds
// every object of the scalable kinds in the watched namespaces, most of
// them no TDSet's target, so it keeps of each only what the watch reads:
// the name and namespace to map it to TDSets, the generation for
// GenerationChangedPredicate, and the uid and resourceVersion the informer
// needs. Labels, annotations (a last-applied-configuration can be as large
// as the object), ownerReferences and managed fields are dropped;
// reconcileTarget reads what it needs of the target from the API server.
func targetMetadata(obj any) (any, error) {
	in, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta: in.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         in.Namespace,
			Name:              in.Name,
			UID:               in.UID,
			ResourceVersion:   in.ResourceVersion,
			Generation:        in.Generation,
			DeletionTimestamp: in.DeletionTimestamp,
		},
	}, nil
}

// heirsOf maps a deleted TDSet to the others that name its target, so
// that the next in line (TargetConflict) takes the target over at once.
func (r *Reconciler) heirsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	tds, ok := obj.(*schedulev2.TDSet)
	if !ok || tds.Spec.ScaleTargetRef == nil {
		return nil
	}
	var out []reconcile.Request
	for _, req := range r.claimsOf(ctx, tds.Namespace, targetKey(tds.Spec.ScaleTargetRef)) {
		if req.Name != tds.Name {
			out = append(out, req)
		}
	}
	return out
}

// onlyDeletes lets deletions through, nothing else.
var onlyDeletes = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// tdsetsOf maps a target of a kind to the TDSets that name it.
func (r *Reconciler) tdsetsOf(group, kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		return r.claimsOf(ctx, obj.GetNamespace(), targetKeyOf(group, kind, obj.GetName()))
	}
}

// claimsOf lists the TDSets of a namespace whose TargetIndex is key.
func (r *Reconciler) claimsOf(ctx context.Context, ns, key string) []reconcile.Request {
	list := &schedulev2.TDSetList{}
	if err := r.client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{TargetIndex: key}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the TDSets of a scale target", "target", key)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
