package apis_test

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// withPodTemplate is each kind with spec.podTemplate set by change, from
// a template that sets every field.
var withPodTemplate = map[string]func(change func(*shared.PodTemplate)) client.Object{
	"RedisCluster": func(change func(*shared.PodTemplate)) client.Object {
		return redis(func(rc *cachev1.RedisCluster) { rc.Spec.PodTemplate = changed(change) })
	},
	"Memcached": func(change func(*shared.PodTemplate)) client.Object {
		m := builders.Memcached("", "").Size(1).Obj()
		m.Spec.PodTemplate = changed(change)
		return m
	},
	"WhaleSay": func(change func(*shared.PodTemplate)) client.Object {
		ws := whaleSay("hello", "")
		ws.Spec.PodTemplate = changed(change)
		return ws
	},
	"TDSet v2": func(change func(*shared.PodTemplate)) client.Object {
		return tdsetV2(func(s *schedulev2.TDSetSpec) { s.PodTemplate = changed(change) })
	},
	"TDSet v1": func(change func(*shared.PodTemplate)) client.Object {
		return tdsetV1(func(s *schedulev1.TDSetSpec) { s.PodTemplate = changed(change) })
	},
}

func changed(change func(*shared.PodTemplate)) *shared.PodTemplate {
	pt := builders.PodTemplate()
	change(pt)
	return pt
}

// many returns a map of n keys, each and its value of the given lengths.
func many(n, keyLength, valueLength int) map[string]string {
	m := map[string]string{}
	for i := range n {
		prefix := fmt.Sprintf("k%d-", i)
		m[prefix+strings.Repeat("k", keyLength-len(prefix))] = strings.Repeat("v", valueLength)
	}
	return m
}

// Every kind takes the same spec.podTemplate with the same bounds: each
// is created once with every field set, and refused a selector label.
func TestPodTemplateOnEveryKind(t *testing.T) {
	var rows []bound
	for kind, build := range withPodTemplate {
		rows = append(rows,
			bound{name: kind + " with every field", obj: build(func(*shared.PodTemplate) {})},
			bound{name: kind + " setting a selector label", obj: build(func(pt *shared.PodTemplate) {
				pt.Labels["app.kubernetes.io/instance"] = "other"
			}), refused: "podTemplate.labels cannot set app.kubernetes.io/name, app.kubernetes.io/instance"},
			bound{name: kind + " with 17 tolerations", obj: build(func(pt *shared.PodTemplate) {
				pt.Tolerations = make([]shared.Toleration, 17)
			}), refused: "must have at most 16 items"},
		)
	}
	expectBounds(t, rows)
}

// The bounds of spec.podTemplate, on one kind: each is accepted at its
// limit and refused past it with a message that names the limit.
func TestPodTemplateBounds(t *testing.T) {
	rc := withPodTemplate["RedisCluster"]
	const (
		tooMany16      = "must have at most 16 items"
		tooMany8       = "must have at most 8 items"
		labelLengths   = "podTemplate.labels: a key has at most 317 characters (a 253-character prefix, '/', and a 63-character name) and a value at most 63"
		unsupported    = "Unsupported value"
		weightAtMost   = "should be less than or equal to 100"
		matchLabelsAt  = "matchLabels: a key has at most 317 characters and a value at most 63"
		nodeValues     = "a node requirement takes values with In and NotIn, exactly one with Gt and Lt, and none with Exists and DoesNotExist"
		nodeFields     = "matchFields: a requirement on node fields takes key metadata.name, operator In or NotIn, and exactly one value"
		selectorValues = "a label selector requirement takes values with In and NotIn and none with Exists and DoesNotExist"
	)
	term := func(pt *shared.PodTemplate) *shared.PodAffinityTerm {
		return &pt.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	}
	expectBounds(t, []bound{
		{name: "16 labels at their longest", obj: rc(func(pt *shared.PodTemplate) { pt.Labels = many(16, 317, 63) })},
		{name: "17 labels", obj: rc(func(pt *shared.PodTemplate) { pt.Labels = many(17, 10, 1) }), refused: tooMany16},
		{name: "a label key of 318 characters", obj: rc(func(pt *shared.PodTemplate) { pt.Labels = many(1, 318, 1) }), refused: labelLengths},
		{name: "a label value of 64 characters", obj: rc(func(pt *shared.PodTemplate) { pt.Labels = many(1, 10, 64) }), refused: labelLengths},
		{name: "the label part-of", obj: rc(func(pt *shared.PodTemplate) { pt.Labels = map[string]string{"app.kubernetes.io/part-of": "x"} }), refused: "the operator selects its pods by them"},
		{name: "another app.kubernetes.io label", obj: rc(func(pt *shared.PodTemplate) { pt.Labels = map[string]string{"app.kubernetes.io/component": "cache"} })},

		{name: "16 annotations at their longest", obj: rc(func(pt *shared.PodTemplate) { pt.Annotations = many(16, 317, 4096) })},
		{name: "17 annotations", obj: rc(func(pt *shared.PodTemplate) { pt.Annotations = many(17, 10, 1) }), refused: tooMany16},
		{name: "an annotation of 4097 characters", obj: rc(func(pt *shared.PodTemplate) { pt.Annotations = many(1, 10, 4097) }), refused: "a value at most 4096"},
		{name: "an AppArmor annotation", obj: rc(func(pt *shared.PodTemplate) {
			pt.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/redis": "unconfined"}
		}), refused: "cannot set AppArmor or seccomp annotations"},
		{name: "a seccomp annotation", obj: rc(func(pt *shared.PodTemplate) {
			pt.Annotations = map[string]string{"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}
		}), refused: "cannot set AppArmor or seccomp annotations"},

		{name: "17 node labels", obj: rc(func(pt *shared.PodTemplate) { pt.NodeSelector = many(17, 10, 1) }), refused: tooMany16},
		{name: "a node label value of 64 characters", obj: rc(func(pt *shared.PodTemplate) { pt.NodeSelector = many(1, 10, 64) }), refused: "podTemplate.nodeSelector: a key has at most 317 characters and a value at most 63"},

		{name: "a toleration operator that does not exist", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0].Operator = "Maybe" }), refused: unsupported},
		{name: "a taint effect that does not exist", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0].Effect = "NoRun" }), refused: unsupported},
		{name: "a toleration without a key that is not Exists", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0].Key = "" }), refused: "a toleration without a key must have operator Exists"},
		{name: "a toleration of every taint", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0] = shared.Toleration{Operator: "Exists"} })},
		{name: "a toleration with Exists and a value", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0].Operator = "Exists" }), refused: "a toleration with operator Exists takes no value"},
		{name: "tolerationSeconds without NoExecute", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0].Effect = "NoSchedule" }), refused: "tolerationSeconds applies only to effect NoExecute"},
		{name: "a toleration key of 318 characters", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0].Key = strings.Repeat("k", 318) }), refused: tooLong + " 317"},
		{name: "a toleration value of 64 characters", obj: rc(func(pt *shared.PodTemplate) { pt.Tolerations[0].Value = strings.Repeat("v", 64) }), refused: tooLong + " 63"},

		{name: "9 node selector terms", obj: rc(func(pt *shared.PodTemplate) {
			r := pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			r.NodeSelectorTerms = make([]shared.NodeSelectorTerm, 9)
		}), refused: tooMany8},
		{name: "17 values of a node requirement", obj: rc(func(pt *shared.PodTemplate) {
			pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values = make([]string, 17)
		}), refused: tooMany16},
		{name: "a node operator that does not exist", obj: rc(func(pt *shared.PodTemplate) {
			pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Operator = "Like"
		}), refused: unsupported},
		{name: "a node requirement In without values", obj: rc(func(pt *shared.PodTemplate) {
			pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values = nil
		}), refused: nodeValues},
		{name: "a node requirement Exists with values", obj: rc(func(pt *shared.PodTemplate) {
			pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Operator = "Exists"
		}), refused: nodeValues},
		{name: "a node requirement Gt with two values", obj: rc(func(pt *shared.PodTemplate) {
			r := &pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
			r.Operator, r.Values = "Gt", []string{"1", "2"}
		}), refused: nodeValues},
		{name: "a node requirement Gt with one value", obj: rc(func(pt *shared.PodTemplate) {
			r := &pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
			r.Operator, r.Values = "Gt", []string{"1"}
		})},
		{name: "a node field requirement on a label", obj: rc(func(pt *shared.PodTemplate) {
			pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Key = "kubernetes.io/hostname"
		}), refused: nodeFields},
		{name: "a node field requirement Exists", obj: rc(func(pt *shared.PodTemplate) {
			r := &pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0]
			r.Operator, r.Values = "Exists", nil
		}), refused: nodeFields},
		{name: "a node field requirement with two values", obj: rc(func(pt *shared.PodTemplate) {
			r := &pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0]
			r.Values = []string{"node-1", "node-2"}
		}), refused: nodeFields},
		{name: "a node field requirement In one node", obj: rc(func(pt *shared.PodTemplate) {
			r := &pt.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0]
			r.Operator = "In"
		})},
		{name: "a node preference of weight 101", obj: rc(func(pt *shared.PodTemplate) {
			pt.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight = 101
		}), refused: weightAtMost},
		{name: "a pod preference of weight 101", obj: rc(func(pt *shared.PodTemplate) {
			pt.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight = 101
		}), refused: weightAtMost},
		{name: "9 required anti-affinity terms", obj: rc(func(pt *shared.PodTemplate) {
			a := pt.Affinity.PodAntiAffinity
			a.RequiredDuringSchedulingIgnoredDuringExecution = make([]shared.PodAffinityTerm, 9)
			for i := range a.RequiredDuringSchedulingIgnoredDuringExecution {
				a.RequiredDuringSchedulingIgnoredDuringExecution[i].TopologyKey = "kubernetes.io/hostname"
			}
		}), refused: tooMany8},
		{name: "17 match labels of a pod term", obj: rc(func(pt *shared.PodTemplate) { term(pt).LabelSelector.MatchLabels = many(17, 10, 1) }), refused: tooMany16},
		{name: "a match label value of 64 characters", obj: rc(func(pt *shared.PodTemplate) { term(pt).LabelSelector.MatchLabels = many(1, 10, 64) }), refused: matchLabelsAt},
		{name: "a selector operator that does not exist", obj: rc(func(pt *shared.PodTemplate) { term(pt).LabelSelector.MatchExpressions[0].Operator = "Gt" }), refused: unsupported},
		{name: "a selector requirement In without values", obj: rc(func(pt *shared.PodTemplate) { term(pt).LabelSelector.MatchExpressions[0].Values = nil }), refused: selectorValues},
		{name: "a selector requirement DoesNotExist with values", obj: rc(func(pt *shared.PodTemplate) { term(pt).LabelSelector.MatchExpressions[0].Operator = "DoesNotExist" }), refused: selectorValues},
		{name: "a selector requirement Exists", obj: rc(func(pt *shared.PodTemplate) {
			term(pt).LabelSelector.MatchExpressions[0] = shared.LabelSelectorRequirement{Key: "tier", Operator: "Exists"}
		})},
		{name: "a namespace of 64 characters", obj: rc(func(pt *shared.PodTemplate) { term(pt).Namespaces[0] = strings.Repeat("n", 64) }), refused: tooLong + " 63"},
		{name: "a topology key of 318 characters", obj: rc(func(pt *shared.PodTemplate) { term(pt).TopologyKey = strings.Repeat("t", 318) }), refused: tooLong + " 317"},
		{name: "9 match label keys", obj: rc(func(pt *shared.PodTemplate) { term(pt).MatchLabelKeys = make([]string, 9) }), refused: tooMany8},

		{name: "9 spread constraints", obj: rc(func(pt *shared.PodTemplate) {
			pt.TopologySpreadConstraints = make([]shared.TopologySpreadConstraint, 9)
			for i := range pt.TopologySpreadConstraints {
				pt.TopologySpreadConstraints[i] = shared.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "ScheduleAnyway"}
			}
		}), refused: tooMany8},
		{name: "a spread action that does not exist", obj: rc(func(pt *shared.PodTemplate) { pt.TopologySpreadConstraints[0].WhenUnsatisfiable = "Never" }), refused: unsupported},
		{name: "a node taints policy that does not exist", obj: rc(func(pt *shared.PodTemplate) { *pt.TopologySpreadConstraints[0].NodeTaintsPolicy = "Sometimes" }), refused: unsupported},
		{name: "a skew of 0", obj: rc(func(pt *shared.PodTemplate) { pt.TopologySpreadConstraints[0].MaxSkew = 0 }), refused: "should be greater than or equal to 1"},

		{name: "a priority class name of 254 characters", obj: rc(func(pt *shared.PodTemplate) { pt.PriorityClassName = strings.Repeat("p", 254) }), refused: tooLong + " 253"},
		{name: "9 image pull secrets", obj: rc(func(pt *shared.PodTemplate) {
			pt.ImagePullSecrets = make([]shared.LocalObjectReference, 9)
			for i := range pt.ImagePullSecrets {
				pt.ImagePullSecrets[i].Name = fmt.Sprintf("s%d", i)
			}
		}), refused: tooMany8},
		{name: "an image pull secret name of 254 characters", obj: rc(func(pt *shared.PodTemplate) { pt.ImagePullSecrets[0].Name = strings.Repeat("s", 254) }), refused: tooLong + " 253"},
	})
}
