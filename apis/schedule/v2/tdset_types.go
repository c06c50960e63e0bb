package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
)

// TDSetSpec is a container (or an existing workload, scaleTargetRef) and
// the replica counts it should run through the week: windows of local wall-clock time on chosen weekdays, whole-day
// exceptions such as public holidays, and a temporary override.
//
// Precedence: the override (until its instant) beats an exception (on its
// local date), which beats a date of a referenced calendar, which beats the window holding the local time on that
// weekday, which beats defaultReplicas.
//
// +kubebuilder:validation:XValidation:rule="has(self.container) != has(self.scaleTargetRef)",message="exactly one of spec.container (a Deployment the TDSet creates) or spec.scaleTargetRef (a workload that already runs) must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.scaleTargetRef) || (!has(self.service) && !has(self.podTemplate))",message="spec.service and spec.podTemplate describe the Deployment the TDSet creates: they go with spec.container, not with spec.scaleTargetRef"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || has(self.autoscaling.hpaRef) == has(self.scaleTargetRef)",message="with spec.scaleTargetRef, spec.autoscaling must name the workload's existing HorizontalPodAutoscaler in spec.autoscaling.hpaRef (the TDSet sets its minReplicas); spec.autoscaling.hpaRef goes only with spec.scaleTargetRef (with spec.container the TDSet creates its own HPA)"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || has(self.autoscaling.hpaRef) || has(self.autoscaling.maxReplicas)",message="spec.autoscaling.maxReplicas is required for the HorizontalPodAutoscaler the TDSet creates (without spec.autoscaling.hpaRef)"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.hpaRef) || !has(self.autoscaling.targetCPUUtilizationPercentage)",message="spec.autoscaling.targetCPUUtilizationPercentage is for the HPA the TDSet creates; with spec.autoscaling.hpaRef the existing HPA keeps its own metrics"
// +kubebuilder:validation:XValidation:rule="(has(self.autoscaling) && has(self.autoscaling.hpaRef)) == (has(oldSelf.autoscaling) && has(oldSelf.autoscaling.hpaRef)) && (!has(self.autoscaling) || !has(self.autoscaling.hpaRef) || self.autoscaling.hpaRef.name == oldSelf.autoscaling.hpaRef.name)",message="spec.autoscaling.hpaRef cannot be added, removed or changed: delete the TDSet (it gives the HPA its own minReplicas and maxReplicas back) and create another"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.scaleTargetRef) == has(self.scaleTargetRef)",message="spec.scaleTargetRef cannot be added or removed: a TDSet either creates its own Deployment (spec.container) or scales an existing workload for its whole life; delete it and create another"
// +kubebuilder:validation:XValidation:rule="!has(self.onDelete) || has(self.scaleTargetRef)",message="spec.onDelete says what happens to a spec.scaleTargetRef's replicas when the TDSet is deleted: set it only with spec.scaleTargetRef"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || (self.defaultReplicas >= 1 && (!has(self.windows) || self.windows.all(w, w.replicas >= 1)) && (!has(self.exceptions) || self.exceptions.all(e, e.replicas >= 1)) && (!has(self.override) || self.override.replicas >= 1))",message="with spec.autoscaling, every replica count (defaultReplicas, windows, exceptions, override) must be at least 1: it becomes the HorizontalPodAutoscaler's minReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.maxReplicas) || (self.autoscaling.maxReplicas >= self.defaultReplicas && (!has(self.windows) || self.windows.all(w, w.replicas <= self.autoscaling.maxReplicas)) && (!has(self.exceptions) || self.exceptions.all(e, e.replicas <= self.autoscaling.maxReplicas)) && (!has(self.override) || self.override.replicas <= self.autoscaling.maxReplicas))",message="spec.autoscaling.maxReplicas must be at least every replica count of the schedule (defaultReplicas, windows, exceptions, override)"
type TDSetSpec struct {
	// TimeZone is the IANA name of the zone whose wall-clock time the
	// windows and exception dates are in, for example "Europe/Berlin".
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Container is the one container of the Deployment the TDSet creates.
	// Exactly one of container and scaleTargetRef is set.
	// +optional
	Container ContainerSpec `json:"container,omitzero"`

	// ScaleTargetRef names a workload in the TDSet's namespace that already
	// runs, whose replicas the TDSet sets through its scale subresource
	// instead of creating a Deployment. The manager scales only the kinds
	// of its --tdset-scalable-kinds flag. It cannot be changed: delete the
	// TDSet (spec.onDelete says what the target keeps) and create another.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.scaleTargetRef is immutable: delete the TDSet (spec.onDelete says what the target keeps) and create another"
	// +optional
	ScaleTargetRef *ScaleTargetRef `json:"scaleTargetRef,omitempty"`

	// OnDelete says what the scaleTargetRef's replicas become when the TDSet
	// is deleted: Keep (the default) leaves the count it has, Restore sets
	// the count it had before the TDSet first scaled it
	// (status.target.originalReplicas).
	// +optional
	OnDelete OnDeletePolicy `json:"onDelete,omitempty"`

	// Service, when its port is set, exposes the container through a
	// ClusterIP Service named after the TDSet. Removing the port deletes the
	// Service.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`

	// DefaultReplicas is the count when no override, exception or window
	// applies. Every replica count of the spec is at most 1000.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +required
	DefaultReplicas int32 `json:"defaultReplicas"`

	// Windows are the parts of the week with their own count. Two windows
	// may not overlap on the same weekday (the validating webhook names
	// them).
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Windows []Window `json:"windows,omitempty"`

	// Exceptions are whole local days with their own count, such as public
	// holidays. Each date may appear once.
	// +kubebuilder:validation:MaxItems=400
	// +listType=atomic
	// +optional
	Exceptions []Exception `json:"exceptions,omitempty"`

	// Calendars name Calendars (of the TDSet's namespace) and
	// ClusterCalendars whose dates count as exceptions. The TDSet's own
	// exceptions win over a calendar's date on the same day, and an earlier
	// calendar in this list over a later one. A calendar that does not
	// exist or cannot be read leaves the replicas as they are, with Ready
	// False. v1 cannot show them (it keeps them in its annotation
	// schedule.rs/v2-data).
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(d, (has(d.kind) ? d.kind : 'Calendar') == (has(c.kind) ? c.kind : 'Calendar') && d.name == c.name))",message="each calendar may be named once in spec.calendars"
	// +listType=atomic
	// +optional
	Calendars []CalendarRef `json:"calendars,omitempty"`

	// Override sets the count until an instant, before anything else; once
	// the instant has passed it is ignored (and may be removed).
	// +optional
	Override *Override `json:"override,omitempty"`

	// Autoscaling, when set, hands the Deployment's replicas to a
	// HorizontalPodAutoscaler: the schedule's count becomes the HPA's
	// minReplicas, and the TDSet never writes the Deployment's replicas.
	// Removing it deletes the HPA and the schedule sets the replicas again.
	// With spec.scaleTargetRef, hpaRef names the target's existing HPA
	// instead, whose minReplicas (and maxReplicas, when set here) the TDSet
	// sets; it never writes the target's replicas then.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`

	// ScaleUpLeadTime applies a transition to more replicas this long before
	// its time, so that the new pods are Ready when the window opens. A
	// transition to fewer replicas happens on time.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="scaleUpLeadTime must be between 0s and 24h"
	// +optional
	ScaleUpLeadTime *metav1.Duration `json:"scaleUpLeadTime,omitempty"`

	// Suspend stops applying the schedule: the Deployment (or the HPA's
	// minReplicas) keeps its current count until Suspend is false again.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// ResyncInterval caps the time between two reconciles. The controller
	// already wakes at every transition, so this only makes it look more
	// often.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('24h')",message="resyncInterval must be between 1m and 24h"
	// +optional
	ResyncInterval *metav1.Duration `json:"resyncInterval,omitempty"`

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

// ScaleTargetRef names a workload with a scale subresource in the TDSet's
// namespace, as an HPA's scaleTargetRef does.
type ScaleTargetRef struct {
	// APIVersion is the target's group and version, as "apps/v1".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[0-9]+((alpha|beta)[0-9]+)?$`
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind is the target's kind, as "Deployment".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	// +required
	Kind string `json:"kind"`

	// Name is the target's name in the TDSet's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`
}

// OnDeletePolicy is what a scale target's replicas become when its TDSet
// is deleted.
// +kubebuilder:validation:Enum=Keep;Restore
type OnDeletePolicy string

const (
	// OnDeleteKeep leaves the target at the count it has.
	OnDeleteKeep OnDeletePolicy = "Keep"
	// OnDeleteRestore sets the count the target had before the TDSet first
	// scaled it.
	OnDeleteRestore OnDeletePolicy = "Restore"
)

// ServiceSpec is the Service in front of the container.
type ServiceSpec struct {
	// Port is the Service's port; it forwards to the container's port.
	// Without it there is no Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`
}

// Weekday is a day of the week, as "Mon".
// +kubebuilder:validation:Enum=Mon;Tue;Wed;Thu;Fri;Sat;Sun
type Weekday string

// Window is a span of local wall-clock time [start, end) on some weekdays.
// End at or before start wraps past midnight; such a window belongs to the
// day it starts on. With endDay, the window spans days: from start on its
// one day in days to end on endDay, as "Fri 18:00 to Mon 06:00".
// +kubebuilder:validation:XValidation:rule="has(self.endDay) || self.start != self.end",message="a window's start and end must differ (for one count all day, use defaultReplicas or an exception)"
// +kubebuilder:validation:XValidation:rule="!has(self.endDay) || (has(self.days) && self.days.size() == 1)",message="a window with endDay starts on one day: days must list exactly that day (Fri 18:00 to Mon 06:00 is days [Fri], start 18:00, endDay Mon, end 06:00)"
// +kubebuilder:validation:XValidation:rule="!has(self.endDay) || !has(self.days) || self.days.size() != 1 || self.endDay != self.days[0] || self.start != self.end",message="a window that ends on the day and at the time it starts is empty: a window lasts less than a week (for one count all the time, use defaultReplicas)"
type Window struct {
	// Days are the weekdays the window starts on; empty means every day.
	// +kubebuilder:validation:MaxItems=7
	// +listType=set
	// +optional
	Days []Weekday `json:"days,omitempty"`

	// Start is the local time the window begins, "HH:MM" (00:00-23:59).
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MaxLength=5
	// +required
	Start string `json:"start"`

	// End is the local time the window ends, exclusive, "HH:MM". "00:00"
	// is midnight.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MaxLength=5
	// +required
	End string `json:"end"`

	// EndDay, when set, is the weekday the window ends on, at end: the
	// first such time after the window starts, so it lasts less than a
	// week, and ending on its start day at an earlier time than start
	// makes it last almost a week. With endDay, days lists the one day
	// the window starts on. v1 cannot show such a window (it keeps it in
	// its annotation schedule.rs/v2-data).
	// +optional
	EndDay Weekday `json:"endDay,omitempty"`

	// Replicas is the count while the window applies.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +required
	Replicas int32 `json:"replicas"`
}

// Exception is one whole local day with its own count.
type Exception struct {
	// Date is the local date, "YYYY-MM-DD".
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`
	// +kubebuilder:validation:MaxLength=10
	// +required
	Date string `json:"date"`

	// Replicas is the count on that day.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +required
	Replicas int32 `json:"replicas"`
}

// Override sets the count until an instant.
type Override struct {
	// Replicas is the count until Until.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +required
	Replicas int32 `json:"replicas"`

	// Until is the instant the override stops applying.
	// +required
	Until metav1.Time `json:"until"`
}

// Autoscaling is the HorizontalPodAutoscaler the schedule is the floor of:
// one the TDSet creates for its Deployment, or, with hpaRef, a scale
// target's existing one.
type Autoscaling struct {
	// HPARef names an existing autoscaling/v2 HorizontalPodAutoscaler in the
	// TDSet's namespace whose scaleTargetRef is the TDSet's
	// spec.scaleTargetRef. The schedule's count becomes its minReplicas;
	// its original minReplicas and maxReplicas are recorded
	// (status.target.autoscaler) and given back when the TDSet is
	// suspended or deleted, whatever spec.onDelete says. Only with
	// spec.scaleTargetRef; it cannot be changed.
	// +optional
	HPARef *HPARef `json:"hpaRef,omitempty"`

	// MaxReplicas is the HPA's maxReplicas. Required without hpaRef; with
	// hpaRef, optional: unset leaves the HPA's own maxReplicas, and the
	// schedule's count is then capped at it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxReplicas int32 `json:"maxReplicas,omitempty"`

	// TargetCPUUtilizationPercentage is the average CPU utilization, in
	// percent of the pods' CPU request, the HPA the TDSet creates aims
	// for; 80 when unset. Not with hpaRef: that HPA keeps its own metrics.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
}

// HPARef names a HorizontalPodAutoscaler in the TDSet's namespace.
type HPARef struct {
	// Name is the HPA's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`
}

// TDSetStatus is what the controller last applied and what comes next.
type TDSetStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// CurrentReplicas is the count the schedule asks for now (with
	// autoscaling: the HPA's minReplicas). While suspended, the Deployment
	// keeps its own count instead.
	// +optional
	CurrentReplicas *int32 `json:"currentReplicas,omitempty"`

	// AvailableReplicas is how many replicas of the TDSet's Deployment, or
	// of its scale target, are available (docs/tdset.md says how a target's
	// count is read).
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// ActiveRule names what sets the count now, as "window Mon-Fri
	// 08:30-18:00", "exception 2026-12-25", "calendar
	// Calendar/holidays christmas 2026-12-25", "override until ..." or
	// "defaultReplicas".
	// +optional
	ActiveRule string `json:"activeRule,omitempty"`

	// ActiveWindow is the index in spec.windows of the window that applies
	// now; absent when no window does.
	// +optional
	ActiveWindow *int32 `json:"activeWindow,omitempty"`

	// NextTransitionTime is when the controller changes the count next
	// (early by spec.scaleUpLeadTime for a scale-up); absent when the
	// schedule never changes.
	// +optional
	NextTransitionTime *metav1.Time `json:"nextTransitionTime,omitempty"`

	// NextReplicas is the count from NextTransitionTime on.
	// +optional
	NextReplicas *int32 `json:"nextReplicas,omitempty"`

	// Target is the scaleTargetRef's state as the TDSet last saw and set
	// it; absent in container mode.
	// +optional
	Target *TargetStatus `json:"target,omitempty"`

	// Conditions: Ready (the Deployment has the count it should have
	// available), Scheduled and Suspended.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TargetStatus is what the TDSet found and set on its scale target.
type TargetStatus struct {
	// APIVersion, Kind and Name are the target these counts are of.
	APIVersion string `json:"apiVersion"`
	// Kind is the target's kind.
	Kind string `json:"kind"`
	// Name is the target's name.
	Name string `json:"name"`
	// Replicas is the count the TDSet last set (or found already set) in
	// the target's scale subresource.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// ObservedReplicas is the count the target's scale subresource reports
	// running (its status.replicas).
	// +optional
	ObservedReplicas *int32 `json:"observedReplicas,omitempty"`
	// OriginalReplicas is the target's count before this TDSet first
	// changed it, which onDelete Restore gives back. It is recorded once
	// and kept across restarts. A target that had more than the bound of
	// every count of the spec (MaxReplicas) is recorded at that bound.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	OriginalReplicas *int32 `json:"originalReplicas,omitempty"`
	// AvailableSince is when the target first had every replica of the
	// count the TDSet last set available (for a RedisCluster: its new
	// masters serve their slots); absent while it does not yet.
	// +optional
	AvailableSince *metav1.Time `json:"availableSince,omitempty"`
	// EstimatedLeadTime is how early scale-ups start because the target
	// needs that long to grow to the calendar's highest count, estimated
	// from a RedisCluster's measured migration rate (status.migration),
	// when that is longer than spec.scaleUpLeadTime; absent otherwise.
	// +optional
	EstimatedLeadTime *metav1.Duration `json:"estimatedLeadTime,omitempty"`
	// Autoscaler is the HPA of spec.autoscaling.hpaRef as the TDSet found
	// and set it; absent without hpaRef.
	// +optional
	Autoscaler *AutoscalerStatus `json:"autoscaler,omitempty"`
}

// AutoscalerStatus is what the TDSet found and set on the HPA it drives.
type AutoscalerStatus struct {
	// Name is the HPA these bounds are of.
	Name string `json:"name"`
	// MinReplicas and MaxReplicas are what the TDSet last set (or found
	// already set) on the HPA.
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the HPA's maxReplicas as the TDSet last set or found it.
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// OriginalMinReplicas and OriginalMaxReplicas are the HPA's bounds
	// before this TDSet first changed them, which it gives back when
	// suspended or deleted. Recorded once (before the first change) and
	// kept across restarts; an unset minReplicas is recorded as 1, the
	// API server's default.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	OriginalMinReplicas *int32 `json:"originalMinReplicas,omitempty"`
	// OriginalMaxReplicas is the HPA's maxReplicas before this TDSet first
	// changed it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	OriginalMaxReplicas *int32 `json:"originalMaxReplicas,omitempty"`
}

// TDSet runs a Deployment whose replica count follows a weekly calendar in
// a time zone, and optionally a Service in front of it.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tds,categories=multi-operator
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Rule",type=string,JSONPath=`.status.activeRule`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextTransitionTime`,description="When the count changes next (a date column would print future times as <invalid>)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.service) || !has(self.spec.service.port) || self.metadata.name.matches('^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$')",message="with spec.service.port set, the name must be a DNS label (at most 63 lower-case letters, digits and '-', starting with a letter), because the Service is named after the TDSet"
type TDSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   TDSetSpec   `json:"spec"`
	Status TDSetStatus `json:"status,omitempty"`
}

// Hub marks v2 as the version the others convert through.
func (*TDSet) Hub() {}

// StatusConditions returns the conditions for pkg/conditions.
func (t *TDSet) StatusConditions() *[]metav1.Condition { return &t.Status.Conditions }

// TDSetList is a list of TDSets.
// +kubebuilder:object:root=true
type TDSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TDSet `json:"items"`
}
