package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
)

// ExporterPort is the Memcached exporter's metrics port,
// prometheus/memcached_exporter's; memcached cannot take it while the
// exporter runs.
const ExporterPort = 9150

// MemcachedSpec is how many memcached servers to run and on which port.
// The exporter beside memcached binds ExporterPort, so memcached may not.
// +kubebuilder:validation:XValidation:rule="!has(self.containerPort) || self.containerPort != 9150 || (has(self.monitoring) && has(self.monitoring.exporter) && has(self.monitoring.exporter.disabled) && self.monitoring.exporter.disabled)",message="spec.containerPort cannot be 9150, the metrics exporter's port, unless monitoring.exporter.disabled is true"
type MemcachedSpec struct {
	// Size is the number of memcached servers. The tutorial caps it at 3.
	// It is also what `kubectl scale` sets, through the scale subresource.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3
	// +required
	Size int32 `json:"size"`

	// ContainerPort is the TCP port memcached listens on, and the port of
	// the headless Service that clients find the servers by.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=11211
	// +optional
	ContainerPort int32 `json:"containerPort,omitempty"`

	// PodTemplate sets where the pods are scheduled (nodeSelector,
	// tolerations, affinity, topologySpreadConstraints, priorityClassName),
	// their extra labels and annotations, and their imagePullSecrets, with
	// the Pod spec's field names. See docs/placement.md.
	// +optional
	PodTemplate *shared.PodTemplate `json:"podTemplate,omitempty"`

	// Monitoring is the metrics exporter beside each memcached server (on
	// unless monitoring.exporter.disabled) and the Prometheus Operator
	// PodMonitor that scrapes it where that kind is served. See
	// docs/memcached.md.
	// +optional
	Monitoring *shared.Monitoring `json:"monitoring,omitempty"`
}

// Condition types of a Memcached, beside Ready, as the tutorial names them.
const (
	// ConditionAvailable is True when every server of the current size is available.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while the Deployment is rolling out a
	// change, scaling, or waiting for its servers to become available.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the servers cannot reach the desired
	// state without help, or while the Memcached is being deleted.
	ConditionDegraded = "Degraded"
)

// MemcachedStatus is what the Deployment running the servers reports.
type MemcachedStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of memcached pods, including old ones still
	// terminating during a rollout. The scale subresource reports it.
	// +optional
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of memcached pods that pass their
	// readiness probe, and so are listed by the headless Service.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// Selector is the label selector of the memcached pods, serialized, for
	// the scale subresource (and so for autoscalers).
	// +optional
	Selector string `json:"selector,omitempty"`

	// Conditions: Available, Progressing, Degraded, and the Ready summary
	// (True when Available and neither Progressing nor Degraded).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Memcached runs a set of memcached servers in a Deployment, behind a
// headless Service through which clients find every server.
//
// The name becomes the name of the Service, so it must be a DNS label.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=mc,categories=multi-operator
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label (at most 63 lower-case letters, digits or '-', starting with a letter): it names the Memcached's Service"
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   MemcachedSpec   `json:"spec"`
	Status MemcachedStatus `json:"status,omitempty"`
}

// StatusConditions returns the conditions for pkg/conditions.
func (m *Memcached) StatusConditions() *[]metav1.Condition { return &m.Status.Conditions }

// MemcachedList is a list of Memcacheds.
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}
