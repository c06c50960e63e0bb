package shared

// PodTemplate is where and how the pods a custom resource runs are
// scheduled, and what metadata they carry. The field names are the Pod
// spec's, so that a snippet of a Pod spec pastes in unchanged. Unlike the
// core types, every list, map and string here is bounded, since tenants
// write it and the operator copies it into every pod.
//
// The operator's own labels (app.kubernetes.io/name, instance, managed-by
// and part-of) select its pods, so labels may not set them: they are
// refused at admission, and the operator applies its own last regardless.
type PodTemplate struct {
	// Labels are added to every pod. The app.kubernetes.io/name, instance,
	// managed-by and part-of labels are the operator's.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="podTemplate.labels: a key has at most 317 characters (a 253-character prefix, '/', and a 63-character name) and a value at most 63"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/part-of']))",message="podTemplate.labels cannot set app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/managed-by or app.kubernetes.io/part-of: the operator selects its pods by them"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are added to every pod, except the legacy AppArmor and
	// seccomp annotations, which the API server still turns into security
	// settings: the operator's pods keep the profiles it gives them.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 4096)",message="podTemplate.annotations: a key has at most 317 characters and a value at most 4096"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('container.apparmor.security.beta.kubernetes.io/') && !k.startsWith('seccomp.security.alpha.kubernetes.io/') && !k.startsWith('container.seccomp.security.alpha.kubernetes.io/'))",message="podTemplate.annotations cannot set AppArmor or seccomp annotations: the operator sets its pods' security profiles"
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// NodeSelector limits the pods to nodes with these labels.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="podTemplate.nodeSelector: a key has at most 317 characters and a value at most 63"
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pods run on nodes with matching taints.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// Affinity replaces the operator's default affinity, if it has one
	// (see each kind's documentation).
	// +optional
	Affinity *Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints replace the operator's default spread, if
	// it has one (see each kind's documentation).
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PriorityClassName names the pods' PriorityClass.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// ImagePullSecrets name Secrets in the custom resource's namespace
	// that the kubelet pulls the images with.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// Toleration is corev1.Toleration with bounds, and the API server's own
// rules for its fields checked at admission, so that a toleration the
// Pod would be refused is refused on the custom resource instead.
// +kubebuilder:validation:XValidation:rule="has(self.key) && size(self.key) > 0 || has(self.operator) && self.operator == 'Exists'",message="a toleration without a key must have operator Exists"
// +kubebuilder:validation:XValidation:rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="a toleration with operator Exists takes no value"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerationSeconds) || has(self.effect) && self.effect == 'NoExecute'",message="tolerationSeconds applies only to effect NoExecute"
type Toleration struct {
	// Key is the taint key; empty with operator Exists matches every taint.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	Key string `json:"key,omitempty"`

	// Operator is Equal (the default) or Exists.
	// +kubebuilder:validation:Enum=Exists;Equal
	// +optional
	Operator string `json:"operator,omitempty"`

	// Value is the taint value to match with operator Equal.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`

	// Effect is the taint effect to match; empty matches every effect.
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	// +optional
	Effect string `json:"effect,omitempty"`

	// TolerationSeconds is how long a pod stays bound to a node tainted
	// NoExecute; unset means forever.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Affinity is corev1.Affinity with bounds.
type Affinity struct {
	// NodeAffinity chooses nodes by their labels.
	// +optional
	NodeAffinity *NodeAffinity `json:"nodeAffinity,omitempty"`

	// PodAffinity places the pods near other pods.
	// +optional
	PodAffinity *PodAffinity `json:"podAffinity,omitempty"`

	// PodAntiAffinity places the pods away from other pods.
	// +optional
	PodAntiAffinity *PodAffinity `json:"podAntiAffinity,omitempty"`
}

// NodeAffinity is corev1.NodeAffinity with bounds.
type NodeAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution must hold for a node
	// to be chosen.
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution *NodeSelector `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution are preferences,
	// weighed against each other.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// NodeSelector is corev1.NodeSelector with bounds: a node must match one
// of its terms.
type NodeSelector struct {
	// NodeSelectorTerms are ORed.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +required
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms"`
}

// PreferredSchedulingTerm is corev1.PreferredSchedulingTerm with bounds.
type PreferredSchedulingTerm struct {
	// Weight of the term, 1-100.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +required
	Weight int32 `json:"weight"`

	// Preference is the term a node should match.
	// +required
	Preference NodeSelectorTerm `json:"preference"`
}

// NodeSelectorTerm is corev1.NodeSelectorTerm with bounds: its
// requirements are ANDed.
type NodeSelectorTerm struct {
	// MatchExpressions are requirements on the node's labels.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`

	// MatchFields are requirements on the node's fields: as in a Pod,
	// only metadata.name, with In or NotIn and exactly one value.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(r, r.key == 'metadata.name' && r.operator in ['In', 'NotIn'] && has(r.values) && size(r.values) == 1)",message="matchFields: a requirement on node fields takes key metadata.name, operator In or NotIn, and exactly one value"
	// +listType=atomic
	// +optional
	MatchFields []NodeSelectorRequirement `json:"matchFields,omitempty"`
}

// NodeSelectorRequirement is corev1.NodeSelectorRequirement with bounds,
// and the number of values each operator takes checked at admission.
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : self.operator in ['Gt', 'Lt'] ? has(self.values) && size(self.values) == 1 : !has(self.values) || size(self.values) == 0",message="a node requirement takes values with In and NotIn, exactly one with Gt and Lt, and none with Exists and DoesNotExist"
type NodeSelectorRequirement struct {
	// Key is the label key (or field) the requirement applies to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Key string `json:"key"`

	// Operator relates the key to the values.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt
	// +required
	Operator string `json:"operator"`

	// Values for In and NotIn, one integer for Gt and Lt, none otherwise.
	// A node name (matchFields) may be longer than a label value.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
}

// PodAffinity is corev1.PodAffinity and corev1.PodAntiAffinity, which
// have the same fields, with bounds.
type PodAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution must all hold for a
	// node to be chosen.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution are preferences,
	// weighed against each other.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// WeightedPodAffinityTerm is corev1.WeightedPodAffinityTerm with bounds.
type WeightedPodAffinityTerm struct {
	// Weight of the term, 1-100.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +required
	Weight int32 `json:"weight"`

	// PodAffinityTerm is the term.
	// +required
	PodAffinityTerm PodAffinityTerm `json:"podAffinityTerm"`
}

// PodAffinityTerm is corev1.PodAffinityTerm with bounds: the pods it
// selects, in which namespaces, and the topology domain to share (or not).
type PodAffinityTerm struct {
	// LabelSelector selects the pods; unset selects none.
	// +optional
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`

	// Namespaces the selected pods are in; with namespaceSelector unset
	// and this empty, the pod's own.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// TopologyKey is the node label whose value is the domain, such as
	// kubernetes.io/hostname.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	TopologyKey string `json:"topologyKey"`

	// NamespaceSelector selects the namespaces by their labels.
	// +optional
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`

	// MatchLabelKeys are pod label keys whose values the incoming pod's
	// must equal.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=317
	// +listType=atomic
	// +optional
	MatchLabelKeys []string `json:"matchLabelKeys,omitempty"`

	// MismatchLabelKeys are pod label keys whose values the incoming
	// pod's must differ from.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=317
	// +listType=atomic
	// +optional
	MismatchLabelKeys []string `json:"mismatchLabelKeys,omitempty"`
}

// LabelSelector is metav1.LabelSelector with bounds; its requirements
// are ANDed.
type LabelSelector struct {
	// MatchLabels are labels the object must have.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="matchLabels: a key has at most 317 characters and a value at most 63"
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`

	// MatchExpressions are requirements on the object's labels.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is metav1.LabelSelectorRequirement with bounds,
// and the number of values each operator takes checked at admission.
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",message="a label selector requirement takes values with In and NotIn and none with Exists and DoesNotExist"
type LabelSelectorRequirement struct {
	// Key is the label key.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Key string `json:"key"`

	// Operator relates the key to the values.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	// +required
	Operator string `json:"operator"`

	// Values for In and NotIn; none for Exists and DoesNotExist.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
}

// TopologySpreadConstraint is corev1.TopologySpreadConstraint with bounds.
type TopologySpreadConstraint struct {
	// MaxSkew is how unevenly the pods may spread across domains.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +required
	MaxSkew int32 `json:"maxSkew"`

	// TopologyKey is the node label whose value is the domain.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	TopologyKey string `json:"topologyKey"`

	// WhenUnsatisfiable is DoNotSchedule or ScheduleAnyway.
	// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
	// +required
	WhenUnsatisfiable string `json:"whenUnsatisfiable"`

	// LabelSelector selects the pods counted in each domain. Unset counts
	// none; select this kind's own pods by their app.kubernetes.io/name
	// and app.kubernetes.io/instance labels.
	// +optional
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`

	// MinDomains is the least number of eligible domains.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MinDomains *int32 `json:"minDomains,omitempty"`

	// NodeAffinityPolicy is Honor or Ignore.
	// +kubebuilder:validation:Enum=Honor;Ignore
	// +optional
	NodeAffinityPolicy *string `json:"nodeAffinityPolicy,omitempty"`

	// NodeTaintsPolicy is Honor or Ignore.
	// +kubebuilder:validation:Enum=Honor;Ignore
	// +optional
	NodeTaintsPolicy *string `json:"nodeTaintsPolicy,omitempty"`

	// MatchLabelKeys are pod label keys whose values select, together with
	// labelSelector, the pods counted.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=317
	// +listType=atomic
	// +optional
	MatchLabelKeys []string `json:"matchLabelKeys,omitempty"`
}
