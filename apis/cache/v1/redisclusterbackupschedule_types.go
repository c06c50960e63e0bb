package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelBackupSchedule is the label of a RedisClusterBackup whose value
// names the RedisClusterBackupSchedule of the same namespace that created it. The
// schedule finds its backups by this label (for its concurrency rule, its
// status and its retention), and a user finds them with
// kubectl get rdcb -l cache.example.com/backup-schedule=<name>. Removing
// the label takes a backup out of the schedule's retention.
const LabelBackupSchedule = "cache.example.com/backup-schedule"

// AnnotationScheduledTime is the annotation of a RedisClusterBackup a
// schedule created whose value is the tick (RFC 3339, UTC) it was made for: retention orders
// backups by it, and after a restart the schedule knows the ticks it
// already served even if its own status was not written.
const AnnotationScheduledTime = "cache.example.com/scheduled-time"

// MaxBackupScheduleNameLength bounds a schedule's name so that its backups'
// names, <schedule>-<yyyymmddhhmm>, stay within the 63 characters a
// RedisClusterBackup's name may have.
const MaxBackupScheduleNameLength = 50

// MaxScheduleActive bounds status.active: the schedule starts no backup
// while one of its backups is Pending or Running (unless it never started
// by the next tick: it is superseded), so more than one only shows after a
// user labelled backups by hand.
const MaxScheduleActive = 10

// RedisClusterBackupScheduleSpec is when to back up a RedisCluster, where
// to, and which backups to keep.
type RedisClusterBackupScheduleSpec struct {
	// ClusterName names the RedisCluster to back up, in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +required
	ClusterName string `json:"clusterName"`

	// Schedule is a cron expression of five fields (minute hour
	// day-of-month month day-of-week), such as "30 2 * * *", or one of
	// @yearly, @monthly, @weekly, @daily, @hourly. It may not set its own
	// time zone (use timeZone) nor use @every. The form is checked at
	// admission; an expression that passes but cannot be read (such as a
	// minute of 61) makes Ready False with the reason InvalidSchedule.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*,/?-]+( +[0-9A-Za-z*,/?-]+){4})$`
	// +required
	Schedule string `json:"schedule"`

	// TimeZone is the IANA name of the zone the schedule's times are in,
	// such as Europe/Berlin; UTC when absent. Backups are named in UTC
	// whatever the zone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,3}$`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Suspend stops creating backups; retention still deletes the backups
	// it no longer keeps. When it is cleared, the ticks missed meanwhile
	// start one backup, as after an outage (unless older than
	// startingDeadlineSeconds).
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// StartingDeadlineSeconds is how late a tick may still start a backup,
	// such as after the manager was down; a tick older than this is
	// skipped (the event BackupMissed). Without it, the latest missed tick
	// starts one backup however late.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// Destination is where each backup's files go, copied into every
	// RedisClusterBackup the schedule creates (see RedisClusterBackup's
	// spec.destination).
	// +required
	Destination BackupDestination `json:"destination"`

	// Retention says which of the schedule's finished backups to keep;
	// the others are deleted. The newest complete backup is always kept,
	// and a backup that runs is never deleted. Without it every complete
	// backup is kept, and the newest failed one.
	// +optional
	Retention *BackupRetention `json:"retention,omitempty"`
}

// BackupRetention keeps a complete backup when any of keepLast and
// keepWithin keeps it; with neither, every complete backup is kept.
type BackupRetention struct {
	// KeepLast keeps the newest keepLast complete backups.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	KeepLast *int32 `json:"keepLast,omitempty"`

	// KeepWithin keeps every complete backup made for a tick no older
	// than this, from 1m to 8784h (366 days), such as 168h.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s))+$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,5}(h|m|s))+$') || (duration(self) >= duration('1m') && duration(self) <= duration('8784h'))",message="retention.keepWithin must be from 1m to 8784h, such as 168h"
	// +optional
	KeepWithin *metav1.Duration `json:"keepWithin,omitempty"`

	// KeepFailed keeps the newest keepFailed failed backups, whose status
	// says why they failed; 1 when absent, 0 deletes every failed backup.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	KeepFailed *int32 `json:"keepFailed,omitempty"`
}

// RedisClusterBackupScheduleStatus is what the schedule did last and
// does next.
type RedisClusterBackupScheduleStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastScheduleTime is the latest tick the schedule handled: it
	// created a backup for it, or skipped it (a backup still ran, or the
	// tick was past startingDeadlineSeconds).
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulTime is when the latest complete backup of the
	// schedule completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// NextScheduleTime is the next tick; absent while suspended or when
	// the schedule cannot be read.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// LastSupersededTime is when a tick last deleted a backup of the
	// schedule that had not started by that tick (it waited for its
	// cluster or another input, or its Job's name was taken), so that the
	// schedule goes on (the Warning event BackupSuperseded).
	// +optional
	LastSupersededTime *metav1.Time `json:"lastSupersededTime,omitempty"`

	// Active names the schedule's backups that are Pending or Running.
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Active []string `json:"active,omitempty"`

	// Conditions: Ready is True while the schedule runs (reason Scheduled)
	// or is suspended (Suspended), and False with InvalidSchedule when
	// spec.schedule or spec.timeZone cannot be read.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RedisClusterBackupSchedule takes a RedisClusterBackup of a RedisCluster
// at every tick of a cron schedule, one at a time, and deletes the
// backups its retention no longer keeps.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=redisclusterbackupschedules,singular=redisclusterbackupschedule,shortName=rdcbs,categories=multi-operator
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 50",message="the name must have at most 50 characters: the schedule's backups are named <name>-<yyyymmddhhmm>, at most 63"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="the name must consist of lower-case letters, digits and '-', and start and end with a letter or digit, such as nightly"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=`.status.lastSuccessfulTime`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RedisClusterBackupSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   RedisClusterBackupScheduleSpec   `json:"spec"`
	Status RedisClusterBackupScheduleStatus `json:"status,omitempty"`
}

// StatusConditions returns the conditions for pkg/conditions.
func (s *RedisClusterBackupSchedule) StatusConditions() *[]metav1.Condition {
	return &s.Status.Conditions
}

// RedisClusterBackupScheduleList is a list of RedisClusterBackupSchedules.
// +kubebuilder:object:root=true
type RedisClusterBackupScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RedisClusterBackupSchedule `json:"items"`
}
