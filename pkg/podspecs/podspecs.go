// Package podspecs lets the manager's cache hold the parts of pod specs
// that many objects have in common once. The Deployments (and
// StatefulSets, Jobs) of many custom resources of one kind mostly run the
// very same containers, and their pod specs were the larger part of the
// cache's memory per custom resource: each arrives decoded on its own,
// every container, probe, port and resource list allocated again.
//
// A Table is used from the cache's transform, which runs on every object
// before the informer stores it. Objects in the cache are never changed in
// place (every read from it is a deep copy), so equal pod specs may share
// their parts there.
package podspecs

import (
	"container/list"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultSize is how many distinct pod spec parts a Table remembers.
const DefaultSize = 256

// Table remembers up to its size of distinct pod spec parts (the
// containers, the init containers, the volumes, the pod's security context
// and tolerations), the most recently seen, each under its protobuf
// encoding (deterministic: map keys are sorted), so that an equal part of
// a later spec can share the first one's memory. The parts are interned one
// by one because the rest of a spec is often per object (an anti-affinity
// to the pods of the same custom resource). A part the table no longer
// remembers stays shared by the objects that hold it; only later ones get
// a copy of their own. The zero value is not usable: use New.
type Table struct {
	mu    sync.Mutex
	size  int
	byKey map[string]*list.Element
	// recent holds *entry values, the most recently seen first.
	recent *list.List
}

type entry struct {
	key string
	// part is a pod spec with only the interned part set.
	part corev1.PodSpec
}

// part is one part of a pod spec: how to copy it from one spec to another,
// and whether a spec has it.
type part struct {
	copy func(from, to *corev1.PodSpec)
	set  func(spec *corev1.PodSpec) bool
}

// parts are the parts of a pod spec that are interned, each one on its
// own: the ones that take memory and are mostly the same across objects.
var parts = []part{
	{
		copy: func(from, to *corev1.PodSpec) { to.Containers = from.Containers },
		set:  func(spec *corev1.PodSpec) bool { return len(spec.Containers) > 0 },
	},
	{
		copy: func(from, to *corev1.PodSpec) { to.InitContainers = from.InitContainers },
		set:  func(spec *corev1.PodSpec) bool { return len(spec.InitContainers) > 0 },
	},
	{
		copy: func(from, to *corev1.PodSpec) { to.Volumes = from.Volumes },
		set:  func(spec *corev1.PodSpec) bool { return len(spec.Volumes) > 0 },
	},
	{
		copy: func(from, to *corev1.PodSpec) { to.SecurityContext = from.SecurityContext },
		set:  func(spec *corev1.PodSpec) bool { return spec.SecurityContext != nil },
	},
	{
		copy: func(from, to *corev1.PodSpec) { to.Tolerations = from.Tolerations },
		set:  func(spec *corev1.PodSpec) bool { return len(spec.Tolerations) > 0 },
	},
}

// New returns a Table that remembers up to size pod spec parts.
func New(size int) *Table {
	return &Table{size: max(size, 1), byKey: map[string]*list.Element{}, recent: list.New()}
}

// Intern makes each part of spec share the memory of an equal part seen
// before, or remembers it as the one that later equal parts share. It
// returns how many of spec's parts now share an earlier spec's.
func (t *Table) Intern(spec *corev1.PodSpec) int {
	shared := 0
	for _, p := range parts {
		if !p.set(spec) {
			continue
		}
		var only corev1.PodSpec
		p.copy(spec, &only)
		encoded, err := only.Marshal()
		if err != nil {
			continue // left as it is: sharing is only a saving
		}
		// Each part is encoded under its own field number, so equal
		// encodings are equal parts of the same kind.
		if t.intern(string(encoded), &only) {
			p.copy(&only, spec)
			shared++
		}
	}
	return shared
}

// intern sets *only to the part remembered under key and reports true, or
// remembers *only under key and reports false.
func (t *Table) intern(key string, only *corev1.PodSpec) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.byKey[key]; ok {
		t.recent.MoveToFront(e)
		*only = e.Value.(*entry).part
		return true
	}
	t.byKey[key] = t.recent.PushFront(&entry{key: key, part: *only})
	if t.recent.Len() > t.size {
		oldest := t.recent.Back()
		t.recent.Remove(oldest)
		delete(t.byKey, oldest.Value.(*entry).key)
	}
	return false
}

// Len is how many pod spec parts the table remembers.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.recent.Len()
}

// InternObject interns the pod spec of the template of obj when it is a
// Deployment, StatefulSet, DaemonSet or Job, and leaves any other object
// as it is.
func (t *Table) InternObject(obj any) {
	if _, template := Workload(obj); template != nil {
		t.Intern(&template.Spec)
	}
}

// Workload returns the pod selector and the pod template of obj when it is
// a Deployment, StatefulSet, DaemonSet or Job, and nils for any other
// object. Both point into obj.
func Workload(obj any) (*metav1.LabelSelector, *corev1.PodTemplateSpec) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Spec.Selector, &o.Spec.Template
	case *appsv1.StatefulSet:
		return o.Spec.Selector, &o.Spec.Template
	case *appsv1.DaemonSet:
		return o.Spec.Selector, &o.Spec.Template
	case *batchv1.Job:
		return o.Spec.Selector, &o.Spec.Template
	}
	return nil, nil
}
