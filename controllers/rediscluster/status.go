package rediscluster

import (
	"errors"
	"fmt"
	"strings"

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

	var unreachable *redisadmin.UnreachableError
	switch {
	case errors.As(err, &unreachable):
		msg := describeUnreachable(unreachable)
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonNodesUnreachable, msg)
		conditions.MarkFalse(rc, cachev1.ConditionProgressing, cachev1.ReasonNodesUnreachable, "waiting for the nodes to be reachable before changing anything")
		if conditions.MarkTrue(rc, cachev1.ConditionDegraded, cachev1.ReasonNodesUnreachable, msg) {
			r.events.Warning(rc, cachev1.ReasonNodesUnreachable, events.ActionReconcile, "%s", msg)
		}
		return reconciler.Requeue(unreachableRetry), nil
	case err != nil:
		msg := err.Error()
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonClusterError, msg)
		conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonClusterError, "retrying after: "+msg)
		r.events.Warning(rc, cachev1.ReasonClusterError, events.ActionReconcile, "%s", msg)
		return reconciler.Result{}, err
	}

	ok := st.ClusterState == "ok" && res.State.SlotsAssigned == redisadmin.NumSlots
	switch {
	case !ok && res.State.SlotsAssigned > 0:
		conditions.MarkTrue(rc, cachev1.ConditionDegraded, cachev1.ReasonClusterFail,
			fmt.Sprintf("cluster_state is %s with %d of %d slots served", st.ClusterState, res.State.SlotsAssigned, redisadmin.NumSlots))
	default:
		conditions.MarkFalse(rc, cachev1.ConditionDegraded, cachev1.ReasonClusterOK, "every node is reachable")
	}
	if res.Done && ok && running == Replicas(rc) {
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

// describeUnreachable names every unreachable node and why, in a stable order.
func describeUnreachable(u *redisadmin.UnreachableError) string {
	msg := u.Error()
	return "cannot reach " + strings.TrimPrefix(msg, "unreachable nodes: ")
}
