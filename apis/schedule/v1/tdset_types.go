package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
)

// TDSetSpec is a container and the replica counts it should run at each hour
// of the day. The field names are the original operator's, so its manifests
// apply unchanged.
type TDSetSpec struct {
	// Container is the one container of the Deployment's pods. It is
	// absent only on a TDSet that scales a workload it did not create
	// (v2's spec.scaleTargetRef, which v1 keeps in the annotation
	// schedule.rs/v2-data). CEL cannot read annotations, so the validating
	// webhook, which holds v1 writes to v2's rules, refuses a v1 TDSet with
	// neither.
	// +optional
	Container ContainerSpec `json:"container,omitzero"`

	// Service, when its port is set, exposes the container through a
	// ClusterIP Service named after the TDSet. Removing the port deletes the
	// Service.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`

	// The admission rules below name windows by their hours. They look hours
	// up in a list of strings instead of calling string(int): CEL estimates
	// string(int) as unbounded, which puts the message far over the cost
	// budget. Two windows overlap exactly when one contains the other's
	// start (see pkg/schedule.Overlap); exists_one counts the window itself.

	// SchedulingConfig lists the windows of the day and their replica counts.
	// A window covers the local hours [startTime, endTime) in timeZone;
	// startTime > endTime wraps past midnight (19 to 0 is 19:00-23:59).
	// Windows may not overlap; hours no window covers use defaultReplica.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=24
	// +kubebuilder:validation:XValidation:rule=`self.all(a, a.startTime == a.endTime || self.exists_one(b, b.startTime != b.endTime && ((a.startTime < a.endTime ? (b.startTime >= a.startTime && b.startTime < a.endTime) : (b.startTime >= a.startTime || b.startTime < a.endTime)) || (b.startTime < b.endTime ? (a.startTime >= b.startTime && a.startTime < b.endTime) : (a.startTime >= b.startTime || a.startTime < b.endTime)))))`,message="schedulingConfig windows overlap: each hour may belong to one window only",messageExpression=`self.filter(a, a.startTime != a.endTime && self.filter(b, b.startTime != b.endTime && ((a.startTime < a.endTime ? (b.startTime >= a.startTime && b.startTime < a.endTime) : (b.startTime >= a.startTime || b.startTime < a.endTime)) || (b.startTime < b.endTime ? (a.startTime >= b.startTime && a.startTime < b.endTime) : (a.startTime >= b.startTime || a.startTime < b.endTime)))).size() > 1).map(a, self.filter(b, b.startTime != b.endTime && ((a.startTime < a.endTime ? (b.startTime >= a.startTime && b.startTime < a.endTime) : (b.startTime >= a.startTime || b.startTime < a.endTime)) || (b.startTime < b.endTime ? (a.startTime >= b.startTime && a.startTime < b.endTime) : (a.startTime >= b.startTime || a.startTime < b.endTime))))).map(l, 'windows ' + ['0','1','2','3','4','5','6','7','8','9','10','11','12','13','14','15','16','17','18','19','20','21','22','23'][l[0].startTime] + '-' + ['0','1','2','3','4','5','6','7','8','9','10','11','12','13','14','15','16','17','18','19','20','21','22','23'][l[0].endTime] + ' and ' + ['0','1','2','3','4','5','6','7','8','9','10','11','12','13','14','15','16','17','18','19','20','21','22','23'][l[1].startTime] + '-' + ['0','1','2','3','4','5','6','7','8','9','10','11','12','13','14','15','16','17','18','19','20','21','22','23'][l[1].endTime] + ' overlap: each hour may belong to one window only')[0]`
	// +listType=atomic
	// +required
	SchedulingConfig []SchedulingConfig `json:"schedulingConfig"`

	// DefaultReplica is the count for the hours no window covers. Every
	// replica count of the spec is at most 1000, as in v2.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +required
	DefaultReplica int32 `json:"defaultReplica"`

	// IntervalMint, in minutes, caps the time between two resyncs. The
	// controller already wakes at every window boundary, so this only makes
	// it look more often.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1440
	// +optional
	IntervalMint int32 `json:"intervalMint,omitempty"`

	// TimeZone is the IANA name of the zone whose wall-clock hours the
	// windows are in, for example "Europe/Berlin". On days the zone changes
	// its offset, a window that starts in a skipped hour starts when the
	// clock jumps past it, and a repeated hour belongs to its window both
	// times. An unknown name sets Ready=False with reason InvalidTimeZone.
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Suspend stops applying the schedule: the Deployment keeps its current
	// replica count (changes to the container are still rolled out) until
	// Suspend is false again. A Deployment that does not exist yet is
	// created with the schedule's count.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// PodTemplate sets where the pods are scheduled (nodeSelector,
	// tolerations, affinity, topologySpreadConstraints, priorityClassName),
	// their extra labels and annotations, and their imagePullSecrets, with
	// the Pod spec's field names. See docs/placement.md.
	// +optional
	PodTemplate *shared.PodTemplate `json:"podTemplate,omitempty"`
}

// ContainerSpec is the container the Deployment runs.
type ContainerSpec struct {
	// Image is the container image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	Image string `json:"image"`

	// Port is the port the container listens on, named "http".
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`
}

// ServiceSpec is the Service in front of the container.
type ServiceSpec struct {
	// Port is the Service's port; it forwards to the container's port.
	// Without it there is no Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`
}

// The hours have no omitempty: endTime 0 (midnight) is the common way to
// end a window and must reach the API server.

// SchedulingConfig is one window of the day.
// +kubebuilder:validation:XValidation:rule="self.startTime != self.endTime",message="a window's startTime and endTime must differ",messageExpression=`'window ' + ['0','1','2','3','4','5','6','7','8','9','10','11','12','13','14','15','16','17','18','19','20','21','22','23'][self.startTime] + '-' + ['0','1','2','3','4','5','6','7','8','9','10','11','12','13','14','15','16','17','18','19','20','21','22','23'][self.endTime] + ' is empty: startTime and endTime must differ (endTime 0 means midnight; for one count all day, use defaultReplica)'`
type SchedulingConfig struct {
	// StartTime is the first hour of the window, 0-23.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=23
	// +required
	StartTime int32 `json:"startTime"`

	// EndTime is the hour the window ends at, 0-23, exclusive: 17 ends at
	// 17:00 and 0 at midnight.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=23
	// +required
	EndTime int32 `json:"endTime"`

	// Replica is the count while the window applies.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +required
	Replica int32 `json:"replica"`
}

// TDSetStatus is what the controller last applied and what comes next.
type TDSetStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// DesiredReplicas is the count the schedule asks for now. While
	// suspended, the Deployment keeps its own count instead.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`

	// AvailableReplicas is how many replicas of the TDSet's Deployment, or
	// of the scale target a schedule.rs/v2 client set, are available.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// ActiveWindow is the index in spec.schedulingConfig of the window that
	// applies now; absent when defaultReplica applies.
	// +optional
	ActiveWindow *int32 `json:"activeWindow,omitempty"`

	// NextTransitionTime is when the applicable window changes next, at
	// most 25 hours ahead (further changes are re-checked by then).
	// +optional
	NextTransitionTime *metav1.Time `json:"nextTransitionTime,omitempty"`

	// NextReplicas is the count the schedule asks for from NextTransitionTime on.
	// +optional
	NextReplicas *int32 `json:"nextReplicas,omitempty"`

	// Conditions: Ready (the Deployment has the count it should have
	// available), Scheduled and Suspended.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TDSet runs a Deployment whose replica count follows the hours of the day
// in a time zone, and optionally a Service in front of it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tds,categories=multi-operator
// +kubebuilder:deprecatedversion:warning="schedule.rs/v1 TDSet is deprecated: use schedule.rs/v2, which keeps every v1 field (kubectl get tds.v2.schedule.rs NAME -o yaml)"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desiredReplicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Window",type=integer,JSONPath=`.status.activeWindow`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextTransitionTime`,description="When the window changes next (a date column would print future times as <invalid>)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.service) || !has(self.spec.service.port) || self.metadata.name.matches('^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$')",message="with spec.service.port set, the name must be a DNS label (at most 63 lower-case letters, digits and '-', starting with a letter), because the Service is named after the TDSet"
type TDSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   TDSetSpec   `json:"spec"`
	Status TDSetStatus `json:"status,omitempty"`
}

// StatusConditions returns the conditions for pkg/conditions.
func (t *TDSet) StatusConditions() *[]metav1.Condition { return &t.Status.Conditions }

// TDSetList is a list of TDSets.
// +kubebuilder:object:root=true
type TDSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TDSet `json:"items"`
}
