package apply

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// typedSubset is isSubset's comparison of the fields outside metadata and
// status, made on desired and existing as they are, without converting
// both to unstructured maps first: converting was the larger part of a
// steady-state reconcile's CPU (every reconcile compares every child). It
// follows the converter's rules, so that both always agree (a fuzz test
// holds them to it): a field is set when the converter would write it
// (omitempty and omitzero leave empty ones out), a nil pointer, map or
// slice sets nothing, maps match key by key, lists element by element at
// equal length, and a type with its own converter (Quantity, Time,
// IntOrString) is compared in its converted form.
//
// ok is false when the objects are not of one struct type or hold a kind
// the comparison does not cover (interfaces, arrays); the caller then
// compares unstructured maps.
func typedSubset(desired, existing client.Object) (same, ok bool) {
	d, e := reflect.ValueOf(desired), reflect.ValueOf(existing)
	if d.Type() != e.Type() || d.Kind() != reflect.Pointer || d.Elem().Kind() != reflect.Struct || d.IsNil() || e.IsNil() {
		return false, false
	}
	var c comparer
	same = c.fields(d.Elem(), e.Elem(), true)
	return same, !c.unsupported
}

// comparer walks desired and existing together.
type comparer struct {
	// unsupported is set when the walk met a kind it does not cover.
	unsupported bool
}

// topLevelSkipped are the top-level fields isSubset leaves to its own
// metadata comparison or does not compare.
var topLevelSkipped = map[string]bool{"metadata": true, "status": true, "apiVersion": true, "kind": true}

// fields compares the fields of the structs d and e (e is invalid when
// existing has no such struct: an inlined nil pointer). top is set for the
// object itself and its inlined structs.
func (c *comparer) fields(d, e reflect.Value, top bool) bool {
	for i, f := range fieldsOf(d.Type()) {
		dv := d.Field(i)
		if f.skip || f.omitted(dv) {
			continue
		}
		var ev reflect.Value
		if e.IsValid() {
			ev = e.Field(i)
		}
		if f.inline {
			if !c.inlined(dv, ev, top) {
				return false
			}
			continue
		}
		if top && topLevelSkipped[f.name] {
			continue
		}
		if ev.IsValid() && f.omitted(ev) {
			ev = reflect.Value{}
		}
		if !c.sub(dv, ev) {
			return false
		}
	}
	return true
}

// inlined compares an inlined field, whose fields the converter writes
// beside its parent's.
func (c *comparer) inlined(d, e reflect.Value, top bool) bool {
	if d.Kind() == reflect.Pointer {
		if d.IsNil() {
			return true
		}
		d = d.Elem()
		if e.IsValid() {
			if e.IsNil() {
				e = reflect.Value{}
			} else {
				e = e.Elem()
			}
		}
	}
	if d.Kind() != reflect.Struct || value.TypeReflectEntryOf(d.Type()).CanConvertToUnstructured() {
		c.unsupported = true
		return false
	}
	return c.fields(d, e, top)
}

// sub reports whether d, which the converter writes, matches e, invalid
// when the converter writes nothing or nil there.
func (c *comparer) sub(d, e reflect.Value) bool {
	if e.IsValid() && nilable(e.Kind()) && e.IsNil() {
		e = reflect.Value{}
	}
	if nilable(d.Kind()) && d.IsNil() {
		return true // nil sets nothing
	}
	switch d.Type() {
	case quantityType:
		return e.IsValid() && sameQuantity(valueOf[resource.Quantity](d), valueOf[resource.Quantity](e))
	case resourceListType:
		if !e.IsValid() {
			return d.Len() == 0
		}
		return sameResources(d.Interface().(corev1.ResourceList), e.Interface().(corev1.ResourceList))
	case intOrStringType:
		if same, known := sameIntOrString(d, e); known {
			return same
		}
	}
	if entry := value.TypeReflectEntryOf(d.Type()); entry.CanConvertToUnstructured() {
		du, err := entry.ToUnstructured(d)
		if err != nil {
			c.unsupported = true
			return false
		}
		var eu any
		if e.IsValid() {
			if eu, err = entry.ToUnstructured(e); err != nil {
				c.unsupported = true
				return false
			}
		}
		return subset(du, eu)
	}
	switch d.Kind() {
	case reflect.Pointer:
		if e.IsValid() {
			e = e.Elem()
		}
		return c.sub(d.Elem(), e)
	case reflect.Map:
		if !e.IsValid() {
			return d.Len() == 0
		}
		for it := d.MapRange(); it.Next(); {
			if !c.sub(it.Value(), e.MapIndex(it.Key())) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if d.Type().Elem().Kind() == reflect.Uint8 {
			return e.IsValid() && bytes.Equal(d.Bytes(), e.Bytes())
		}
		if !e.IsValid() {
			return d.Len() == 0
		}
		if d.Len() != e.Len() {
			return false
		}
		for i := range d.Len() {
			if !c.sub(d.Index(i), e.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if !e.IsValid() {
			return !c.writesKeys(d)
		}
		return c.fields(d, e, false)
	case reflect.String:
		return e.IsValid() && d.String() == e.String()
	case reflect.Bool:
		return e.IsValid() && d.Bool() == e.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return e.IsValid() && d.Int() == e.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return e.IsValid() && d.Uint() == e.Uint()
	case reflect.Float32, reflect.Float64:
		return e.IsValid() && d.Float() == e.Float()
	default:
		c.unsupported = true
		return false
	}
}

// The types with their own converter that every pod template holds, and
// the map of them: the converter writes them through their String or
// MarshalJSON, and reflect copies each map entry it visits to the heap, so
// sub compares them as their converted forms would compare, without making
// those forms where it can (a comparison of a Memcached's Deployment: 73
// allocations, 11 KB, before).
var (
	quantityType     = reflect.TypeFor[resource.Quantity]()
	resourceListType = reflect.TypeFor[corev1.ResourceList]()
	intOrStringType  = reflect.TypeFor[intstr.IntOrString]()
)

// valueOf returns the T that v holds, through its address where it has one
// so that it is not boxed on the heap.
func valueOf[T any](v reflect.Value) T {
	if v.CanAddr() {
		return *v.Addr().Interface().(*T)
	}
	return v.Interface().(T)
}

// sameQuantity reports whether the converter writes d and e as the same
// string, their canonical forms. That form follows from the value and the
// format alone, so quantities of one format compare by value, without
// making it (String makes and keeps it only for some parsed quantities:
// not for 128Mi, say). Both are copies, so what String keeps stays here.
func sameQuantity(d, e resource.Quantity) bool {
	if d.Format == e.Format {
		return d.Cmp(e) == 0
	}
	return d.String() == e.String()
}

// sameResources reports whether each quantity of d is in e and written as
// the same string there.
func sameResources(d, e corev1.ResourceList) bool {
	for name, dq := range d {
		eq, ok := e[name]
		if !ok || !sameQuantity(dq, eq) {
			return false
		}
	}
	return true
}

// sameIntOrString reports whether the IntOrStrings d and e are written as
// the same number or string (e invalid: written as nothing). known is
// false for a type the converter cannot write, which sub then reports.
func sameIntOrString(d, e reflect.Value) (same, known bool) {
	di := valueOf[intstr.IntOrString](d)
	if di.Type != intstr.Int && di.Type != intstr.String {
		return false, false
	}
	if !e.IsValid() {
		return false, true
	}
	ei := valueOf[intstr.IntOrString](e)
	switch {
	case ei.Type != di.Type:
		return false, ei.Type == intstr.Int || ei.Type == intstr.String
	case di.Type == intstr.Int:
		return di.IntVal == ei.IntVal, true
	default:
		return di.StrVal == ei.StrVal, true
	}
}

// writesKeys reports whether the converter writes any key for the struct
// d: a struct matches a missing value only when its map would be empty.
func (c *comparer) writesKeys(d reflect.Value) bool {
	for i, f := range fieldsOf(d.Type()) {
		dv := d.Field(i)
		if f.skip || f.omitted(dv) {
			continue
		}
		if !f.inline {
			return true
		}
		if dv.Kind() == reflect.Pointer {
			if dv.IsNil() {
				continue
			}
			dv = dv.Elem()
		}
		if dv.Kind() != reflect.Struct {
			c.unsupported = true
			return true
		}
		if c.writesKeys(dv) {
			return true
		}
	}
	return false
}

func nilable(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return true
	}
	return false
}

// field is how the converter writes one struct field.
type field struct {
	name string
	// skip is set for json:"-" and unexported fields.
	skip bool
	// inline is set for fields whose own fields are written beside their
	// parent's.
	inline    bool
	omitempty bool
	omitzero  func(reflect.Value) bool
}

// omitted reports whether the converter leaves the field with value v out.
func (f field) omitted(v reflect.Value) bool {
	return (f.omitempty && isEmpty(v)) || (f.omitzero != nil && f.omitzero(v))
}

// isEmpty is the converter's test for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Map, reflect.Slice:
		return v.IsNil() || v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// fieldCache holds fieldsOf's answer per struct type.
var fieldCache sync.Map

// fieldsOf returns how the converter writes each field of the struct type t.
func fieldsOf(t reflect.Type) []field {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.([]field)
	}
	out := make([]field, t.NumField())
	for i := range out {
		sf := t.Field(i)
		f := &out[i]
		items := strings.Split(sf.Tag.Get("json"), ",")
		if (!sf.IsExported() && !sf.Anonymous) || items[0] == "-" {
			f.skip = true
			continue
		}
		// An embedded field without a name of its own is inlined, as
		// encoding/json does (Go before 1.27 has no ",inline" directive).
		f.name = items[0]
		if f.name == "" {
			if sf.Anonymous {
				f.inline = true
			} else {
				f.name = sf.Name
			}
		}
		f.omitempty = slices.Contains(items[1:], "omitempty")
		if slices.Contains(items[1:], "omitzero") {
			f.omitzero = value.OmitZeroFunc(sf.Type)
		}
	}
	fieldCache.Store(t, out)
	return out
}
