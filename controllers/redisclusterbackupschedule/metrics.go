package redisclusterbackupschedule

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/objectmetrics"
)

// The controller's metrics, on controller-runtime's registry, labelled with
// the schedule's namespace and name and gone with it. Together they make
// "no complete backup within the schedule's period" an alert
// (RedisClusterBackupScheduleLate).
var (
	lastSuccess = objectmetrics.GaugeVec("rediscluster_backup_schedule_last_success_timestamp_seconds",
		"Unix time at which the latest complete RedisClusterBackup of the RedisClusterBackupSchedule completed; absent before the first.")
	created = objectmetrics.GaugeVec("rediscluster_backup_schedule_created_timestamp_seconds",
		"Unix time at which the RedisClusterBackupSchedule was created: what the age of its backups counts from before its first complete one.")
	superseded = objectmetrics.GaugeVec("rediscluster_backup_schedule_last_superseded_timestamp_seconds",
		"Unix time at which a tick of the RedisClusterBackupSchedule last deleted a backup of it that had not started by that tick (status.lastSupersededTime); absent before the first.")
	period = objectmetrics.GaugeVec("rediscluster_backup_schedule_period_seconds",
		"Longest gap between two consecutive ticks of the RedisClusterBackupSchedule's cron schedule, among the next ones; absent while it is suspended or its schedule cannot be read.")
)

func init() {
	metrics.Registry.MustRegister(lastSuccess, created, superseded, period)
}

// observe shows the schedule's metrics: its creation, its last success,
// the last backup it superseded, and its period while it creates backups (p is zero otherwise).
func observe(s *cachev1.RedisClusterBackupSchedule, p time.Duration) {
	created.WithLabelValues(s.Namespace, s.Name).Set(float64(s.CreationTimestamp.Unix()))
	if t := s.Status.LastSuccessfulTime; t != nil {
		lastSuccess.WithLabelValues(s.Namespace, s.Name).Set(float64(t.Unix()))
	} else {
		objectmetrics.Forget(s.Namespace, s.Name, lastSuccess)
	}
	if t := s.Status.LastSupersededTime; t != nil {
		superseded.WithLabelValues(s.Namespace, s.Name).Set(float64(t.Unix()))
	} else {
		objectmetrics.Forget(s.Namespace, s.Name, superseded)
	}
	if p > 0 {
		period.WithLabelValues(s.Namespace, s.Name).Set(p.Seconds())
	} else {
		objectmetrics.Forget(s.Namespace, s.Name, period)
	}
}

// forget drops a deleted schedule's series.
func forget(key types.NamespacedName) {
	objectmetrics.Forget(key.Namespace, key.Name, lastSuccess, created, superseded, period)
}
