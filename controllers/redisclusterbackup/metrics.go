package redisclusterbackup

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/objectmetrics"
)

// The controller's metrics, on controller-runtime's registry. Their series
// are the RedisCluster's, labelled with its namespace and name, whatever
// the backups are called, and go with its last RedisClusterBackup.
var (
	lastSuccess = objectmetrics.GaugeVec("rediscluster_backup_last_success_timestamp_seconds",
		"Unix time at which the latest complete RedisClusterBackup of the RedisCluster completed.")
	lastBytes = objectmetrics.GaugeVec("rediscluster_backup_last_size_bytes",
		"Size of the files of the latest complete RedisClusterBackup of the RedisCluster.")
	lastDuration = objectmetrics.GaugeVec("rediscluster_backup_last_duration_seconds",
		"Time the latest complete RedisClusterBackup of the RedisCluster took, from its Job's start to its completion.")
	failures = objectmetrics.CounterVec("rediscluster_backup_failures_total",
		"RedisClusterBackups of the RedisCluster that failed, counted once, when the status first records the failure.")
)

func init() {
	metrics.Registry.MustRegister(lastSuccess, lastBytes, lastDuration, failures)
}

// completeBackup is what the gauges show of one complete backup.
type completeBackup struct {
	completed time.Time
	bytes     int64
	duration  time.Duration
}

// backupMetrics remembers, per RedisCluster, its backups the controller
// has seen finish, so that the gauges show the latest complete one after
// a restart (a finished backup is reconciled once at start, from the
// cache) and after the latest is deleted, and go with the last backup.
// It holds one small entry per finished backup.
type backupMetrics struct {
	mu sync.Mutex
	// clusterOf is each backup's cluster.
	clusterOf map[types.NamespacedName]string
	// complete are each cluster's complete backups, by backup name.
	complete map[types.NamespacedName]map[string]completeBackup
}

// tracked is the process's record: the metrics are the process's too.
var tracked = newBackupMetrics()

func newBackupMetrics() *backupMetrics {
	return &backupMetrics{clusterOf: map[types.NamespacedName]string{}, complete: map[types.NamespacedName]map[string]completeBackup{}}
}

// observe records a finished backup; a failure that the status records
// for the first time (counted) is counted.
func (m *backupMetrics) observe(b *cachev1.RedisClusterBackup, counted bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cluster := types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.ClusterName}
	m.clusterOf[types.NamespacedName{Namespace: b.Namespace, Name: b.Name}] = b.Spec.ClusterName
	st := b.Status
	switch {
	case st.Phase == cachev1.BackupFailed && counted:
		failures.WithLabelValues(cluster.Namespace, cluster.Name).Add(1)
	case st.Phase == cachev1.BackupComplete && st.CompletionTime != nil:
		if m.complete[cluster] == nil {
			m.complete[cluster] = map[string]completeBackup{}
		}
		c := completeBackup{completed: st.CompletionTime.Time}
		if st.Totals != nil {
			c.bytes = st.Totals.Bytes
		}
		if st.StartTime != nil {
			c.duration = max(st.CompletionTime.Sub(st.StartTime.Time), 0)
		}
		m.complete[cluster][b.Name] = c
		m.show(cluster)
	}
}

// forget drops a deleted backup, and the cluster's series with its last.
func (m *backupMetrics) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, ok := m.clusterOf[key]
	if !ok {
		return
	}
	delete(m.clusterOf, key)
	cluster := types.NamespacedName{Namespace: key.Namespace, Name: name}
	delete(m.complete[cluster], key.Name)
	m.show(cluster)
	for other, n := range m.clusterOf {
		if n == name && other.Namespace == key.Namespace {
			return
		}
	}
	delete(m.complete, cluster)
	objectmetrics.Forget(cluster.Namespace, cluster.Name, lastSuccess, lastBytes, lastDuration, failures)
}

// show sets the gauges from the cluster's latest complete backup, or
// drops them when it has none.
func (m *backupMetrics) show(cluster types.NamespacedName) {
	var latest *completeBackup
	for _, c := range m.complete[cluster] {
		if latest == nil || c.completed.After(latest.completed) {
			latest = &c
		}
	}
	if latest == nil {
		objectmetrics.Forget(cluster.Namespace, cluster.Name, lastSuccess, lastBytes, lastDuration)
		return
	}
	lastSuccess.WithLabelValues(cluster.Namespace, cluster.Name).Set(float64(latest.completed.Unix()))
	lastBytes.WithLabelValues(cluster.Namespace, cluster.Name).Set(float64(latest.bytes))
	lastDuration.WithLabelValues(cluster.Namespace, cluster.Name).Set(latest.duration.Seconds())
}
