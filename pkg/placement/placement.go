// Package placement applies a custom resource's spec.podTemplate (the
// shared API type apis/shared.PodTemplate) to the pod template of the
// child that runs its pods. Every controller calls Apply, so that the four
// kinds read the field the same way.
package placement

import (
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/pkg/naming"
	"github.com/multi-operator/multi-operator/pkg/stringmaps"
)

// HashAnnotation is the annotation that records, on each child, the
// podTemplate its pod template was built from (Hash). Children are compared with what the controller
// wants as a subset, so a field removed from podTemplate alone would never
// show as drift; the changed hash does, and the update then replaces the
// child's whole spec. It is on the child's metadata, not the pod
// template's, so adding it to an existing child rolls no pod.
const HashAnnotation = "multi-operator.devsectim.io/pod-template-hash"

// Empty reports whether pt sets nothing: nil, or an empty object such as
// one a tool emptied.
func Empty(pt *shared.PodTemplate) bool {
	if pt == nil {
		return true
	}
	raw, err := json.Marshal(pt)
	return err == nil && string(raw) == "{}"
}

// Hash is a short hash of pt, "none" when it is Empty. encoding/json sorts
// map keys, so equal templates hash equally.
func Hash(pt *shared.PodTemplate) string {
	if Empty(pt) {
		return "none"
	}
	// A struct of strings, numbers, maps and slices always encodes.
	raw, _ := json.Marshal(pt)
	return naming.Hash(string(raw))
}

// Apply sets pt's placement on template, which holds the controller's own
// labels, annotations and defaults:
//
//   - labels and annotations are added, and the template's own win on a
//     conflict (admission refuses the selector labels already; this keeps
//     the selector intact even for an object stored before that rule);
//   - nodeSelector, tolerations, priorityClassName and imagePullSecrets
//     are set when given;
//   - affinity and topologySpreadConstraints, when given, replace the
//     controller's defaults whole, each on its own: merging a user's rule
//     with a default could make both unsatisfiable, and a user who wants
//     the default as well can write it.
//
// child, the object that holds template, gets HashAnnotation. A nil pt
// leaves template as it is. Nothing of pt is aliased.
func Apply(child metav1.Object, template *corev1.PodTemplateSpec, pt *shared.PodTemplate) {
	annotations := child.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[HashAnnotation] = Hash(pt)
	child.SetAnnotations(annotations)
	if pt == nil {
		return
	}
	template.Labels = stringmaps.Overlay(pt.Labels, template.Labels)
	template.Annotations = stringmaps.Overlay(pt.Annotations, template.Annotations)

	spec := &template.Spec
	if len(pt.NodeSelector) > 0 {
		spec.NodeSelector = maps.Clone(pt.NodeSelector)
	}
	if t := pt.CoreTolerations(); t != nil {
		spec.Tolerations = t
	}
	if pt.Affinity != nil {
		spec.Affinity = pt.Affinity.Core()
	}
	if c := pt.CoreTopologySpreadConstraints(); c != nil {
		spec.TopologySpreadConstraints = c
	}
	if pt.PriorityClassName != "" {
		spec.PriorityClassName = pt.PriorityClassName
	}
	if s := pt.CoreImagePullSecrets(); s != nil {
		spec.ImagePullSecrets = s
	}
}
