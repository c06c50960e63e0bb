package manager

import (
	"errors"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/intern"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/podspecs"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// CacheOptions returns cache options under which every managed kind of the
// enabled controllers is watched and cached only when it carries
// app.kubernetes.io/managed-by=multi-operator, so the manager's memory does
// not grow with workloads it does not manage. Referenced kinds are cached
// only when labelled multi-operator.dev/watch=true, without kubectl's
// last-applied-configuration annotation. Custom resources are
// cached unfiltered; those a controller only reads (Descriptor.Read)
// without their metadata beyond name, namespace and generation. No cached object keeps its managedFields, which no
// controller reads and which are often the larger part of a small object;
// a write leaves the API server's managedFields as they are.
//
// Read kinds get no entry of their own: the default transform trims them
// by their type. An entry would make the cache map the kind when the
// manager is created, so a manager would not start where its CRD is not
// installed; without one, the kind is mapped only once a controller
// watches it, which a controller does only where the kind is served
// (Serves).
//
// With namespaces, every kind is watched in those namespaces only (the
// namespace-scoped mode, whose Roles grant nothing elsewhere); without,
// in every namespace.
func CacheOptions(enabled []reconciler.Descriptor, namespaces []string) cache.Options {
	selector := labels.SelectorFromSet(labels.Set{ownership.LabelManagedBy: ownership.ManagedBy})
	watched := labels.SelectorFromSet(labels.Set{ownership.LabelWatch: ownership.WatchValue})
	byObject := map[client.Object]cache.ByObject{}
	readKinds := map[reflect.Type]bool{}
	for _, d := range enabled {
		for _, read := range d.Read {
			readKinds[reflect.TypeOf(read)] = true
		}
	}
	transform := cacheTransform(podspecs.New(podspecs.DefaultSize), intern.New(intern.DefaultSize), readKinds)
	for _, d := range enabled {
		for _, child := range d.Managed {
			byObject[child] = cache.ByObject{Label: selector}
		}
		for _, referenced := range d.Referenced {
			byObject[referenced] = cache.ByObject{Label: watched, Transform: withoutLastApplied(transform)}
		}
	}
	opts := cache.Options{ByObject: byObject, DefaultTransform: transform}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// withoutLastApplied is next, then the removal of kubectl's
// last-applied-configuration annotation, which is as large as the object's
// content: users create the objects of a Referenced kind (a ConfigMap of
// an iCalendar file, a Secret) with kubectl apply, and no controller reads
// the annotation.
func withoutLastApplied(next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		out, err := next(in)
		if err != nil {
			return nil, err
		}
		if obj, ok := out.(client.Object); ok {
			if a := obj.GetAnnotations(); a[corev1.LastAppliedConfigAnnotation] != "" {
				a = maps.Clone(a)
				delete(a, corev1.LastAppliedConfigAnnotation)
				obj.SetAnnotations(a)
			}
		}
		return out, nil
	}
}

// readTransform keeps of an object of a Read kind its identity,
// generation and content: its managedFields, labels, annotations, owner
// references and finalizers, which no controller reads of it, are dropped.
func readTransform(in any) (any, error) {
	if obj, ok := in.(client.Object); ok {
		obj.SetManagedFields(nil)
		obj.SetLabels(nil)
		obj.SetAnnotations(nil)
		obj.SetOwnerReferences(nil)
		obj.SetFinalizers(nil)
	}
	return in, nil
}

// cacheTransform trims an object of a Read kind (readKinds, by Go type)
// with readTransform; of any other, it strips the managedFields, interns
// the pod spec, if there is one, in specs, and the labels and other
// recurring strings in strs.
func cacheTransform(specs *podspecs.Table, strs *intern.Table, readKinds map[reflect.Type]bool) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		if readKinds[reflect.TypeOf(in)] {
			return readTransform(in)
		}
		out, err := strip(in)
		if err != nil {
			return nil, err
		}
		specs.InternObject(out)
		strs.Object(out)
		return out, nil
	}
}

// NewCache is the manager's cache constructor (ctrl.Options.NewCache):
// the cache of opts (CacheOptions), which remembers the namespaces it
// watches, so that a controller's cache of its own (OwnCacheOptions)
// watches the same ones: the manager's cache options are their one
// source.
func NewCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &namespacedCache{Cache: c, namespaces: slices.Sorted(maps.Keys(opts.DefaultNamespaces))}, nil
}

// namespacedCache is a cache that tells its namespaces.
type namespacedCache struct {
	cache.Cache
	// namespaces are its options' DefaultNamespaces; empty is all.
	namespaces []string
}

// WatchesAllNamespaces reports whether the manager's cache watches every
// namespace, so that a controller may watch cluster-scoped kinds its
// namespace-scoped mode (--watch-namespaces, Roles bound per namespace)
// grants nothing on. A cache not made by NewCache tells no namespaces and
// is taken to watch all.
func WatchesAllNamespaces(mgr ctrl.Manager) bool {
	c, ok := mgr.GetCache().(*namespacedCache)
	return !ok || len(c.namespaces) == 0
}

// OwnCacheOptions completes opts, the options of a cache a controller
// keeps of its own (TDSet's scale targets, which the manager's cache
// holds only when labelled), from the manager: its HTTP client, scheme and
// REST mapper, and the namespaces its cache watches (all when it watches
// all), so that the two caches cannot watch different namespaces. The
// manager's cache must have been made by NewCache.
func OwnCacheOptions(mgr ctrl.Manager, opts cache.Options) (cache.Options, error) {
	c, ok := mgr.GetCache().(*namespacedCache)
	if !ok {
		return cache.Options{}, errors.New("the manager's cache tells no namespaces: create the manager with ctrl.Options.NewCache set to manager.NewCache")
	}
	opts.HTTPClient, opts.Scheme, opts.Mapper = mgr.GetHTTPClient(), mgr.GetScheme(), mgr.GetRESTMapper()
	opts.DefaultNamespaces = nil
	if len(c.namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range c.namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts, nil
}
