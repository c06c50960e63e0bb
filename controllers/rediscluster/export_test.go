package rediscluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/events"
)

// NewestComplete is newestComplete, for its table test.
var NewestComplete = newestComplete

// The controller's metrics, for tests to read with prometheus' testutil.
var (
	Failovers     = failovers
	SlotsMigrated = slotsMigrated
	RolloutStep   = rolloutStep
	ClusterState  = clusterState
	LastRotation  = lastRotation
	// RotationFailures is rediscluster_password_rotation_failures_total.
	RotationFailures = rotationFailures
)

// InitMetrics and ForgetMetrics create and drop a cluster's series.
var (
	InitMetrics   = initMetrics
	ForgetMetrics = forgetMetrics
)

// HandoverGrace is how long a failed-over master runs on before its restart.
const HandoverGrace = handoverGrace

// Restart runs the rollout's restart of pod, one of rc's, with c and rec.
func Restart(ctx context.Context, c client.Client, rec events.Recorder, rc *cachev1.RedisCluster, pod *corev1.Pod) error {
	r := &Reconciler{client: c, events: rec, clock: clock.RealClock{}}
	_, err := r.restart(ctx, rc, pod, "restarting "+pod.Name)
	return err
}

// RotationFailure exposes rotationFailure to the table test.
var RotationFailure = rotationFailure

// DrainGraceAt exposes drainGrace to the table test.
var DrainGraceAt = drainGrace

// UnreachableRetryAfter exposes unreachableRetryAfter to the table test.
var UnreachableRetryAfter = unreachableRetryAfter

// SetPodMonitorRefresh makes r ask sooner whether PodMonitors are served,
// so that a test sees a CRD installed mid-test quickly.
func SetPodMonitorRefresh(r *Reconciler, d time.Duration) { r.podMonitors.Served.Refresh = d }

// RecordCanary exposes recordCanary to the table test.
var RecordCanary = recordCanary

// CannotStart and UnreachableStuck are the rollout's tests of pods that
// cannot start.
var (
	CannotStart      = cannotStart
	UnreachableStuck = unreachableStuck
)

// MigrationStatus is what the status records of a run's moves.
var MigrationStatus = migrationStatus
