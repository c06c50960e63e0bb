package shared

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conversions below are pure and return fresh memory: the result
// never aliases the custom resource it came from, so that a builder may
// change it freely.

// CoreTolerations converts the tolerations; nil when there are none.
func (p *PodTemplate) CoreTolerations() []corev1.Toleration {
	if p == nil {
		return nil
	}
	return convertAll(p.Tolerations, func(t Toleration) corev1.Toleration {
		return corev1.Toleration{
			Key:               t.Key,
			Operator:          corev1.TolerationOperator(t.Operator),
			Value:             t.Value,
			Effect:            corev1.TaintEffect(t.Effect),
			TolerationSeconds: clonePtr(t.TolerationSeconds),
		}
	})
}

// CoreTopologySpreadConstraints converts the spread constraints; nil when
// there are none.
func (p *PodTemplate) CoreTopologySpreadConstraints() []corev1.TopologySpreadConstraint {
	if p == nil {
		return nil
	}
	return convertAll(p.TopologySpreadConstraints, func(c TopologySpreadConstraint) corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			WhenUnsatisfiable:  corev1.UnsatisfiableConstraintAction(c.WhenUnsatisfiable),
			LabelSelector:      c.LabelSelector.Core(),
			MinDomains:         clonePtr(c.MinDomains),
			NodeAffinityPolicy: (*corev1.NodeInclusionPolicy)(clonePtr(c.NodeAffinityPolicy)),
			NodeTaintsPolicy:   (*corev1.NodeInclusionPolicy)(clonePtr(c.NodeTaintsPolicy)),
			MatchLabelKeys:     slices.Clone(c.MatchLabelKeys),
		}
	})
}

// CoreImagePullSecrets converts the image pull secrets; nil when there
// are none.
func (p *PodTemplate) CoreImagePullSecrets() []corev1.LocalObjectReference {
	if p == nil {
		return nil
	}
	return convertAll(p.ImagePullSecrets, func(s LocalObjectReference) corev1.LocalObjectReference {
		return corev1.LocalObjectReference{Name: s.Name}
	})
}

// Core converts the affinity; nil for nil.
func (a *Affinity) Core() *corev1.Affinity {
	if a == nil {
		return nil
	}
	out := &corev1.Affinity{}
	if n := a.NodeAffinity; n != nil {
		out.NodeAffinity = &corev1.NodeAffinity{}
		if r := n.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
				NodeSelectorTerms: convertAll(r.NodeSelectorTerms, NodeSelectorTerm.core),
			}
		}
		out.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = convertAll(n.PreferredDuringSchedulingIgnoredDuringExecution,
			func(p PreferredSchedulingTerm) corev1.PreferredSchedulingTerm {
				return corev1.PreferredSchedulingTerm{Weight: p.Weight, Preference: p.Preference.core()}
			})
	}
	if p := a.PodAffinity; p != nil {
		out.PodAffinity = &corev1.PodAffinity{}
		out.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, out.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = p.core()
	}
	if p := a.PodAntiAffinity; p != nil {
		out.PodAntiAffinity = &corev1.PodAntiAffinity{}
		out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, out.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = p.core()
	}
	return out
}

// Core converts the label selector; nil for nil.
func (s *LabelSelector) Core() *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	return &metav1.LabelSelector{
		MatchLabels: maps.Clone(s.MatchLabels),
		MatchExpressions: convertAll(s.MatchExpressions, func(r LabelSelectorRequirement) metav1.LabelSelectorRequirement {
			return metav1.LabelSelectorRequirement{Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: slices.Clone(r.Values)}
		}),
	}
}

// core converts the terms of an affinity or an anti-affinity, whose core
// types differ but hold the same fields.
func (p *PodAffinity) core() ([]corev1.PodAffinityTerm, []corev1.WeightedPodAffinityTerm) {
	return convertAll(p.RequiredDuringSchedulingIgnoredDuringExecution, PodAffinityTerm.core),
		convertAll(p.PreferredDuringSchedulingIgnoredDuringExecution, WeightedPodAffinityTerm.core)
}

func (t NodeSelectorTerm) core() corev1.NodeSelectorTerm {
	requirement := func(r NodeSelectorRequirement) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: slices.Clone(r.Values)}
	}
	return corev1.NodeSelectorTerm{
		MatchExpressions: convertAll(t.MatchExpressions, requirement),
		MatchFields:      convertAll(t.MatchFields, requirement),
	}
}

func (t PodAffinityTerm) core() corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{
		LabelSelector:     t.LabelSelector.Core(),
		Namespaces:        slices.Clone(t.Namespaces),
		TopologyKey:       t.TopologyKey,
		NamespaceSelector: t.NamespaceSelector.Core(),
		MatchLabelKeys:    slices.Clone(t.MatchLabelKeys),
		MismatchLabelKeys: slices.Clone(t.MismatchLabelKeys),
	}
}

func (t WeightedPodAffinityTerm) core() corev1.WeightedPodAffinityTerm {
	return corev1.WeightedPodAffinityTerm{Weight: t.Weight, PodAffinityTerm: t.PodAffinityTerm.core()}
}

// convertAll converts every element; nil for an empty list, as the core
// types' omitempty fields would read it back.
func convertAll[From, To any](in []From, convert func(From) To) []To {
	if len(in) == 0 {
		return nil
	}
	out := make([]To, 0, len(in))
	for _, v := range in {
		out = append(out, convert(v))
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
