package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bounds of the calendars' markers, for code that must stop early on
// objects stored without them.
const (
	// MaxCalendarDates is spec.dates' MaxItems: one entry a day of a year.
	MaxCalendarDates = 366
	// MaxCalendarRangeDays is the most days one range entry holds, both
	// ends included.
	MaxCalendarRangeDays = 31
	// MaxCalendarRefs is a TDSet's spec.calendars' MaxItems.
	MaxCalendarRefs = 8
	// MaxCalendarDateName is the longest name of a calendar entry, and of
	// an imported event's summary as the status shows it.
	MaxCalendarDateName = 63
)

// CalendarSpec is a list of named dates that TDSets share.
type CalendarSpec struct {
	// Dates are the calendar's days. On a day that several entries hold,
	// the first entry in this list sets the count, and an entry of this
	// list wins over a date imported from source.
	// +kubebuilder:validation:MaxItems=366
	// +listType=atomic
	// +optional
	Dates []CalendarDate `json:"dates,omitempty"`

	// Source imports more dates from an iCalendar (.ics) file in a
	// ConfigMap: its whole-day events, once or yearly. They come after
	// dates, in the file's order.
	// +optional
	Source *CalendarSource `json:"source,omitempty"`
}

// CalendarSource is where a calendar imports dates from.
type CalendarSource struct {
	// ConfigMapRef names the ConfigMap and its key holding the iCalendar
	// data. The ConfigMap must carry the label
	// multi-operator.dev/watch=true: the manager sees no other.
	// +required
	ConfigMapRef ConfigMapKeyRef `json:"configMapRef"`

	// Replicas is the count on the imported dates. Without it, the TDSet's
	// reference to the calendar says the count (its replicas), else the
	// TDSet's defaultReplicas applies all day.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}

// ConfigMapKeyRef names a key of a ConfigMap.
type ConfigMapKeyRef struct {
	// Namespace is the ConfigMap's namespace: required in a
	// ClusterCalendar, and not allowed in a Calendar, which reads a
	// ConfigMap of its own namespace only.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the ConfigMap's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`

	// Key is the key of the ConfigMap's data that holds the iCalendar
	// file, as "holidays.ics".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +required
	Key string `json:"key"`
}

// CalendarDate is one named entry of a calendar: a fixed date, a date
// every year, or a range of dates. Its day means what a TDSet exception's
// date means: the whole local day in the TDSet's spec.timeZone.
// +kubebuilder:validation:XValidation:rule="(has(self.date) ? 1 : 0) + (has(self.yearly) ? 1 : 0) + (has(self.from) ? 1 : 0) == 1",message="a calendar date sets exactly one of date (one day), yearly (a day every year) or from and to (a range of days)"
// +kubebuilder:validation:XValidation:rule="has(self.from) == has(self.to)",message="a range of days needs both from and to"
// +kubebuilder:validation:XValidation:rule="!has(self.from) || !has(self.to) || self.from <= self.to",message="a range's to must not be before its from"
// +kubebuilder:validation:XValidation:rule="!has(self.from) || !has(self.to) || self.from > self.to || timestamp(self.to + 'T00:00:00Z') - timestamp(self.from + 'T00:00:00Z') <= duration('720h')",message="a range holds at most 31 days (from and to included); split a longer one"
// +kubebuilder:validation:XValidation:rule="!has(self.yearly) || !(self.yearly in ['02-30', '02-31', '04-31', '06-31', '09-31', '11-31'])",message="yearly must be a day that exists in some year (02-29 applies in leap years only)"
type CalendarDate struct {
	// Name says what the day is, as "christmas"; the TDSet's status shows it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_. ]*[A-Za-z0-9])?$`
	// +required
	Name string `json:"name"`

	// Date is one local date, "YYYY-MM-DD".
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`
	// +kubebuilder:validation:MaxLength=10
	// +optional
	Date string `json:"date,omitempty"`

	// Yearly is a local date every year, "MM-DD". "02-29" applies in leap
	// years only, as a TDSet exception cannot name 29 February of another
	// year.
	// +kubebuilder:validation:Pattern=`^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`
	// +kubebuilder:validation:MaxLength=5
	// +optional
	Yearly string `json:"yearly,omitempty"`

	// From is the first local date of a range, "YYYY-MM-DD".
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`
	// +kubebuilder:validation:MaxLength=10
	// +optional
	From string `json:"from,omitempty"`

	// To is the last local date of a range, included, "YYYY-MM-DD".
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`
	// +kubebuilder:validation:MaxLength=10
	// +optional
	To string `json:"to,omitempty"`

	// Replicas is the count on these days. Without it, the TDSet's
	// reference to the calendar says the count (its replicas), else the
	// TDSet's defaultReplicas applies all day.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}

// Calendar is a list of named dates, such as public holidays, that the
// TDSets of its namespace may reference in spec.calendars.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tdcal,categories=multi-operator
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.source) || !has(self.spec.source.configMapRef.__namespace__)",message="a Calendar imports from a ConfigMap of its own namespace only: leave spec.source.configMapRef.namespace unset"
// +kubebuilder:printcolumn:name="First",type=string,JSONPath=`.spec.dates[0].name`,description="The name of the calendar's first entry"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Calendar struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec CalendarSpec `json:"spec,omitempty"`
}

// CalendarList is a list of Calendars.
// +kubebuilder:object:root=true
type CalendarList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Calendar `json:"items"`
}

// ClusterCalendar is a Calendar that TDSets of every namespace may
// reference.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=tdccal,categories=multi-operator
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.source) || has(self.spec.source.configMapRef.__namespace__)",message="a ClusterCalendar names the namespace of the ConfigMap it imports from: set spec.source.configMapRef.namespace"
// +kubebuilder:printcolumn:name="First",type=string,JSONPath=`.spec.dates[0].name`,description="The name of the calendar's first entry"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterCalendar struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec CalendarSpec `json:"spec,omitempty"`
}

// ClusterCalendarList is a list of ClusterCalendars.
// +kubebuilder:object:root=true
type ClusterCalendarList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterCalendar `json:"items"`
}

// CalendarKind is the kind a TDSet's calendar reference names.
// +kubebuilder:validation:Enum=Calendar;ClusterCalendar
type CalendarKind string

const (
	// CalendarKindNamespaced is a Calendar in the TDSet's namespace.
	CalendarKindNamespaced CalendarKind = "Calendar"
	// CalendarKindCluster is a ClusterCalendar.
	CalendarKindCluster CalendarKind = "ClusterCalendar"
)

// CalendarRef names a calendar whose dates a TDSet follows.
type CalendarRef struct {
	// Kind is Calendar (in the TDSet's namespace; one of another namespace
	// cannot be named) or ClusterCalendar.
	// +kubebuilder:default=Calendar
	// +optional
	Kind CalendarKind `json:"kind,omitempty"`

	// Name is the calendar's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`

	// Replicas is the count on the calendar's dates that have none of their
	// own; without it, defaultReplicas applies on them.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}
