package rediscluster

// The controller's metrics, for tests to read with prometheus' testutil.
var (
	Failovers     = failovers
	SlotsMigrated = slotsMigrated
	RolloutStep   = rolloutStep
	ClusterState  = clusterState
	LastRotation  = lastRotation
)

// HandoverGrace is how long a failed-over master runs on before its restart.
const HandoverGrace = handoverGrace
