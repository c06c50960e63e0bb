package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
)

// RedisClusterMonitoring is the monitoring a RedisCluster shares with the
// other kinds (exporter, PodMonitor) and the write canary, which only a
// RedisCluster has.
type RedisClusterMonitoring struct {
	shared.Monitoring `json:",inline"`

	// Canary writes one small key per shard, under the reserved prefix
	// multi-operator:canary:, counts a write once a replica confirms it
	// (WAIT), reads it back, and reports acknowledged writes that were lost
	// and the time writes failed, per shard: metrics, the WritesLost
	// condition with a Warning event, and the rollout's status. It logs in
	// as its own ACL user, canary, limited to that prefix, with a password
	// the operator generates into the Secret <name>-canary, which no pod
	// mounts. Off unless enabled. See docs/rediscluster.md.
	// +optional
	Canary *CanarySpec `json:"canary,omitempty"`
}

// Shared returns the part of m the other kinds have too, nil when m is.
func (m *RedisClusterMonitoring) Shared() *shared.Monitoring {
	if m == nil {
		return nil
	}
	return &m.Monitoring
}

// CanarySpec is the write canary of a RedisCluster.
type CanarySpec struct {
	// Enabled runs the canary.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Interval is the time between two writes to each shard, from 1s to
	// 60s; 5s when absent. Each write costs every master one SET and one
	// WAIT.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(\.[0-9]{1,3})?(ms|s|m))+$`
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,5}(\\\\.[0-9]{1,3})?(ms|s|m))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('60s'))",message="monitoring.canary.interval must be from 1s to 60s, such as 5s"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// ConditionWritesLost is True once the write canary found acknowledged
// writes lost, with how many, on which shard and when; it stays. False
// while the canary runs and has found none; absent without the canary.
const ConditionWritesLost = "WritesLost"

// RolloutCanary is what the write canary found during a rollout and its
// current step, as counted by the manager that runs it: a manager that
// starts during a rollout counts from then.
type RolloutCanary struct {
	// WritesLost is how many acknowledged writes were found lost during
	// the rollout.
	// +optional
	WritesLost int64 `json:"writesLost,omitempty"`
	// WriteOutageSeconds is how long writes failed during the rollout,
	// summed over the shards.
	// +optional
	WriteOutageSeconds int64 `json:"writeOutageSeconds,omitempty"`
	// StepWritesLost is WritesLost during the current step.
	// +optional
	StepWritesLost int64 `json:"stepWritesLost,omitempty"`
	// StepWriteOutageSeconds is WriteOutageSeconds during the current step.
	// +optional
	StepWriteOutageSeconds int64 `json:"stepWriteOutageSeconds,omitempty"`
}
