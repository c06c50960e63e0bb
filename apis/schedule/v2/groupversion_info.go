// Package v2 contains the TDSet API, group schedule.rs, version v2, the storage
// version and the hub the other versions convert through: a
// Deployment whose replica count follows a weekly calendar.
// +kubebuilder:object:generate=true
// +groupName=schedule.rs
package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "schedule.rs", Version: "v2"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers TDSet, Calendar, ClusterCalendar and their lists in s under GroupVersion, along
// with the meta/v1 types (ListOptions, WatchEvent and the like) that every
// API version serves.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &TDSet{}, &TDSetList{}, &Calendar{}, &CalendarList{}, &ClusterCalendar{}, &ClusterCalendarList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
