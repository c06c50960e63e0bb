package rediscluster

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// recordCluster writes what the run found into rc's status and conditions
// and picks when to look again. Ready is True only when the run reached
// every node, had nothing left to do, the nodes say cluster_state:ok with
// every slot served, and every pod is Ready: a pod that is not (its
// exporter cannot start, say) is out of the Services, and clients that
// reach the cluster through them are refused.
func (r *Reconciler) recordCluster(s *scope, running int32, res redisadmin.Result, err error) (reconciler.Result, error) {
	rc := s.rc
	st := &rc.Status
	st.Nodes = nil
	for i := int32(0); i < running; i++ {
		st.Nodes = append(st.Nodes, PodName(rc, i))
	}
	st.ReadyNodes = 0
	for _, n := range res.State.Nodes {
		if n.ClusterState == "ok" && podReady(s.pods[n.Name]) {
			st.ReadyNodes++
		}
	}
	st.ClusterState = res.State.ClusterState
	if st.ClusterState == "" {
		st.ClusterState = "unknown"
	}
	st.SlotsAssigned = int32(res.State.SlotsAssigned)
	st.Size = int32(res.State.Masters)

	recordState(rc.Namespace, rc.Name, st.ClusterState)

	var unreachable *redisadmin.UnreachableError
	switch {
	case errors.As(err, &unreachable) && restarting(rc, unreachable):
		// The pod the rollout restarts is away: expected, no warning.
		msg := fmt.Sprintf("rolling %d/%d: waiting for %s to restart", rc.Status.Rollout.Updated, rc.Status.Rollout.Total, rc.Status.Rollout.Pod)
		return waitForNodes(rc, res.State, cachev1.ReasonRollingUpdate, msg), nil
	case errors.As(err, &unreachable) && unreachable.OnlyLoading():
		// Expected after any restart and after a replica's full
		// resynchronization: no warning, and Degraded keeps its state.
		msg := "waiting for " + describeLoading(unreachable) + " to load the dataset"
		return waitForNodes(rc, res.State, cachev1.ReasonNodesLoading, msg), nil
	case errors.As(err, &unreachable):
		msg := describeUnreachable(unreachable)
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonNodesUnreachable, msg)
		conditions.MarkFalse(rc, cachev1.ConditionProgressing, cachev1.ReasonNodesUnreachable, "waiting for the nodes to be reachable before changing anything")
		if conditions.MarkTrue(rc, cachev1.ConditionDegraded, cachev1.ReasonNodesUnreachable, msg) {
			r.events.Warning(rc, cachev1.ReasonNodesUnreachable, events.ActionReconcile, "%s", msg)
		}
		since := r.clock.Since(conditions.Get(rc, cachev1.ConditionDegraded).LastTransitionTime.Time)
		return reconciler.Requeue(unreachableRetryAfter(since)), nil
	case err != nil:
		msg := err.Error()
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonClusterError, msg)
		conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonClusterError, "retrying after: "+msg)
		r.events.Warning(rc, cachev1.ReasonClusterError, events.ActionReconcile, "%s", msg)
		return reconciler.Result{}, err
	}

	r.recordMasters(s, res)
	ok := st.ClusterState == "ok" && res.State.SlotsAssigned == redisadmin.NumSlots
	pods := r.readiness(rc, s.pods, running)
	refused := passwordsRefusedMessage(s.passwordsRefused)
	switch {
	case !ok && res.State.SlotsAssigned > 0:
		conditions.MarkTrue(rc, cachev1.ConditionDegraded, cachev1.ReasonClusterFail,
			fmt.Sprintf("cluster_state is %s with %d of %d slots served", st.ClusterState, res.State.SlotsAssigned, redisadmin.NumSlots))
	case ok && refused != "":
		if conditions.MarkTrue(rc, cachev1.ConditionDegraded, cachev1.ReasonPasswordsRefused, refused) {
			r.events.Warning(rc, cachev1.ReasonPasswordsRefused, events.ActionReconcile, "%s", refused)
		}
	case ok && pods.stuck():
		conditions.MarkTrue(rc, cachev1.ConditionDegraded, cachev1.ReasonNodesNotReady, pods.message())
	default:
		conditions.MarkFalse(rc, cachev1.ConditionDegraded, cachev1.ReasonClusterOK, "every node is reachable")
	}
	if res.Done && ok && running == Replicas(rc) {
		s.settled = true
		if restoring(rc) {
			// Ready and Progressing are the restore phase's: not set here
			// for a moment within the reconcile, which would move their
			// lastTransitionTime at every reconcile.
			return reconciler.Requeue(resync), nil
		}
		wait := r.recordReady(rc, res.State.Masters, pods)
		if refused != "" {
			// The nodes serve every slot, but clients with the spec's
			// password are refused on these: not Ready, whatever the pods
			// say. A change of the Secrets wakes the cluster at once.
			conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonPasswordsRefused, refused)
			conditions.MarkFalse(rc, cachev1.ConditionProgressing, cachev1.ReasonPasswordsRefused, "waiting for the nodes to accept a password of the spec")
			since := r.clock.Since(conditions.Get(rc, cachev1.ConditionDegraded).LastTransitionTime.Time)
			return reconciler.Requeue(unreachableRetryAfter(since)), nil
		}
		if s.accessPending != "" {
			conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonReconciling, s.accessPending)
			return reconciler.Requeue(certificateRetry), nil
		}
		if wait > 0 {
			return reconciler.Requeue(wait), nil
		}
		conditions.MarkFalse(rc, cachev1.ConditionProgressing, cachev1.ReasonIdle, "the cluster matches the spec")
		return reconciler.Requeue(resync), nil
	}
	step := res.Pending
	if step == "" {
		step = "waiting for cluster_state:ok"
	}
	conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonReconciling, step)
	conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonReconciling, step)
	return reconciler.Requeue(progressRetry), nil
}

// podReadiness is what recordCluster found of the pods that are not Ready.
type podReadiness struct {
	// names are the pods, in ordinal order.
	names []string
	// rolling is true when the only one is the pod the rollout restarts,
	// which is expected to be away a moment.
	rolling bool
	// wait is how much of notReadyGrace is left since the last of them
	// turned not Ready; 0 once it passed.
	wait time.Duration
}

// stuck reports whether pods are not Ready past the grace, for no rollout.
func (p podReadiness) stuck() bool { return len(p.names) > 0 && !p.rolling && p.wait == 0 }

// message says which pods are out of the Services, for a cluster that is ok.
func (p podReadiness) message() string {
	return fmt.Sprintf("cluster_state is ok, but the pods of %s are not Ready, so the Services do not route to them", redisadmin.ListNames(p.names))
}

// readiness looks at the pods of the first running nodes: missing or not
// Ready ones, and when the last of them turned so (its Ready condition's
// last transition, or its creation).
func (r *Reconciler) readiness(rc *cachev1.RedisCluster, pods map[string]*corev1.Pod, running int32) podReadiness {
	var out podReadiness
	var last time.Time
	for i := range running {
		name := PodName(rc, i)
		pod := pods[name]
		if podReady(pod) {
			continue
		}
		out.names = append(out.names, name)
		if pod == nil {
			continue
		}
		if since := notReadySince(pod); since.After(last) {
			last = since
		}
	}
	ro := rc.Status.Rollout
	out.rolling = ro != nil && slices.Equal(out.names, []string{ro.Pod})
	out.wait = max(0, notReadyGrace-r.clock.Since(last))
	return out
}

// notReadyGrace is how long a pod may stay not Ready before Ready says
// NodesNotReady: a new or restarted node answers a moment before its
// readiness probe passes, which is no fault to warn about.
const notReadyGrace = 30 * time.Second

// recordReady sets Ready for a cluster whose nodes all answer and serve
// every slot: True unless pods are not Ready, and otherwise False. The pod
// the rollout restarts keeps the rollout's reason, and pods not Ready for
// less than notReadyGrace are waited for; past it, Ready says
// NodesNotReady, with a Warning event when it turns so, not at every
// reconcile. It returns how soon to look again when waiting, else 0.
func (r *Reconciler) recordReady(rc *cachev1.RedisCluster, masters int, pods podReadiness) time.Duration {
	served := fmt.Sprintf("%d masters serve all %d slots", masters, redisadmin.NumSlots)
	switch {
	case len(pods.names) == 0:
		conditions.MarkTrue(rc, conditions.Ready, cachev1.ReasonClusterOK, "cluster_state is ok and "+served)
	case pods.rolling:
		ro := rc.Status.Rollout
		conditions.MarkTrue(rc, conditions.Ready, cachev1.ReasonRollingUpdate,
			fmt.Sprintf("rolling %d/%d: waiting for %s to be ready; %s meanwhile", ro.Updated, ro.Total, ro.Pod, served))
	case pods.wait > 0:
		msg := fmt.Sprintf("waiting for the pods of %s to be Ready", redisadmin.ListNames(pods.names))
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonReconciling, msg)
		conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonReconciling, msg)
		return pods.wait
	default:
		turned := true
		if was := conditions.Get(rc, conditions.Ready); was != nil {
			turned = was.Reason != cachev1.ReasonNodesNotReady
		}
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonNodesNotReady, pods.message())
		if turned {
			r.events.Warning(rc, cachev1.ReasonNodesNotReady, events.ActionReconcile, "%s", pods.message())
		}
	}
	return 0
}

// describeUnreachable names the unreachable nodes and why, in a stable
// order, up to redisadmin.MaxListedNodes of them.
func describeUnreachable(u *redisadmin.UnreachableError) string {
	return "cannot reach " + u.List()
}

// waitForNodes reports nodes that are away for an expected moment (a
// restart, a load): Progressing says what is waited for, and Ready stays
// True while the other nodes serve every slot.
func waitForNodes(rc *cachev1.RedisCluster, st redisadmin.State, reason, msg string) reconciler.Result {
	if st.SlotsAssigned == redisadmin.NumSlots {
		conditions.MarkTrue(rc, conditions.Ready, reason, msg+"; every slot is served meanwhile")
	} else {
		conditions.MarkFalse(rc, conditions.Ready, reason, msg)
	}
	conditions.MarkTrue(rc, cachev1.ConditionProgressing, reason, msg)
	return reconciler.Requeue(rolloutRetry)
}

// passwordsRefusedMessage names the nodes that refuse the passwords, or
// is empty when none does.
func passwordsRefusedMessage(nodes []string) string {
	if len(nodes) == 0 {
		return ""
	}
	return fmt.Sprintf("%s refuse every password of the default user the operator knows, so clients that log in with the spec's password are refused there; the operator cannot give them the spec's passwords", redisadmin.ListNames(nodes))
}

// describeLoading names the loading nodes in the order of their names,
// up to redisadmin.MaxListedNodes of them.
func describeLoading(u *redisadmin.UnreachableError) string {
	names := make([]string, 0, len(u.Loading))
	for n := range u.Loading {
		names = append(names, n)
	}
	sort.Strings(names)
	return redisadmin.ListNames(names)
}

// restarting reports whether the only unreachable node is the one the
// rollout restarts.
func restarting(rc *cachev1.RedisCluster, u *redisadmin.UnreachableError) bool {
	ro := rc.Status.Rollout
	if ro == nil || ro.Pod == "" {
		return false
	}
	for name := range u.Nodes {
		if name != ro.Pod {
			return false
		}
	}
	return true
}

// recordMasters notes each shard's master in the status. A shard whose
// master changed without the rollout failing it over was failed over by
// Redis itself: an event and the failover metric say so. Slots assigned
// anew in a cluster that had masters before had lost every copy of their
// keys (nodes without volume restarted together): a Warning event and the
// DataLost condition say so, instead of a silent rebuild.
func (r *Reconciler) recordMasters(s *scope, res redisadmin.Result) {
	rc := s.rc
	roles := map[string]redisadmin.NodeState{}
	for _, n := range res.State.Nodes {
		roles[n.Name] = n
	}
	var masters []string
	for _, shard := range s.topo.Shards {
		master := ""
		for _, name := range shard {
			if n := roles[name]; n.Master && n.Slots > 0 {
				master = name
			}
		}
		masters = append(masters, master)
	}
	previous := rc.Status.Masters
	if res.SlotsAssigned > 0 && len(previous) > 0 {
		msg := fmt.Sprintf("assigned %d slots anew: no node served them any more, so their keys are lost (nodes without spec.storage restarted together)", res.SlotsAssigned)
		conditions.MarkTrue(rc, cachev1.ConditionDataLost, cachev1.ReasonDataLost, msg)
		r.events.Warning(rc, cachev1.ReasonDataLost, events.ActionReconcile, "%s", msg)
	}
	if len(previous) == len(masters) {
		for i, old := range previous {
			if now := masters[i]; old != "" && now != "" && now != old {
				if failingOver(rc.Status.Rollout) && rc.Status.Rollout.Pod == old {
					continue // the rollout's own failover: the rollout records it
				}
				failovers.WithLabelValues(rc.Namespace, rc.Name, causeRedis).Inc()
				r.events.NormalRelated(rc, podRef(rc, old), cachev1.ReasonFailedOver, events.ActionReconcile, "%s took over from %s: Redis failed it over", now, old)
			}
		}
	}
	if !slices.Contains(masters, "") {
		rc.Status.Masters = masters
	}
}

// A run's moves are measured (MigrationStatus) when they took
// MinMeasuredMigration or moved MinMeasuredKeys: fewer, a few empty slots
// say, tell little about how long a scale with data takes.
const (
	// MinMeasuredMigration is the shortest run of moves that is measured.
	MinMeasuredMigration = time.Second
	// MinMeasuredKeys is the fewest keys whose move is measured.
	MinMeasuredKeys = 1000
)

// migrationStatus is the status of a run's moves that ended at now, or nil
// when they were too few to measure.
func migrationStatus(m redisadmin.Migration, now time.Time) *cachev1.MigrationStatus {
	if m.Slots == 0 || m.Duration <= 0 || (m.Duration < MinMeasuredMigration && m.Keys < MinMeasuredKeys) {
		return nil
	}
	per := func(n int64, unit time.Duration) int64 {
		return int64(float64(n) * float64(unit) / float64(m.Duration))
	}
	return &cachev1.MigrationStatus{
		Slots:          int32(m.Slots),
		Keys:           m.Keys,
		Bytes:          m.Bytes,
		Duration:       metav1.Duration{Duration: m.Duration.Round(time.Millisecond)},
		KeysPerSecond:  per(m.Keys, time.Second),
		BytesPerSecond: per(m.Bytes, time.Second),
		SlotsPerMinute: per(int64(m.Slots), time.Minute),
		MeasuredAt:     metav1.NewTime(now.Truncate(time.Second)),
	}
}
