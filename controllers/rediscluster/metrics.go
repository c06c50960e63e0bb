package rediscluster

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/multi-operator/multi-operator/pkg/objectmetrics"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// The controller's own metrics, on controller-runtime's registry, so the
// manager's metrics endpoint serves them. Every series is labelled with
// the RedisCluster's namespace and name.
var (
	// lastRotation is when every node of a cluster last finished moving to
	// a changed password.
	lastRotation = objectmetrics.GaugeVec("rediscluster_password_rotation_timestamp_seconds",
		"Unix time at which every node of the RedisCluster last finished a password rotation.")

	// rotationFailures counts reconciles whose password work on the nodes
	// failed, by reason (see rotationFailure).
	rotationFailures = objectmetrics.CounterVec("rediscluster_password_rotation_failures_total",
		"Reconciles of the RedisCluster in which making the nodes enforce its passwords failed, by reason: refused (a node refuses every password the operator knows) or error (a command of a pending rotation failed).", "reason")

	// failovers counts masters replaced by a replica: by the operator
	// before a restart (cause "rollout") or by Redis itself ("redis").
	failovers = objectmetrics.CounterVec("rediscluster_failovers_total",
		"Masters of the RedisCluster replaced by one of their replicas, by cause: rollout (the operator, before a restart) or redis (Redis's own failover).", "cause")

	// slotsMigrated counts the slots moved between masters with their keys.
	slotsMigrated = objectmetrics.CounterVec("rediscluster_slots_migrated_total",
		"Slots the operator moved between masters of the RedisCluster, with their keys.")

	// rolloutStep is how many nodes run the revision being rolled out.
	rolloutStep = objectmetrics.GaugeVec("rediscluster_rollout_step",
		"Nodes of the RedisCluster that run the revision being rolled out; absent when no rollout is in progress.")

	// clusterState is 1 for the RedisCluster's cluster_state, 0 for the others.
	clusterState = objectmetrics.GaugeVec("rediscluster_state",
		"1 for the cluster_state the RedisCluster's nodes report (ok, fail or unknown), 0 for the others.", "state")
)

// The causes of a failover, the values of failovers' cause label.
const (
	// causeRollout: the operator failed the master over before its restart.
	causeRollout = "rollout"
	// causeRedis: Redis failed the master over by itself.
	causeRedis = "redis"
)

// failoverCauses are every value of failovers' cause label.
var failoverCauses = []string{causeRollout, causeRedis}

// The reasons of a failed rotation, the values of rotationFailures' reason
// label.
const (
	// rotationRefused: a node refuses every password the operator knows.
	rotationRefused = "refused"
	// rotationError: a command failed while the nodes did not all enforce
	// the spec's passwords yet.
	rotationError = "error"
)

// rotationFailureReasons are every value of rotationFailures' reason label.
var rotationFailureReasons = []string{rotationRefused, rotationError}

// rotationFailure says why the access phase failed to make the nodes
// enforce the passwords, or "" when it did not fail at that: nodes that
// refuse every password the operator knows fail it always; an error fails
// it while a rotation is pending (the spec's passwords are not yet those
// every node enforced last). Nodes that are merely down get the passwords
// when they are back, and are no failure.
func rotationFailure(pending bool, res redisadmin.AccessResult, err error) string {
	switch {
	case len(res.Refused) > 0:
		return rotationRefused
	case err != nil && pending:
		return rotationError
	}
	return ""
}

func init() {
	metrics.Registry.MustRegister(lastRotation, rotationFailures, failovers, slotsMigrated, rolloutStep, clusterState)
}

// recordState sets the state gauge of a cluster.
func recordState(namespace, name, state string) {
	objectmetrics.SetOneOf(clusterState, namespace, name, []string{"ok", "fail", "unknown"}, state)
}

// initMetrics creates a cluster's counters at zero, every cause of
// failovers and reason of rotation failures included, when it is reconciled: a series that appeared only
// at its first increment would hide that increment from increase() and
// rate(), which need a sample before it. forgetMetrics drops them with the
// cluster.
func initMetrics(namespace, name string) {
	for _, cause := range failoverCauses {
		failovers.WithLabelValues(namespace, name, cause)
	}
	for _, reason := range rotationFailureReasons {
		rotationFailures.WithLabelValues(namespace, name, reason)
	}
	slotsMigrated.WithLabelValues(namespace, name)
}

// forgetMetrics drops every series of a deleted cluster.
func forgetMetrics(namespace, name string) {
	objectmetrics.Forget(namespace, name, lastRotation, rotationFailures, failovers, slotsMigrated, rolloutStep, clusterState)
}
