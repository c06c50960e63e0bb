package rediscluster

import (
	"errors"
	"fmt"
	"slices"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// recordCluster writes what the run found into rc's status and conditions
// and picks when to look again. Ready is True only when the run reached
// every node, had nothing left to do, and the nodes say cluster_state:ok
// with every slot served.
func (r *Reconciler) recordCluster(s *scope, running int32, res redisadmin.Result, err error) (reconciler.Result, error) {
	rc := s.rc
	st := &rc.Status
	st.Nodes = nil
	for i := int32(0); i < running; i++ {
		st.Nodes = append(st.Nodes, PodName(rc, i))
	}
	st.ReadyNodes = 0
	for _, n := range res.State.Nodes {
		if n.ClusterState == "ok" {
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
		if res.State.SlotsAssigned == redisadmin.NumSlots {
			conditions.MarkTrue(rc, conditions.Ready, cachev1.ReasonRollingUpdate, msg+"; every slot is served meanwhile")
		} else {
			conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonRollingUpdate, msg)
		}
		conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonRollingUpdate, msg)
		return reconciler.Requeue(rolloutRetry), nil
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
	switch {
	case !ok && res.State.SlotsAssigned > 0:
		conditions.MarkTrue(rc, cachev1.ConditionDegraded, cachev1.ReasonClusterFail,
			fmt.Sprintf("cluster_state is %s with %d of %d slots served", st.ClusterState, res.State.SlotsAssigned, redisadmin.NumSlots))
	default:
		conditions.MarkFalse(rc, cachev1.ConditionDegraded, cachev1.ReasonClusterOK, "every node is reachable")
	}
	if res.Done && ok && running == Replicas(rc) {
		s.settled = true
		conditions.MarkTrue(rc, conditions.Ready, cachev1.ReasonClusterOK,
			fmt.Sprintf("cluster_state is ok and %d masters serve all %d slots", res.State.Masters, redisadmin.NumSlots))
		if s.accessPending != "" {
			conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonReconciling, s.accessPending)
			return reconciler.Requeue(certificateRetry), nil
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

// describeUnreachable names the unreachable nodes and why, in a stable
// order, up to redisadmin.MaxListedNodes of them.
func describeUnreachable(u *redisadmin.UnreachableError) string {
	return "cannot reach " + u.List()
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
