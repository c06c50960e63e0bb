package shared

import corev1 "k8s.io/api/core/v1"

// Monitoring is how the operator lets Prometheus see inside the pods a
// custom resource runs: an exporter container beside the operand, on by
// default, and a PodMonitor for the Prometheus Operator where its
// PodMonitor kind is served.
type Monitoring struct {
	// Exporter is the metrics exporter that runs beside every operand
	// container. It is on unless disabled.
	// +optional
	Exporter *Exporter `json:"exporter,omitempty"`

	// PodMonitor is the Prometheus Operator's PodMonitor the operator
	// keeps for the exporters, when the cluster serves that kind and the
	// exporter runs.
	// +optional
	PodMonitor *PodMonitor `json:"podMonitor,omitempty"`
}

// Exporter is the exporter container beside the operand.
type Exporter struct {
	// Disabled removes the exporter container (and so the PodMonitor).
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// Image overrides the exporter's image, which the operator's flags
	// otherwise choose.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Resources of the exporter container; small defaults when absent.
	// +kubebuilder:validation:XValidation:rule="(!has(self.limits) || size(self.limits) <= 8) && (!has(self.requests) || size(self.requests) <= 8)",message="monitoring.exporter.resources.limits and requests may each name at most 8 resources"
	// +kubebuilder:validation:XValidation:rule="!has(self.claims) || size(self.claims) == 0",message="monitoring.exporter.resources.claims is not supported: the pods declare no resource claims"
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// PodMonitor is the PodMonitor the operator keeps for a custom resource.
type PodMonitor struct {
	// Disabled stops the operator from keeping a PodMonitor, for clusters
	// that scrape pods another way; one it made before is deleted.
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// Interval is how often Prometheus scrapes the exporters, as a
	// Prometheus duration (for example 30s or 1m); Prometheus's own
	// default when empty. Units come in the order h, m, s, ms, each at
	// most once, as the PodMonitor CRD's own pattern wants, and the
	// interval is at least 10s so that a tenant cannot load the shared
	// Prometheus.
	// +kubebuilder:validation:Pattern=`^(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$`
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$') || duration(self) >= duration('10s')",message="monitoring.podMonitor.interval must be at least 10s"
	// +optional
	Interval string `json:"interval,omitempty"`

	// Labels are added to the PodMonitor, for Prometheus's
	// podMonitorSelector to find it.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="monitoring.podMonitor.labels: a key has at most 317 characters and a value at most 63"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}
