// Package v1alpha1 contains the Widget API, group testing.multi-operator.io,
// version v1alpha1: a test-only kind for the library tests under pkg/, so that
// they do not depend on a product API. It is never installed by config/ nor
// registered by the manager; test/framework/testenv installs its CRD (test/framework/api/crd)
// beside the product's.
// +kubebuilder:object:generate=true
// +groupName=testing.multi-operator.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "testing.multi-operator.io", Version: "v1alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers Widget and WidgetList, and the meta types every
// group version needs (ListOptions and the like).
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
