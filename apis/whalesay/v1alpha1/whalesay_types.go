package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
)

// WhaleSaySpec is what the whale should say.
type WhaleSaySpec struct {
	// Message is printed by cowsay, as one argument and never through a shell.
	// It may span lines and hold tabs, but no other control character (such
	// as NUL or a terminal escape), which would end the argument early or
	// reach the terminal of whoever reads the output.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`!self.matches('[\\x00-\\x08\\x0b-\\x1f\\x7f]')`,message="spec.message cannot hold control characters such as NUL or terminal escapes (ESC); newlines and tabs are allowed"
	// +required
	Message string `json:"message"`

	// Image overrides the manager's default image (its WHALESAY_IMAGE
	// environment variable, the project's ghcr.io/multi-operator/whalesay
	// unless set). The image must provide the cowsay command.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// PodTemplate sets where the pods are scheduled (nodeSelector,
	// tolerations, affinity, topologySpreadConstraints, priorityClassName),
	// their extra labels and annotations, and their imagePullSecrets, with
	// the Pod spec's field names. See docs/placement.md.
	// +optional
	PodTemplate *shared.PodTemplate `json:"podTemplate,omitempty"`
}

// Phase is where the WhaleSay's Job is in its life.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type Phase string

// The phases of a WhaleSay.
const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
)

// Condition types of a WhaleSay, beside Ready.
const (
	// ConditionFailed is True when the Job failed; its reason is the Job's.
	ConditionFailed = "Failed"
)

// WhaleSayStatus is the outcome of the Job that renders the current spec.
type WhaleSayStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// JobName is the Job that renders the current spec. Its name carries a
	// hash of what it runs, so once it finished it is not run again for the
	// same spec, even after the Job itself is gone.
	// +optional
	JobName string `json:"jobName,omitempty"`

	// Phase is Pending, Running, Succeeded or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// StartTime is when the Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the Job finished, successfully or not.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// MessagePreview is the start of spec.message, at most 40 characters, for
	// `kubectl get`'s Message column.
	// +optional
	MessagePreview string `json:"messagePreview,omitempty"`

	// Output is the container's log, at most 4 KiB, read once the pod succeeded.
	// It is best effort: empty when the log could not be read.
	// +optional
	Output string `json:"output,omitempty"`

	// Conditions: Ready (True once the Job succeeded) and Failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WhaleSay runs cowsay with a message in a Job and reports the outcome.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wsay,categories=multi-operator
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.messagePreview`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WhaleSay struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   WhaleSaySpec   `json:"spec"`
	Status WhaleSayStatus `json:"status,omitempty"`
}

// StatusConditions returns the conditions for pkg/conditions.
func (w *WhaleSay) StatusConditions() *[]metav1.Condition { return &w.Status.Conditions }

// WhaleSayList is a list of WhaleSays.
// +kubebuilder:object:root=true
type WhaleSayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WhaleSay `json:"items"`
}
