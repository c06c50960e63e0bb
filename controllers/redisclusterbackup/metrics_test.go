package redisclusterbackup

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
)

func finishedBackup(name string, phase cachev1.BackupPhase, completed time.Time, bytes int64) *cachev1.RedisClusterBackup {
	start := metav1.NewTime(completed.Add(-time.Minute))
	end := metav1.NewTime(completed)
	return &cachev1.RedisClusterBackup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "metrics-ns", Name: name},
		Spec:       cachev1.RedisClusterBackupSpec{ClusterName: "cache"},
		Status: cachev1.RedisClusterBackupStatus{Phase: phase, StartTime: &start, CompletionTime: &end,
			Totals: &cachev1.BackupTotals{Bytes: bytes}},
	}
}

// The gauges show the cluster's latest complete backup, an older one once
// the latest is deleted, and go with the cluster's last backup; a failure
// is counted once.
func TestMetricsFollowTheLatestCompleteBackup(t *testing.T) {
	g := NewWithT(t)
	m := newBackupMetrics()
	t0 := time.Unix(1_800_000_000, 0)
	count := func() int { return testutil.CollectAndCount(lastSuccess) + testutil.CollectAndCount(failures) }
	before := count()

	m.observe(finishedBackup("old", cachev1.BackupComplete, t0, 100), true)
	m.observe(finishedBackup("new", cachev1.BackupComplete, t0.Add(time.Hour), 200), false)
	m.observe(finishedBackup("old", cachev1.BackupComplete, t0, 100), false) // seen again at a start
	failed := finishedBackup("broken", cachev1.BackupFailed, t0.Add(2*time.Hour), 0)
	m.observe(failed, true)
	m.observe(failed, false)
	g.Expect(testutil.ToFloat64(lastSuccess.WithLabelValues("metrics-ns", "cache"))).To(Equal(float64(t0.Add(time.Hour).Unix())))
	g.Expect(testutil.ToFloat64(lastBytes.WithLabelValues("metrics-ns", "cache"))).To(Equal(200.0))
	g.Expect(testutil.ToFloat64(lastDuration.WithLabelValues("metrics-ns", "cache"))).To(Equal(60.0))
	g.Expect(testutil.ToFloat64(failures.WithLabelValues("metrics-ns", "cache"))).To(Equal(1.0))

	m.forget(types.NamespacedName{Namespace: "metrics-ns", Name: "new"})
	g.Expect(testutil.ToFloat64(lastSuccess.WithLabelValues("metrics-ns", "cache"))).To(Equal(float64(t0.Unix())))
	m.forget(types.NamespacedName{Namespace: "metrics-ns", Name: "old"})
	g.Expect(count()).To(Equal(before+1), "no complete backup left: only the failure count")
	m.forget(types.NamespacedName{Namespace: "metrics-ns", Name: "broken"})
	m.forget(types.NamespacedName{Namespace: "metrics-ns", Name: "never-seen"})
	g.Expect(count()).To(Equal(before), "the cluster's series went with its last backup")
}
