// Package v1 contains the RedisCluster, RedisClusterBackup and
// RedisClusterBackupSchedule APIs, group cache.example.com, version v1.
// +kubebuilder:object:generate=true
// +groupName=cache.example.com
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "cache.example.com", Version: "v1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers RedisCluster, RedisClusterBackup,
// RedisClusterBackupSchedule and their lists in s under
// GroupVersion, along with the meta/v1 types (ListOptions, WatchEvent and
// the like) that every API version serves.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &RedisCluster{}, &RedisClusterList{}, &RedisClusterBackup{}, &RedisClusterBackupList{},
		&RedisClusterBackupSchedule{}, &RedisClusterBackupScheduleList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
