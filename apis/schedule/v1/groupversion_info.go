// Package v1 contains the TDSet API, group schedule.rs, version v1: a
// Deployment whose replica count follows a time-of-day schedule.
// +kubebuilder:object:generate=true
// +groupName=schedule.rs
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "schedule.rs", Version: "v1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
