// Package apply creates or corrects a custom resource's children: a child
// computed by a pure builder is made to match on the API server, with the
// owner's controller reference, without ever taking over an object someone
// else controls, and without a write when nothing differs. DeleteControlled
// deletes a child without ever taking a replacement of the same name.
package apply

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/stringmaps"
)

// Result says what Apply did.
type Result string

// What Apply did to the child.
const (
	Unchanged Result = "Unchanged"
	Created   Result = "Created"
	Updated   Result = "Updated"
)

// Apply makes the cluster's copy of desired match it. desired is a complete
// child as a pure builder computed it; Apply adds the owner's controller
// reference and then:
//   - creates the child when it does not exist;
//   - returns a ConflictError when it exists but owner does not control it;
//   - patches it when desired is not a semantic subset of what is there
//     (fields the API server defaulted and labels or annotations others
//     added are left alone, so a reconcile at steady state writes nothing);
//   - otherwise does nothing.
//
// Zero values in desired count as set where the Go type always serialises
// them, such as a Service port's targetPort: builders set those explicitly.
// On return desired holds the object as the API server has it.
//
// A controller uses Children.Apply, which also remembers its creates.
func Apply(ctx context.Context, c client.Client, owner, desired client.Object) (Result, error) {
	result, _, err := apply(ctx, c, owner, desired, nil)
	return result, err
}

// apply is Apply; existing, when not nil, is the child as the API server
// or the cache has it, and the cache is not read. existing may be the
// cache's own object (see getCached): apply never changes it. previous is
// the child as it was before an update, nil unless the result is Updated.
func apply(ctx context.Context, c client.Client, owner, desired, existing client.Object) (result Result, previous client.Object, err error) {
	if err := controllerutil.SetControllerReference(owner, desired, c.Scheme()); err != nil {
		return Unchanged, nil, err
	}
	if existing == nil {
		existing, err = getCached(ctx, c, desired)
	}
	if apierrors.IsNotFound(err) {
		err = c.Create(ctx, desired)
		if err == nil {
			return Created, nil, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return Unchanged, nil, fmt.Errorf("creating %s: %w", describe(c, desired), err)
		}
		// The cache cannot see the object: either it is not ours (the
		// cache holds only labelled children) or the cache has not caught
		// up with our own create of a moment ago. Only the API server knows.
		existing, err = getLive(ctx, c, desired)
	}
	if err != nil {
		return Unchanged, nil, fmt.Errorf("reading %s: %w", describe(c, desired), err)
	}
	if ref := metav1.GetControllerOf(existing); ref == nil || ref.UID != owner.GetUID() {
		conflict := &ownership.ConflictError{Kind: KindOf(c, desired), Name: desired.GetName()}
		if ref != nil {
			conflict.Controller = ref.Kind + "/" + ref.Name
		}
		return Unchanged, nil, conflict
	}
	same, typed := typedSubset(desired, existing)
	if typed && same && metadataSubset(desired, existing) {
		return Unchanged, nil, copyInto(owned(existing), desired)
	}
	d, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return Unchanged, nil, err
	}
	e, err := runtime.DefaultUnstructuredConverter.ToUnstructured(existing)
	if err != nil {
		return Unchanged, nil, err
	}
	if _, ok := existing.(*unstructured.Unstructured); ok {
		// ToUnstructured hands back an unstructured object's own map,
		// which merge changes: the patch would then miss the change.
		e = runtime.DeepCopyJSON(e)
	}
	if !typed && isSubset(d, e, desired, existing) {
		return Unchanged, nil, copyInto(owned(existing), desired)
	}
	updated, err := merge(d, e, desired, existing)
	if err != nil {
		return Unchanged, nil, err
	}
	if err := c.Patch(ctx, updated, client.MergeFrom(existing)); err != nil {
		return Unchanged, nil, fmt.Errorf("updating %s: %w", describe(c, desired), err)
	}
	return Updated, owned(existing), copyInto(updated, desired)
}

// getCached reads the child like desired from the cache without a deep
// copy: the object returned shares its maps, slices and pointers with the
// cache's, so apply only reads it and hands on only a copy (see owned).
// A reconcile at steady state thus copies each child once, not twice.
// Clients without a cache, and unstructured objects, which the manager
// does not cache, read from the API server as ever.
func getCached(ctx context.Context, c client.Client, desired client.Object) (client.Object, error) {
	var existing client.Object
	if u, ok := desired.(*unstructured.Unstructured); ok {
		existing = &unstructured.Unstructured{}
		existing.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
	} else {
		existing = reflect.New(reflect.TypeOf(desired).Elem()).Interface().(client.Object)
	}
	return existing, c.Get(ctx, client.ObjectKeyFromObject(desired), existing, client.UnsafeDisableDeepCopy)
}

// owned returns a deep copy of obj, which may share memory with the cache,
// for a caller that may change it.
func owned(obj client.Object) client.Object {
	return obj.DeepCopyObject().(client.Object)
}

// isSubset reports whether every field set in desired has the same value in
// existing. Metadata is compared only for labels, annotations and owner
// references, since the server fills in the rest.
// d and e are desired and existing in unstructured form.
func isSubset(d, e map[string]any, desired, existing client.Object) bool {
	return unstructuredSubset(d, e) && metadataSubset(desired, existing)
}

// unstructuredSubset is isSubset for the fields outside metadata and
// status, on the unstructured forms d and e.
func unstructuredSubset(d, e map[string]any) bool {
	for key, value := range d {
		switch key {
		case "metadata", "status", "apiVersion", "kind":
			continue
		}
		if !subset(value, e[key]) {
			return false
		}
	}
	return true
}

// metadataSubset reports whether existing has desired's labels and
// annotations (among others) and exactly its owner references.
func metadataSubset(desired, existing client.Object) bool {
	return mapSubset(desired.GetLabels(), existing.GetLabels()) &&
		mapSubset(desired.GetAnnotations(), existing.GetAnnotations()) &&
		equality.Semantic.DeepEqual(desired.GetOwnerReferences(), existing.GetOwnerReferences())
}

// subset compares two values in unstructured form. A map matches when each of
// desired's keys matches (extra keys in existing are defaults or someone
// else's); a list matches only element by element at equal length, so an
// added container or port counts as drift; a scalar must be equal. A nil in
// desired means "not set" and matches anything.
func subset(desired, existing any) bool {
	switch d := desired.(type) {
	case nil:
		return true
	case map[string]any:
		e, ok := existing.(map[string]any)
		if !ok {
			return len(d) == 0 && existing == nil
		}
		for k, v := range d {
			if !subset(v, e[k]) {
				return false
			}
		}
		return true
	case []any:
		e, ok := existing.([]any)
		if !ok {
			return len(d) == 0 && existing == nil
		}
		if len(d) != len(e) {
			return false
		}
		for i := range d {
			if !subset(d[i], e[i]) {
				return false
			}
		}
		return true
	default:
		return equality.Semantic.DeepEqual(desired, existing)
	}
}

// mapSubset reports whether existing has every key of desired with the
// same value, as subset does for the two maps in unstructured form, without
// making them.
func mapSubset(desired, existing map[string]string) bool {
	for k, v := range desired {
		if e, ok := existing[k]; !ok || e != v {
			return false
		}
	}
	return true
}

// merge returns existing with every top-level field but metadata and status
// replaced by desired's, desired's labels and annotations added to the ones
// already there, and desired's owner references.
// d and e are desired and existing in unstructured form; e is changed.
func merge(d, e map[string]any, desired, existing client.Object) (client.Object, error) {
	for key, value := range d {
		switch key {
		case "metadata", "status", "apiVersion", "kind":
			continue
		}
		e[key] = value
	}
	out := existing.DeepCopyObject().(client.Object)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e, out); err != nil {
		return nil, err
	}
	out.SetLabels(stringmaps.Overlay(existing.GetLabels(), desired.GetLabels()))
	out.SetAnnotations(stringmaps.Overlay(existing.GetAnnotations(), desired.GetAnnotations()))
	out.SetOwnerReferences(desired.GetOwnerReferences())
	return out, nil
}

// copyInto hands from, which the caller no longer uses, over to to, so
// that the desired object holds what the API server has. Objects of the
// same Go type, the controllers' case, are handed over by assignment,
// without a round trip through unstructured maps; others (a typed object
// read past the cache for an unstructured desired one) are converted.
func copyInto(from, to client.Object) error {
	src, dst := reflect.ValueOf(from), reflect.ValueOf(to)
	if src.Type() == dst.Type() {
		dst.Elem().Set(src.Elem())
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(from)
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u, to)
}

// getLive reads obj from the API server, past the cache: controller-runtime's
// client does not cache unstructured objects unless told to, and the
// manager does not tell it to.
func getLive(ctx context.Context, c client.Client, like client.Object) (client.Object, error) {
	gvk, err := c.GroupVersionKindFor(like)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(like), u); err != nil {
		return nil, err
	}
	if _, ok := like.(*unstructured.Unstructured); ok {
		// A kind the scheme may not know, such as a PodMonitor.
		return u, nil
	}
	obj, err := c.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, err
	}
	return obj.(client.Object), nil
}

// KindOf names the kind of obj as the client's scheme knows it, such as "Deployment".
func KindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}

func describe(c client.Client, obj client.Object) string {
	return KindOf(c, obj) + " " + client.ObjectKeyFromObject(obj).String()
}
