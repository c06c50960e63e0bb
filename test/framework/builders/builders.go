// Package builders makes the custom resources of this project for tests,
// kueue-style: a wrapper per kind with sensible defaults, a method per field
// a test changes, and Obj to get the object.
//
//	m := builders.Memcached(ns, "cache").Size(3).Obj()
package builders

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
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

// TDSetWrapper builds a TDSet of schedule.rs/v2, the version the
// controller reconciles.
type TDSetWrapper struct{ schedulev2.TDSet }

// OriginalWindows is the schedule of the original TDSet operator's sample,
// as v1 converts it: 5 replicas from 09:00 to 17:00, 3 until 19:00, 2 until
// midnight, 2 from 01:00 to 07:00 and 3 until 09:00, every day.
func OriginalWindows() []schedulev2.Window {
	return []schedulev2.Window{
		{Start: "09:00", End: "17:00", Replicas: 5},
		{Start: "17:00", End: "19:00", Replicas: 3},
		{Start: "19:00", End: "00:00", Replicas: 2},
		{Start: "01:00", End: "07:00", Replicas: 2},
		{Start: "07:00", End: "09:00", Replicas: 3},
	}
}

// TDSet is a TDSet of the original's hello-world container on the
// original's windows, 3 replicas outside them, in UTC.
func TDSet(ns, name string) *TDSetWrapper {
	return &TDSetWrapper{schedulev2.TDSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: schedulev2.TDSetSpec{
			Container:       schedulev2.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
			Windows:         OriginalWindows(),
			DefaultReplicas: 3,
		},
	}}
}

// Windows replaces spec.windows.
func (w *TDSetWrapper) Windows(windows ...schedulev2.Window) *TDSetWrapper {
	w.Spec.Windows = windows
	return w
}

// Window is a window of replicas from start to end ("HH:MM") on days (none: every day).
func Window(start, end string, replicas int32, days ...schedulev2.Weekday) schedulev2.Window {
	return schedulev2.Window{Days: days, Start: start, End: end, Replicas: replicas}
}

// WindowOver is a window over days: from start on startDay to end on
// endDay, as WindowOver("Fri", "18:00", "Mon", "06:00", 4).
func WindowOver(startDay schedulev2.Weekday, start string, endDay schedulev2.Weekday, end string, replicas int32) schedulev2.Window {
	return schedulev2.Window{Days: []schedulev2.Weekday{startDay}, Start: start, EndDay: endDay, End: end, Replicas: replicas}
}

// Exception adds an exception: replicas on the local date ("YYYY-MM-DD").
func (w *TDSetWrapper) Exception(date string, replicas int32) *TDSetWrapper {
	w.Spec.Exceptions = append(w.Spec.Exceptions, schedulev2.Exception{Date: date, Replicas: replicas})
	return w
}

// Calendar adds a reference to a calendar of kind ("Calendar" or
// "ClusterCalendar") and name to spec.calendars.
func (w *TDSetWrapper) Calendar(kind schedulev2.CalendarKind, name string) *TDSetWrapper {
	w.Spec.Calendars = append(w.Spec.Calendars, schedulev2.CalendarRef{Kind: kind, Name: name})
	return w
}

// Override sets spec.override.
func (w *TDSetWrapper) Override(replicas int32, until time.Time) *TDSetWrapper {
	w.Spec.Override = &schedulev2.Override{Replicas: replicas, Until: metav1.NewTime(until)}
	return w
}

// Autoscaling sets spec.autoscaling with maxReplicas and the API's default target.
func (w *TDSetWrapper) Autoscaling(maxReplicas int32) *TDSetWrapper {
	w.Spec.Autoscaling = &schedulev2.Autoscaling{MaxReplicas: maxReplicas}
	return w
}

// ScaleUpLeadTime sets spec.scaleUpLeadTime.
func (w *TDSetWrapper) ScaleUpLeadTime(d time.Duration) *TDSetWrapper {
	w.Spec.ScaleUpLeadTime = &metav1.Duration{Duration: d}
	return w
}

// ResyncInterval sets spec.resyncInterval.
func (w *TDSetWrapper) ResyncInterval(d time.Duration) *TDSetWrapper {
	w.Spec.ResyncInterval = &metav1.Duration{Duration: d}
	return w
}

// DefaultReplicas sets spec.defaultReplicas.
func (w *TDSetWrapper) DefaultReplicas(n int32) *TDSetWrapper { w.Spec.DefaultReplicas = n; return w }

// TimeZone sets spec.timeZone.
func (w *TDSetWrapper) TimeZone(zone string) *TDSetWrapper { w.Spec.TimeZone = zone; return w }

// Suspend sets spec.suspend.
func (w *TDSetWrapper) Suspend(suspend bool) *TDSetWrapper { w.Spec.Suspend = suspend; return w }

// ServicePort asks for a Service on port.
func (w *TDSetWrapper) ServicePort(port int32) *TDSetWrapper {
	w.Spec.Service = &schedulev2.ServiceSpec{Port: port}
	return w
}

// Obj returns the TDSet.
func (w *TDSetWrapper) Obj() *schedulev2.TDSet { return &w.TDSet }

// TDSetV1 is the original's sample as schedule.rs/v1: the hello-world
// container, its hourly windows, 3 replicas outside them, in UTC.
func TDSetV1(ns, name string) *schedulev1.TDSet {
	return &schedulev1.TDSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: schedulev1.TDSetSpec{
			Container: schedulev1.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
			SchedulingConfig: []schedulev1.SchedulingConfig{
				{StartTime: 9, EndTime: 17, Replica: 5},
				{StartTime: 17, EndTime: 19, Replica: 3},
				{StartTime: 19, EndTime: 0, Replica: 2},
				{StartTime: 1, EndTime: 7, Replica: 2},
				{StartTime: 7, EndTime: 9, Replica: 3},
			},
			DefaultReplica: 3,
		},
	}
}

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

// Canary enables spec.monitoring.canary with interval.
func (w *RedisClusterWrapper) Canary(interval time.Duration) *RedisClusterWrapper {
	if w.Spec.Monitoring == nil {
		w.Spec.Monitoring = &cachev1.RedisClusterMonitoring{}
	}
	w.Spec.Monitoring.Canary = &cachev1.CanarySpec{Enabled: true, Interval: &metav1.Duration{Duration: interval}}
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

// RedisClusterBackupWrapper builds a RedisClusterBackup.
type RedisClusterBackupWrapper struct{ cachev1.RedisClusterBackup }

// RedisClusterBackup is a backup of cluster to the bucket backups of
// https://s3.example.com, with the credentials of Secret s3-credentials.
func RedisClusterBackup(ns, name, cluster string) *RedisClusterBackupWrapper {
	return &RedisClusterBackupWrapper{cachev1.RedisClusterBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: cachev1.RedisClusterBackupSpec{ClusterName: cluster, Destination: cachev1.BackupDestination{
			S3: &cachev1.S3Destination{Endpoint: "https://s3.example.com", Bucket: "backups", CredentialsSecret: "s3-credentials"},
		}},
	}}
}

// S3 changes spec.destination.s3, which it creates when absent.
func (w *RedisClusterBackupWrapper) S3(change func(*cachev1.S3Destination)) *RedisClusterBackupWrapper {
	if w.Spec.Destination.S3 == nil {
		w.Spec.Destination.S3 = &cachev1.S3Destination{}
	}
	change(w.Spec.Destination.S3)
	return w
}

// PVC makes the destination the PersistentVolumeClaim claim.
func (w *RedisClusterBackupWrapper) PVC(claim string) *RedisClusterBackupWrapper {
	w.Spec.Destination = cachev1.BackupDestination{PersistentVolumeClaim: &cachev1.PVCDestination{ClaimName: claim}}
	return w
}

// Obj returns the RedisClusterBackup.
func (w *RedisClusterBackupWrapper) Obj() *cachev1.RedisClusterBackup { return &w.RedisClusterBackup }

// RedisClusterBackupScheduleWrapper builds a RedisClusterBackupSchedule.
type RedisClusterBackupScheduleWrapper struct {
	cachev1.RedisClusterBackupSchedule
}

// RedisClusterBackupSchedule backs up cluster daily at 03:00 UTC to the
// destination of RedisClusterBackup(ns, name, cluster).
func RedisClusterBackupSchedule(ns, name, cluster string) *RedisClusterBackupScheduleWrapper {
	return &RedisClusterBackupScheduleWrapper{cachev1.RedisClusterBackupSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: cachev1.RedisClusterBackupScheduleSpec{
			ClusterName: cluster,
			Schedule:    "0 3 * * *",
			Destination: RedisClusterBackup(ns, name, cluster).Spec.Destination,
		},
	}}
}

// Schedule sets spec.schedule and spec.timeZone.
func (w *RedisClusterBackupScheduleWrapper) Schedule(expression, timeZone string) *RedisClusterBackupScheduleWrapper {
	w.Spec.Schedule, w.Spec.TimeZone = expression, timeZone
	return w
}

// Retention changes spec.retention, which it creates when absent.
func (w *RedisClusterBackupScheduleWrapper) Retention(change func(*cachev1.BackupRetention)) *RedisClusterBackupScheduleWrapper {
	if w.Spec.Retention == nil {
		w.Spec.Retention = &cachev1.BackupRetention{}
	}
	change(w.Spec.Retention)
	return w
}

// Obj returns the RedisClusterBackupSchedule.
func (w *RedisClusterBackupScheduleWrapper) Obj() *cachev1.RedisClusterBackupSchedule {
	return &w.RedisClusterBackupSchedule
}
