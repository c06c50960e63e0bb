// Package intern lets the objects in the manager's cache share the memory
// of what they have in common. Each object arrives decoded on its own, every
// string and map allocated again, and its metadata was the larger part of
// the cache's memory per custom resource: a Deployment holds four label
// maps (its labels, its selector, its pods' labels and their anti-affinity
// selector) of which two pairs are equal, and the same label keys, owner
// kinds and condition reasons recur in every object.
//
// A Table is used from the cache's transform, which runs on every object
// before the informer stores it. Objects in the cache are never changed in
// place (every read from it is a deep copy), so the strings and maps of
// cached objects may be shared, within an object and across objects.
package intern

import (
	"encoding/binary"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/pkg/podspecs"
)

// DefaultSize is how many distinct strings, and how many distinct maps, a
// Table remembers.
const DefaultSize = 2048

// Table remembers up to its size of distinct strings and of distinct string
// maps, so that an equal string or map of a later object (or of the same
// object) shares the first one's memory. When either is full it starts
// over: what recurs in every object is remembered again at once, and the
// table's own memory stays bounded however many objects pass through it.
// The zero value is not usable: use New.
type Table struct {
	mu      sync.Mutex
	size    int
	strings map[string]string
	// maps are the remembered maps under their keys and values, sorted and
	// joined (see appendMapKey).
	maps map[string]map[string]string
}

// New returns a Table that remembers up to size strings and size maps.
func New(size int) *Table {
	size = max(size, 1)
	return &Table{size: size, strings: map[string]string{}, maps: map[string]map[string]string{}}
}

// String returns the remembered string equal to s, or remembers s.
func (t *Table) String(s string) string {
	if s == "" {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stringLocked(s)
}

func (t *Table) stringLocked(s string) string {
	if shared, ok := t.strings[s]; ok {
		return shared
	}
	if len(t.strings) >= t.size {
		clear(t.strings)
	}
	t.strings[s] = s
	return s
}

// Len is how many strings and how many maps the table remembers.
func (t *Table) Len() (strings, maps int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.strings), len(t.maps)
}

// Map returns the remembered map equal to m, or remembers a copy of m made
// of remembered strings; nil when m is empty. The map returned must not be
// changed: other objects hold it too.
func (t *Table) Map(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	var keyBuf [512]byte
	key := appendMapKey(keyBuf[:0], m)
	t.mu.Lock()
	defer t.mu.Unlock()
	// Looking a map up by string(key) copies nothing; only a map
	// remembered keeps a copy of its key.
	if shared, ok := t.maps[string(key)]; ok {
		return shared
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[t.stringLocked(k)] = t.stringLocked(v)
	}
	if len(t.maps) >= t.size {
		clear(t.maps)
	}
	t.maps[string(key)] = out
	return out
}

// appendMapKey appends m's keys and values to b, in the order of the keys,
// each after its length, so that two maps have the same key exactly when
// they are equal (an annotation's value may hold any byte, a separator
// among them). The keys of a map of up to 16 are sorted on the stack and a
// key of up to 512 bytes is made there too: the transform makes one for
// every label map of every object the watches deliver.
func appendMapKey(b []byte, m map[string]string) []byte {
	var keyBuf [16]string
	keys := keyBuf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		v := m[k]
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

// Object makes obj share remembered strings and label maps. It knows the metadata of every object, the templates, selectors
// and conditions of the workload kinds, a Service's selector, and the
// conditions of any object with StatusConditions (the custom resources);
// anything else is left as it is.
func (t *Table) Object(obj any) {
	if o, ok := obj.(metav1.Object); ok {
		t.meta(o)
	}
	if selector, template := podspecs.Workload(obj); template != nil {
		t.workload(selector, template)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		each(o.Status.Conditions, func(c *appsv1.DeploymentCondition) {
			condition(t, &c.Type, &c.Status, &c.Reason, &c.Message)
		})
	case *appsv1.StatefulSet:
		each(o.Status.Conditions, func(c *appsv1.StatefulSetCondition) {
			condition(t, &c.Type, &c.Status, &c.Reason, &c.Message)
		})
	case *batchv1.Job:
		each(o.Status.Conditions, func(c *batchv1.JobCondition) {
			condition(t, &c.Type, &c.Status, &c.Reason, &c.Message)
		})
	case *corev1.Service:
		o.Spec.Selector = t.Map(o.Spec.Selector)
	}
	if o, ok := obj.(interface{ StatusConditions() *[]metav1.Condition }); ok {
		each(*o.StatusConditions(), func(c *metav1.Condition) {
			condition(t, &c.Type, &c.Status, &c.Reason, &c.Message)
		})
	}
}

// each calls intern with a pointer to each element of items, in place.
func each[T any](items []T, intern func(*T)) {
	for i := range items {
		intern(&items[i])
	}
}

// condition interns the strings of a condition of any kind.
func condition[Type, Status ~string](t *Table, conditionType *Type, status *Status, reason, message *string) {
	*conditionType, *status = Type(t.String(string(*conditionType))), Status(t.String(string(*status)))
	*reason, *message = t.String(*reason), t.String(*message)
}

// meta interns the namespace, labels, annotations, finalizers and owner
// references of o. Names and UIDs are left alone: they are the object's own.
func (t *Table) meta(o metav1.Object) {
	o.SetNamespace(t.String(o.GetNamespace()))
	if labels := o.GetLabels(); labels != nil {
		o.SetLabels(t.Map(labels))
	}
	if annotations := o.GetAnnotations(); annotations != nil {
		o.SetAnnotations(t.Map(annotations))
	}
	finalizers := o.GetFinalizers()
	for i := range finalizers {
		finalizers[i] = t.String(finalizers[i])
	}
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			r := &refs[i]
			r.APIVersion, r.Kind = t.String(r.APIVersion), t.String(r.Kind)
			r.Controller, r.BlockOwnerDeletion = shared(r.Controller), shared(r.BlockOwnerDeletion)
		}
		o.SetOwnerReferences(refs)
	}
}

// workload interns a workload's selector, pod template metadata and the
// label selectors of its pods' affinity and spread constraints.
func (t *Table) workload(selector *metav1.LabelSelector, template *corev1.PodTemplateSpec) {
	t.selector(selector)
	template.Labels = t.Map(template.Labels)
	template.Annotations = t.Map(template.Annotations)
	spec := &template.Spec
	spec.NodeSelector = t.Map(spec.NodeSelector)
	if a := spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			t.affinityTerms(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if a.PodAntiAffinity != nil {
			t.affinityTerms(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for i := range spec.TopologySpreadConstraints {
		c := &spec.TopologySpreadConstraints[i]
		c.TopologyKey = t.String(c.TopologyKey)
		t.selector(c.LabelSelector)
	}
}

func (t *Table) affinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
	for i := range required {
		t.affinityTerm(&required[i])
	}
	for i := range preferred {
		t.affinityTerm(&preferred[i].PodAffinityTerm)
	}
}

func (t *Table) affinityTerm(term *corev1.PodAffinityTerm) {
	term.TopologyKey = t.String(term.TopologyKey)
	t.selector(term.LabelSelector)
	t.selector(term.NamespaceSelector)
}

func (t *Table) selector(s *metav1.LabelSelector) {
	if s == nil {
		return
	}
	s.MatchLabels = t.Map(s.MatchLabels)
	for i := range s.MatchExpressions {
		e := &s.MatchExpressions[i]
		e.Key, e.Operator = t.String(e.Key), metav1.LabelSelectorOperator(t.String(string(e.Operator)))
		for j := range e.Values {
			e.Values[j] = t.String(e.Values[j])
		}
	}
}

var (
	sharedTrue, sharedFalse = true, false
)

// shared returns a pointer to a bool equal to *b that every object shares.
func shared(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	default:
		return &sharedFalse
	}
}
