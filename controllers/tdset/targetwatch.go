package tdset

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// watchTargets makes b reconcile a TDSet when its scale target is created
// or deleted, or changes in what the TDSet reads of it (targetChanged): its
// spec (a change of spec.replicas bumps the generation), so that someone
// else's count is set back at once; its available replicas, so that Ready
// follows them; its owner. And when another TDSet of the same target is
// deleted.
//
// The targets are cached in a cache of their own, as unstructured objects
// trimmed to what the TDSet reads (trimTarget), which reconcileTarget
// reads instead of the API server: the manager's cache holds Deployments
// only with the managed-by label (it keeps the TDSet's own), and a user's
// Deployment has none. It watches the namespaces of the manager's cache
// (manager.OwnCacheOptions).
// A kind the API server does not serve when the manager starts is not
// watched (the TDSet still sees its target every TargetResync, read from
// the API server).
func (r *Reconciler) watchTargets(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	opts, err := manager.OwnCacheOptions(mgr, targetCacheOptions)
	if err != nil {
		return nil, fmt.Errorf("the scale targets' cache: %w", err)
	}
	targets, err := cache.New(mgr.GetConfig(), opts)
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
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(mapping.GroupVersionKind)
		b = b.WatchesRawSource(source.Kind[client.Object](targets, obj, handler.EnqueueRequestsFromMapFunc(r.tdsetsOf(mapping.GroupVersionKind.Group, gk.Kind)),
			targetChanged))
		watched++
	}
	if watched == 0 {
		return b, nil
	}
	r.targets = targets
	return b, mgr.Add(targets)
}

// targetCacheOptions are the scale targets' cache's own options, beside
// what the manager gives it: keeping of each object only what the TDSet
// reads (trimTarget), and failing a read of a kind it does not watch
// instead of starting an informer for it (getTarget then asks the API
// server): such a kind may be one the manager's role cannot list.
var targetCacheOptions = cache.Options{DefaultTransform: targetTransform, ReaderFailOnMissingInformer: true}

// targetTransform is the scale targets' cache transform (trimTarget);
// anything else (a tombstone) passes unchanged.
func targetTransform(obj any) (any, error) {
	in, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	return trimTarget(in), nil
}

// targetStatusFields are the status fields of a scale target that the
// TDSet reads (availableOf).
var targetStatusFields = []string{"replicas", "readyReplicas", "availableReplicas", "observedGeneration"}

// trimTarget is the part of a scale target that the TDSet reads. The cache
// holds every object of the scalable kinds in the watched namespaces, most
// of them no TDSet's target, so it keeps of each only: the name and
// namespace to map it to TDSets; the uid and resourceVersion the informer
// needs; the generation, to notice a change of spec; the controller
// ownerReference and the managed-by label, for controlled; and the
// status counts of targetStatusFields, and a RedisCluster's measured
// migration rate (migrationLeadTime). Other labels, annotations (a
// last-applied-configuration can be as large as the object), managed
// fields, the spec and the rest of the status are dropped.
func trimTarget(in *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(in.GetAPIVersion())
	out.SetKind(in.GetKind())
	out.SetNamespace(in.GetNamespace())
	out.SetName(in.GetName())
	out.SetUID(in.GetUID())
	out.SetResourceVersion(in.GetResourceVersion())
	out.SetGeneration(in.GetGeneration())
	if owner := metav1.GetControllerOfNoCopy(in); owner != nil {
		out.SetOwnerReferences([]metav1.OwnerReference{*owner})
	}
	if v, ok := in.GetLabels()[ownership.LabelManagedBy]; ok {
		out.SetLabels(map[string]string{ownership.LabelManagedBy: v})
	}
	if status, ok := in.Object["status"].(map[string]any); ok {
		kept := map[string]any{}
		for _, f := range targetStatusFields {
			if v, ok := status[f]; ok {
				kept[f] = v
			}
		}
		if rate, ok := nestedNumber(status, "migration", "slotsPerMinute"); ok {
			kept["migration"] = map[string]any{"slotsPerMinute": rate}
		}
		if len(kept) > 0 {
			out.Object["status"] = kept
		}
	}
	return out
}

// targetChanged lets an update through when the trimmed target changed
// beyond its resourceVersion, which changes on every write of the object,
// most of them of what the cache drops.
var targetChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool { return !sameTarget(e.ObjectOld, e.ObjectNew) },
}

// sameTarget tells whether two cached versions of a target differ only in
// their resourceVersion.
func sameTarget(a, b client.Object) bool {
	ua, okA := a.(*unstructured.Unstructured)
	ub, okB := b.(*unstructured.Unstructured)
	if !okA || !okB {
		return false
	}
	ua, ub = ua.DeepCopy(), ub.DeepCopy()
	ua.SetResourceVersion("")
	ub.SetResourceVersion("")
	return reflect.DeepEqual(ua.Object, ub.Object)
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
