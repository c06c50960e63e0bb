// Package v1alpha1 contains the WhaleSay API, group devsectim.io, version v1alpha1.
// +kubebuilder:object:generate=true
// +groupName=devsectim.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "devsectim.io", Version: "v1alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers WhaleSay and WhaleSayList in s under GroupVersion,
// along with the meta/v1 types (ListOptions, WatchEvent and the like) that
// every API version serves.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &WhaleSay{}, &WhaleSayList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
