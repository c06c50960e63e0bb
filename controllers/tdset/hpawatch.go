package tdset

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
)

// watchAutoscalers makes b reconcile the TDSets an HPA concerns when it is
// created, deleted or changes in what they read of it (hpaChanged): those
// whose spec.autoscaling.hpaRef names it, and those whose scale target it
// scales (before and after a change of its scaleTargetRef), so that a
// missing HPA is picked up when it appears, a changed floor is set back,
// and a target an HPA starts to scale is left to it (TargetAutoscaled).
//
// The manager's cache holds HPAs only with the managed-by label (the
// TDSets' own, container mode), and a user's HPA has none; so the HPAs are
// cached in a cache of their own, trimmed to what the TDSet reads
// (trimHPA) and indexed by their target (HPATargetIndex), in the
// namespaces of the manager's cache (manager.OwnCacheOptions).
func (r *Reconciler) watchAutoscalers(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	opts, err := manager.OwnCacheOptions(mgr, cache.Options{DefaultTransform: hpaTransform, ReaderFailOnMissingInformer: true})
	if err != nil {
		return nil, fmt.Errorf("the autoscalers' cache: %w", err)
	}
	hpas, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("creating the autoscalers' cache: %w", err)
	}
	if err := hpas.IndexField(context.Background(), &autoscalingv2.HorizontalPodAutoscaler{}, HPATargetIndex, indexHPATarget); err != nil {
		return nil, err
	}
	b = b.WatchesRawSource(source.Kind[client.Object](hpas, &autoscalingv2.HorizontalPodAutoscaler{},
		handler.EnqueueRequestsFromMapFunc(r.tdsetsOfHPA), hpaChanged))
	r.autoscalers = hpas
	return b, mgr.Add(hpas)
}

// hpaTransform is the autoscalers' cache transform (trimHPA); anything
// else (a tombstone) passes unchanged.
func hpaTransform(obj any) (any, error) {
	in, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return obj, nil
	}
	return trimHPA(in), nil
}

// trimHPA is the part of an HPA that the TDSet reads: its identity (and
// what the informer needs), its scaleTargetRef, minReplicas and
// maxReplicas, and its status counts. Labels, annotations, managed fields,
// metrics, behavior and conditions are dropped: the cache holds every HPA
// of the watched namespaces, most of them no TDSet's.
func trimHPA(in *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta: in.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Namespace: in.Namespace, Name: in.Name, UID: in.UID,
			ResourceVersion: in.ResourceVersion, Generation: in.Generation,
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: in.Spec.ScaleTargetRef,
			MinReplicas:    in.Spec.MinReplicas,
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: in.Status.CurrentReplicas,
			DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
}

// hpaChanged lets an update through when the trimmed HPA changed beyond
// its resourceVersion: the HPA controller writes its status (metrics,
// conditions) every sync.
var hpaChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		a, okA := e.ObjectOld.(*autoscalingv2.HorizontalPodAutoscaler)
		b, okB := e.ObjectNew.(*autoscalingv2.HorizontalPodAutoscaler)
		if !okA || !okB {
			return true
		}
		return !apiequality.Semantic.DeepEqual(a.Spec, b.Spec) || !apiequality.Semantic.DeepEqual(a.Status, b.Status)
	},
}

// tdsetsOfHPA maps an HPA to the TDSets it concerns: those that name it in
// hpaRef, and those whose scale target it scales.
func (r *Reconciler) tdsetsOfHPA(ctx context.Context, obj client.Object) []reconcile.Request {
	hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return nil
	}
	out := r.claimsOf(ctx, hpa.Namespace, hpaTargetKey(hpa))
	list := &schedulev2.TDSetList{}
	if err := r.client.List(ctx, list, client.InNamespace(hpa.Namespace), client.MatchingFields{HPARefIndex: hpa.Name}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the TDSets of an HPA", "hpa", hpa.Name)
		return out
	}
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
