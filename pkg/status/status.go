// Package status writes an object's status only when it changed.
//
// A Patcher remembers the object as it was read. Patch computes the JSON merge
// patch from that snapshot's status to the object's current one and sends it
// to the status subresource; when the status is unchanged it sends nothing,
// so a reconcile at steady state makes no API write.
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Patcher writes the status difference between the object as read and the
// object as the reconcile left it.
type Patcher struct {
	client client.Client
	before client.Object
	writes *Writes
}

// NewPatcher snapshots obj. Call it right after the object is read, before
// the reconcile changes anything.
func NewPatcher(c client.Client, obj client.Object) *Patcher {
	return &Patcher{client: c, before: obj.DeepCopyObject().(client.Object)}
}

// Patch writes obj's status if it differs from the snapshot and reports
// whether it wrote. The snapshot then moves to obj, so a second Patch without
// changes writes nothing.
func (p *Patcher) Patch(ctx context.Context, obj client.Object) (bool, error) {
	if statusUnchanged(p.before, obj) {
		return false, nil
	}
	patch, err := statusPatch(p.before, obj)
	if err != nil || patch == nil {
		return false, err
	}
	if err := p.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return false, fmt.Errorf("patching status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	// At debug level every status write and what it changed is in the log,
	// to find the cause of writes that should not be there.
	log.FromContext(ctx).V(1).Info("status written", "patch", string(patch), "resourceVersion", obj.GetResourceVersion())
	p.before = obj.DeepCopyObject().(client.Object)
	if p.writes != nil {
		p.writes.record(obj)
	}
	return true, nil
}

// statusUnchanged reports whether before and after, typed objects with a
// Status field, hold semantically equal statuses. Most reconciles change
// nothing, and comparing the field spares marshalling both objects whole
// to find that out; unstructured objects go to statusPatch.
func statusUnchanged(before, after client.Object) bool {
	bs, as, ok := statusFields(before, after)
	return ok && equality.Semantic.DeepEqual(bs.Interface(), as.Interface())
}

// statusFields returns the Status fields of before and after when both are
// pointers to the same struct type with such a field. The field is found
// by its Go name, which every API type of this project and of Kubernetes
// serialises as "status".
func statusFields(before, after client.Object) (bs, as reflect.Value, ok bool) {
	b, a := reflect.ValueOf(before), reflect.ValueOf(after)
	if b.Type() != a.Type() || b.Kind() != reflect.Pointer || b.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, reflect.Value{}, false
	}
	bs, as = b.Elem().FieldByName("Status"), a.Elem().FieldByName("Status")
	return bs, as, bs.IsValid() && as.IsValid()
}

// statusPatch returns the merge patch {"status": ...} that turns before's
// status into after's, or nil when the status is the same. Of a typed
// object only the two statuses are marshalled; an unstructured one is
// diffed whole and the status part kept.
func statusPatch(before, after client.Object) ([]byte, error) {
	var st json.RawMessage
	if bs, as, ok := statusFields(before, after); ok {
		b, err := json.Marshal(bs.Interface())
		if err != nil {
			return nil, fmt.Errorf("computing status patch: %w", err)
		}
		a, err := json.Marshal(as.Interface())
		if err != nil {
			return nil, fmt.Errorf("computing status patch: %w", err)
		}
		if st, err = jsonpatch.CreateMergePatch(b, a); err != nil {
			return nil, fmt.Errorf("computing status patch: %w", err)
		}
		if string(st) == "{}" {
			return nil, nil
		}
	} else {
		full, err := client.MergeFrom(before).Data(after)
		if err != nil {
			return nil, fmt.Errorf("computing status patch: %w", err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(full, &fields); err != nil {
			return nil, fmt.Errorf("decoding status patch: %w", err)
		}
		var found bool
		if st, found = fields["status"]; !found {
			return nil, nil
		}
	}
	return json.Marshal(map[string]json.RawMessage{"status": st})
}
