// Package builders makes the custom resources of this project for tests,
// kueue-style: a wrapper per kind with sensible defaults, a method per field
// a test changes, and Obj to get the object.
//
//	m := builders.Memcached(ns, "cache").Size(3).Obj()
package builders

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
)

// MemcachedWrapper builds a Memcached.
type MemcachedWrapper struct{ cachev1alpha1.Memcached }

// Memcached is a Memcached of size 1.
func Memcached(ns, name string) *MemcachedWrapper {
	return &MemcachedWrapper{cachev1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       cachev1alpha1.MemcachedSpec{Size: 1},
	}}
}

// Size sets spec.size.
func (w *MemcachedWrapper) Size(n int32) *MemcachedWrapper { w.Spec.Size = n; return w }

// Obj returns the Memcached.
func (w *MemcachedWrapper) Obj() *cachev1alpha1.Memcached { return &w.Memcached }

// TDSetWrapper builds a TDSet.
type TDSetWrapper struct{ schedulev1.TDSet }

// OriginalWindows is the schedule of the original TDSet operator's sample:
// 5 replicas from 9 to 17, 3 until 19, 2 until midnight, 2 from 1 to 7 and
// 3 until 9.
func OriginalWindows() []schedulev1.SchedulingConfig {
	return []schedulev1.SchedulingConfig{
		{StartTime: 9, EndTime: 17, Replica: 5},
		{StartTime: 17, EndTime: 19, Replica: 3},
		{StartTime: 19, EndTime: 0, Replica: 2},
		{StartTime: 1, EndTime: 7, Replica: 2},
		{StartTime: 7, EndTime: 9, Replica: 3},
	}
}

// TDSet is a TDSet of the original's hello-world container on the
// original's windows, 3 replicas outside them, in UTC.
func TDSet(ns, name string) *TDSetWrapper {
	return &TDSetWrapper{schedulev1.TDSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: schedulev1.TDSetSpec{
			Container:        schedulev1.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
			SchedulingConfig: OriginalWindows(),
			DefaultReplica:   3,
		},
	}}
}

// Windows replaces spec.schedulingConfig.
func (w *TDSetWrapper) Windows(windows ...schedulev1.SchedulingConfig) *TDSetWrapper {
	w.Spec.SchedulingConfig = windows
	return w
}

// DefaultReplica sets spec.defaultReplica.
func (w *TDSetWrapper) DefaultReplica(n int32) *TDSetWrapper { w.Spec.DefaultReplica = n; return w }

// TimeZone sets spec.timeZone.
func (w *TDSetWrapper) TimeZone(zone string) *TDSetWrapper { w.Spec.TimeZone = zone; return w }

// Suspend sets spec.suspend.
func (w *TDSetWrapper) Suspend(suspend bool) *TDSetWrapper { w.Spec.Suspend = suspend; return w }

// ServicePort asks for a Service on port.
func (w *TDSetWrapper) ServicePort(port int32) *TDSetWrapper {
	w.Spec.Service = &schedulev1.ServiceSpec{Port: port}
	return w
}

// IntervalMint sets spec.intervalMint.
func (w *TDSetWrapper) IntervalMint(minutes int32) *TDSetWrapper {
	w.Spec.IntervalMint = minutes
	return w
}

// Obj returns the TDSet.
func (w *TDSetWrapper) Obj() *schedulev1.TDSet { return &w.TDSet }

// WhaleSayWrapper builds a WhaleSay.
type WhaleSayWrapper struct{ whalesayv1alpha1.WhaleSay }

// WhaleSay is a WhaleSay that says "hello".
func WhaleSay(ns, name string) *WhaleSayWrapper {
	return &WhaleSayWrapper{whalesayv1alpha1.WhaleSay{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       whalesayv1alpha1.WhaleSaySpec{Message: "hello"},
	}}
}

// Message sets spec.message.
func (w *WhaleSayWrapper) Message(msg string) *WhaleSayWrapper { w.Spec.Message = msg; return w }

// Obj returns the WhaleSay.
func (w *WhaleSayWrapper) Obj() *whalesayv1alpha1.WhaleSay { return &w.WhaleSay }

// RedisClusterWrapper builds a RedisCluster.
type RedisClusterWrapper struct{ cachev1.RedisCluster }

// RedisCluster is a RedisCluster of 3 masters without replicas.
func RedisCluster(ns, name string) *RedisClusterWrapper {
	return &RedisClusterWrapper{cachev1.RedisCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       cachev1.RedisClusterSpec{Size: 3},
	}}
}

// Size sets spec.size, the number of masters.
func (w *RedisClusterWrapper) Size(n int32) *RedisClusterWrapper { w.Spec.Size = n; return w }

// ReplicasPerMaster sets spec.replicasPerMaster.
func (w *RedisClusterWrapper) ReplicasPerMaster(n int32) *RedisClusterWrapper {
	w.Spec.ReplicasPerMaster = n
	return w
}

// PasswordSecret sets spec.auth.passwordSecret.
func (w *RedisClusterWrapper) PasswordSecret(name, key string) *RedisClusterWrapper {
	w.auth().PasswordSecret = &cachev1.SecretKeyRef{Name: name, Key: key}
	return w
}

// PreviousPasswordKey sets spec.auth.previousPasswordKey.
func (w *RedisClusterWrapper) PreviousPasswordKey(key string) *RedisClusterWrapper {
	w.auth().PreviousPasswordKey = key
	return w
}

// AuthDisabled sets spec.auth.disabled.
func (w *RedisClusterWrapper) AuthDisabled() *RedisClusterWrapper {
	w.auth().Disabled = true
	return w
}

// TLS sets spec.tls.secretName.
func (w *RedisClusterWrapper) TLS(secretName string) *RedisClusterWrapper {
	w.Spec.TLS = &cachev1.TLSSpec{SecretName: secretName}
	return w
}

func (w *RedisClusterWrapper) auth() *cachev1.AuthSpec {
	if w.Spec.Auth == nil {
		w.Spec.Auth = &cachev1.AuthSpec{}
	}
	return w.Spec.Auth
}

// Obj returns the RedisCluster.
func (w *RedisClusterWrapper) Obj() *cachev1.RedisCluster { return &w.RedisCluster }
