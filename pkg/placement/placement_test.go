package placement_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/pkg/placement"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// controllerTemplate is a pod template as a controller builds it: its own
// labels and annotation, and a default anti-affinity and zone spread.
func controllerTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": "c"},
			Annotations: map[string]string{"multi-operator.dev/config": "abc"},
		},
		Spec: corev1.PodSpec{
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100}},
			}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone}},
		},
	}
}

func TestApply(t *testing.T) {
	full := builders.PodTemplate()
	for _, tc := range []struct {
		name string
		pt   *shared.PodTemplate
		want func(*corev1.PodTemplateSpec)
	}{
		{name: "none keeps the controller's template", pt: nil, want: func(*corev1.PodTemplateSpec) {}},
		{name: "an empty one keeps it too", pt: &shared.PodTemplate{}, want: func(*corev1.PodTemplateSpec) {}},
		{name: "every field", pt: full, want: func(want *corev1.PodTemplateSpec) {
			want.Labels["team"] = "a"
			want.Annotations["example.com/owner"] = "team-a"
			want.Spec.NodeSelector = map[string]string{"pool": "cache"}
			want.Spec.Tolerations = full.CoreTolerations()
			want.Spec.Affinity = full.Affinity.Core()
			want.Spec.TopologySpreadConstraints = full.CoreTopologySpreadConstraints()
			want.Spec.PriorityClassName = "tenant-high"
			want.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
		}},
		{name: "the controller's labels and annotations win", pt: &shared.PodTemplate{
			Labels:      map[string]string{"app.kubernetes.io/name": "other", "team": "a"},
			Annotations: map[string]string{"multi-operator.dev/config": "forged"},
		}, want: func(want *corev1.PodTemplateSpec) { want.Labels["team"] = "a" }},
		{name: "affinity alone replaces the default affinity and keeps the spread", pt: &shared.PodTemplate{
			Affinity: &shared.Affinity{NodeAffinity: &shared.NodeAffinity{}},
		}, want: func(want *corev1.PodTemplateSpec) {
			want.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		}},
		{name: "an empty affinity removes the default", pt: &shared.PodTemplate{Affinity: &shared.Affinity{}},
			want: func(want *corev1.PodTemplateSpec) { want.Spec.Affinity = &corev1.Affinity{} }},
		{name: "spread alone replaces the default spread and keeps the affinity", pt: &shared.PodTemplate{
			TopologySpreadConstraints: []shared.TopologySpreadConstraint{{MaxSkew: 3, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: "DoNotSchedule"}},
		}, want: func(want *corev1.PodTemplateSpec) {
			want.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 3, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := controllerTemplate()
			child := &metav1.ObjectMeta{Annotations: map[string]string{"owner": "kept"}}
			placement.Apply(child, got, tc.pt)
			want := controllerTemplate()
			tc.want(want)
			g.Expect(got).To(Equal(want))
			g.Expect(child.Annotations).To(Equal(map[string]string{"owner": "kept", placement.HashAnnotation: placement.Hash(tc.pt)}))
		})
	}
}

// The template shares no memory with the custom resource, whose copy in
// the cache must not change when a builder changes its result.
func TestApplyDoesNotAlias(t *testing.T) {
	g := NewWithT(t)
	pt := builders.PodTemplate()
	template := &corev1.PodTemplateSpec{}
	placement.Apply(&metav1.ObjectMeta{}, template, pt)
	template.Labels["team"] = "b"
	template.Annotations["example.com/owner"] = "b"
	template.Spec.NodeSelector["pool"] = "b"
	template.Spec.Tolerations[0].Key = "b"
	template.Spec.ImagePullSecrets[0].Name = "b"
	g.Expect(pt).To(Equal(builders.PodTemplate()))
}

// Without labels or annotations of either side, the template keeps nil
// maps, so that an unchanged spec applies no change.
func TestApplyKeepsUnsetMapsUnset(t *testing.T) {
	g := NewWithT(t)
	template := &corev1.PodTemplateSpec{}
	placement.Apply(&metav1.ObjectMeta{}, template, &shared.PodTemplate{PriorityClassName: "p"})
	g.Expect(template.Labels).To(BeNil())
	g.Expect(template.Annotations).To(BeNil())
	g.Expect(template.Spec.PriorityClassName).To(Equal("p"))
}

// The hash tells every podTemplate apart, removals included, and an empty
// one from none not at all: a child's annotation then changes exactly
// when its pods must.
func TestHashChangesWithEveryField(t *testing.T) {
	g := NewWithT(t)
	g.Expect(placement.Hash(nil)).To(Equal("none"))
	g.Expect(placement.Hash(&shared.PodTemplate{})).To(Equal("none"), "an emptied podTemplate is none")
	g.Expect(placement.Empty(&shared.PodTemplate{NodeSelector: map[string]string{}})).To(BeTrue())
	seen := map[string]string{}
	for name, pt := range map[string]*shared.PodTemplate{
		"one selector":  {NodeSelector: map[string]string{"zone": "a"}},
		"two selectors": {NodeSelector: map[string]string{"zone": "a", "disk": "ssd"}},
		"a label":       {Labels: map[string]string{"team": "a"}},
		"an annotation": {Annotations: map[string]string{"team": "a"}},
		"a priority":    {PriorityClassName: "high"},
		"a pull secret": {ImagePullSecrets: []shared.LocalObjectReference{{Name: "reg"}}},
		"an affinity":   {Affinity: &shared.Affinity{}},
	} {
		h := placement.Hash(pt)
		g.Expect(h).NotTo(Equal("none"), name)
		g.Expect(seen).NotTo(HaveKey(h), "%s hashes like %s", name, seen[h])
		seen[h] = name
		g.Expect(placement.Hash(pt.DeepCopy())).To(Equal(h), "the same template, the same hash")
	}
}
