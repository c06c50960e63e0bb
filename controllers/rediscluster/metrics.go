package rediscluster

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The controller's own metrics, on controller-runtime's registry, so the
// manager's metrics endpoint serves them. Every series is labelled with
// the RedisCluster's namespace and name.
var (
	// lastRotation is when every node of a cluster last finished moving to
	// a changed password.
	lastRotation = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rediscluster_password_rotation_timestamp_seconds",
		Help: "Unix time at which every node of the RedisCluster last finished a password rotation.",
	}, []string{"namespace", "name"})

	// failovers counts masters replaced by a replica: by the operator
	// before a restart (cause "rollout") or by Redis itself ("redis").
	failovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rediscluster_failovers_total",
		Help: "Masters of the RedisCluster replaced by one of their replicas, by cause: rollout (the operator, before a restart) or redis (Redis's own failover).",
	}, []string{"namespace", "name", "cause"})

	// slotsMigrated counts the slots moved between masters with their keys.
	slotsMigrated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rediscluster_slots_migrated_total",
		Help: "Slots the operator moved between masters of the RedisCluster, with their keys.",
	}, []string{"namespace", "name"})

	// rolloutStep is how many nodes run the revision being rolled out.
	rolloutStep = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rediscluster_rollout_step",
		Help: "Nodes of the RedisCluster that run the revision being rolled out; absent when no rollout is in progress.",
	}, []string{"namespace", "name"})

	// clusterState is 1 for the RedisCluster's cluster_state, 0 for the others.
	clusterState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rediscluster_state",
		Help: "1 for the cluster_state the RedisCluster's nodes report (ok, fail or unknown), 0 for the others.",
	}, []string{"namespace", "name", "state"})
)

func init() {
	metrics.Registry.MustRegister(lastRotation, failovers, slotsMigrated, rolloutStep, clusterState)
}

// recordState sets the state gauge of a cluster.
func recordState(namespace, name, state string) {
	for _, s := range []string{"ok", "fail", "unknown"} {
		v := 0.0
		if s == state {
			v = 1
		}
		clusterState.WithLabelValues(namespace, name, s).Set(v)
	}
}

// forgetMetrics drops every series of a deleted cluster.
func forgetMetrics(namespace, name string) {
	labels := map[string]string{"namespace": namespace, "name": name}
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{lastRotation, failovers, slotsMigrated, rolloutStep, clusterState} {
		v.DeletePartialMatch(labels)
	}
}
