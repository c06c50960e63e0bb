package builders

import (
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/multi-operator/multi-operator/apis/shared"
)

// PodTemplate is a spec.podTemplate that sets every field, each list and
// map with one entry, so that a test sees every part reach the pods.
func PodTemplate() *shared.PodTemplate {
	selector := &shared.LabelSelector{
		MatchLabels:      map[string]string{"app": "web"},
		MatchExpressions: []shared.LabelSelectorRequirement{{Key: "tier", Operator: "In", Values: []string{"cache"}}},
	}
	term := shared.PodAffinityTerm{
		LabelSelector:     selector,
		Namespaces:        []string{"web"},
		TopologyKey:       "kubernetes.io/hostname",
		NamespaceSelector: &shared.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
		MatchLabelKeys:    []string{"pod-template-hash"},
		MismatchLabelKeys: []string{"tenant"},
	}
	nodeTerm := shared.NodeSelectorTerm{
		MatchExpressions: []shared.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"amd64"}}},
		MatchFields:      []shared.NodeSelectorRequirement{{Key: "metadata.name", Operator: "NotIn", Values: []string{"node-1"}}},
	}
	return &shared.PodTemplate{
		Labels:       map[string]string{"team": "a"},
		Annotations:  map[string]string{"example.com/owner": "team-a"},
		NodeSelector: map[string]string{"pool": "cache"},
		Tolerations:  []shared.Toleration{{Key: "dedicated", Operator: "Equal", Value: "cache", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](60)}},
		Affinity: &shared.Affinity{
			NodeAffinity: &shared.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution:  &shared.NodeSelector{NodeSelectorTerms: []shared.NodeSelectorTerm{nodeTerm}},
				PreferredDuringSchedulingIgnoredDuringExecution: []shared.PreferredSchedulingTerm{{Weight: 10, Preference: nodeTerm}},
			},
			PodAffinity: &shared.PodAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []shared.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: term}},
			},
			PodAntiAffinity: &shared.PodAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []shared.PodAffinityTerm{term},
			},
		},
		TopologySpreadConstraints: []shared.TopologySpreadConstraint{{
			MaxSkew:            2,
			TopologyKey:        "topology.kubernetes.io/zone",
			WhenUnsatisfiable:  "DoNotSchedule",
			LabelSelector:      selector,
			MinDomains:         ptr.To[int32](2),
			NodeAffinityPolicy: ptr.To("Honor"),
			NodeTaintsPolicy:   ptr.To("Ignore"),
			MatchLabelKeys:     []string{"pod-template-hash"},
		}},
		PriorityClassName: "tenant-high",
		ImagePullSecrets:  []shared.LocalObjectReference{{Name: "registry"}},
	}
}

// ExpectPodTemplate checks that template carries everything PodTemplate
// sets, and still every label of selector: the controller's own labels
// win over the user's.
func ExpectPodTemplate(g gomega.Gomega, template corev1.PodTemplateSpec, selector map[string]string) {
	pt := PodTemplate()
	g.ExpectWithOffset(1, template.Labels).To(gomega.HaveKeyWithValue("team", "a"))
	for k, v := range selector {
		g.ExpectWithOffset(1, template.Labels).To(gomega.HaveKeyWithValue(k, v), "the selector still matches the pods")
	}
	g.ExpectWithOffset(1, template.Annotations).To(gomega.HaveKeyWithValue("example.com/owner", "team-a"))
	spec := template.Spec
	g.ExpectWithOffset(1, spec.NodeSelector).To(gomega.Equal(pt.NodeSelector))
	g.ExpectWithOffset(1, spec.Tolerations).To(gomega.Equal(pt.CoreTolerations()))
	g.ExpectWithOffset(1, spec.Affinity).To(gomega.Equal(pt.Affinity.Core()), "the default affinity is replaced")
	g.ExpectWithOffset(1, spec.TopologySpreadConstraints).To(gomega.Equal(pt.CoreTopologySpreadConstraints()), "any default spread is replaced")
	g.ExpectWithOffset(1, spec.PriorityClassName).To(gomega.Equal(pt.PriorityClassName))
	g.ExpectWithOffset(1, spec.ImagePullSecrets).To(gomega.Equal(pt.CoreImagePullSecrets()))
}
