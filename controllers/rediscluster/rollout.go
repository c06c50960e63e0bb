package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

const (
	// stepTimeout bounds one rollout step: an image pull, an AOF load and
	// a resync fit in it; past it the rollout reports itself stalled.
	stepTimeout = 5 * time.Minute
	// rolloutRetry is how soon a rollout looks again at a restarting node.
	rolloutRetry = 2 * time.Second
	// handoverGrace is how long a master that was just failed over keeps
	// running before its pod is deleted. Every node already tells the new
	// slot map; a client that still sends commands to the old master is
	// answered MOVED and follows it, instead of dialing an address that is
	// gone until its dial timeout.
	handoverGrace = 5 * time.Second
	// handoverPrefix begins the rollout step of a handover; the pod is the
	// step's.
	handoverPrefix = "handing the clients of "
	// failoverPrefix begins the rollout step of a failover the operator
	// asked for; the pod is the step's.
	failoverPrefix = "failing over "
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=delete

// reconcileRollout rolls a changed pod template out one node at a time,
// since the StatefulSet's OnDelete strategy leaves that to the operator.
// Each step starts only when the cluster is settled (ok, every slot served,
// every node on its place, nothing left to move): replicas first, each
// while its master keeps another replica in sync or has none; then every
// master, after CLUSTER FAILOVER to its best replica and a grace in which
// its clients learn the new master. A master without a
// replica restarts in place when its volume keeps its data, and is
// otherwise evacuated first: its slots and keys move to the other masters
// and come back once it runs again.
func (r *Reconciler) reconcileRollout(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	sts := &appsv1.StatefulSet{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(rc), sts); err != nil {
		return reconciler.Result{}, client.IgnoreNotFound(err)
	}
	revision := sts.Status.UpdateRevision
	if revision == "" || sts.Status.ObservedGeneration < sts.Generation {
		return reconciler.Requeue(rolloutRetry), nil // the StatefulSet controller has not seen our template yet
	}
	pods, err := r.pods(ctx, rc)
	if err != nil {
		return reconciler.Result{}, err
	}
	total := Replicas(rc)
	var outdated, stuck []string
	waiting := ""
	for i := range total {
		name := PodName(rc, i)
		pod, ok := pods[name]
		old := ok && pod.Labels[appsv1.ControllerRevisionHashLabelKey] != revision
		switch {
		case !ok || !pod.DeletionTimestamp.IsZero():
			waiting = name + " to be created again"
		case !podReady(pod) && old && r.stuck(pod):
			stuck = append(stuck, name)
		case !podReady(pod):
			waiting = name + " to be ready"
		case old:
			outdated = append(outdated, name)
		}
	}
	// Pods that cannot start on the old template go first: the new one is
	// what cures them, and they serve nothing meanwhile.
	outdated = append(stuck, outdated...)
	ro := rc.Status.Rollout
	// Without a rollout in progress, pods that are not there yet are the
	// cluster phase's business: nothing is rolled out.
	if len(outdated) == 0 && (ro == nil || waiting == "" && ro.Evacuating == "") {
		if ro != nil {
			r.events.Normal(rc, cachev1.ReasonRolloutFinished, events.ActionUpdate, "Every node runs revision %s", revision)
			rolloutStep.DeleteLabelValues(rc.Namespace, rc.Name)
		}
		rc.Status.Rollout = nil
		return reconciler.Result{}, nil
	}
	if ro == nil || ro.Revision != revision {
		ro = &cachev1.RolloutStatus{Revision: revision}
		rc.Status.Rollout = ro
	}
	ro.Total, ro.Updated = total, total-int32(len(outdated))
	rolloutStep.WithLabelValues(rc.Namespace, rc.Name).Set(float64(ro.Updated))
	if ro.Evacuating != "" && !slices.Contains(outdated, ro.Evacuating) && waiting == "" {
		// The evacuated master runs the new revision: it joins again and
		// takes its share of the slots back.
		ro.Evacuating = ""
		return r.rolloutWaits(rc, "giving the slots back"), nil
	}
	if waiting != "" {
		return r.rolloutWaits(rc, "waiting for "+waiting), nil
	}
	if !s.settled {
		if name := unreachableStuck(stuck, s.cluster.State.Unreachable); name != "" {
			// The cluster cannot settle while this node does not run; a
			// node that never started holds nothing to hand over.
			return r.restart(ctx, rc, pods[name], fmt.Sprintf("restarting %s, which cannot start (%s)", name, cannotStart(pods[name])))
		}
		return r.rolloutWaits(rc, "waiting for the cluster to settle"), nil
	}
	next, err := r.nextStep(ctx, s, pods, outdated)
	if err != nil || next == nil {
		return r.rolloutWaits(rc, "waiting for a replica to be in sync"), err
	}
	res, err := next(ctx)
	if err != nil {
		// A step that keeps failing, such as a failover that never
		// completes, stalls the rollout like one that never finishes.
		return r.rolloutWaits(rc, "retrying after: "+err.Error()), err
	}
	return res, nil
}

// stuck reports whether pod has a container that cannot start, and has
// not been Ready for notReadyGrace: a moment's pull error may pass.
func (r *Reconciler) stuck(pod *corev1.Pod) bool {
	return cannotStart(pod) != "" && r.clock.Since(notReadySince(pod)) >= notReadyGrace
}

// unreachableStuck returns the first of the stuck pods when the nodes the
// cluster phase could not reach are all stuck ones, or "".
func unreachableStuck(stuck []string, unreachable map[string]string) string {
	if len(stuck) == 0 || len(unreachable) == 0 {
		return ""
	}
	for name := range unreachable {
		if !slices.Contains(stuck, name) {
			return ""
		}
	}
	for _, name := range stuck {
		if _, ok := unreachable[name]; ok {
			return name
		}
	}
	return ""
}

// step is one rollout action, chosen by nextStep.
type step func(ctx context.Context) (reconciler.Result, error)

// nextStep picks what to restart next among the outdated nodes, or nil
// when no node may go yet. pods holds every outdated node's pod as read.
func (r *Reconciler) nextStep(ctx context.Context, s *scope, pods map[string]*corev1.Pod, outdated []string) (step, error) {
	rc := s.rc
	ro := rc.Status.Rollout
	if handingOver(ro) && slices.Contains(outdated, ro.Pod) {
		name := ro.Pod
		return func(ctx context.Context) (reconciler.Result, error) {
			// The status keeps whole seconds: the failover may have
			// finished up to a second after the time read back.
			started := ro.StepStarted.Time.Truncate(time.Second).Add(time.Second)
			if left := handoverGrace - r.clock.Since(started); left > 0 {
				return reconciler.Requeue(left), nil
			}
			return r.restart(ctx, rc, pods[name], "restarting "+name+" after its failover")
		}, nil
	}
	roles := map[string]redisadmin.NodeState{}
	replicasOf := map[string][]string{}
	for _, n := range s.cluster.State.Nodes {
		roles[n.Name] = n
		if !n.Master {
			replicasOf[n.MasterName] = append(replicasOf[n.MasterName], n.Name)
		}
	}
	if failingOver(ro) && slices.Contains(outdated, ro.Pod) {
		if n, ok := roles[ro.Pod]; ok && !n.Master && n.MasterName != "" {
			// The failover took place, but the reconcile that asked for it
			// ended before recording it (an error while waiting for the
			// nodes to agree, or a crash): the handover starts now, rather
			// than the former master be restarted at once as a replica.
			name, promoted := ro.Pod, n.MasterName
			return func(context.Context) (reconciler.Result, error) { return r.handOver(rc, name, promoted), nil }, nil
		}
	}
	admin := r.admin(rc, s)
	for _, name := range outdated {
		n := roles[name]
		if n.Master {
			continue
		}
		if others := without(replicasOf[n.MasterName], name); len(others) > 0 {
			inSync, err := admin.InSyncReplicas(ctx, s.topo, n.MasterName)
			if err != nil {
				return nil, err
			}
			if len(without(inSync, name)) == 0 {
				continue // its master would be left without a replica in sync
			}
		}
		return func(ctx context.Context) (reconciler.Result, error) {
			return r.restart(ctx, rc, pods[name], fmt.Sprintf("restarting replica %s", name))
		}, nil
	}
	for _, name := range outdated {
		if !roles[name].Master {
			continue
		}
		switch {
		case len(replicasOf[name]) > 0:
			return func(ctx context.Context) (reconciler.Result, error) {
				r.beginStep(rc, name, failoverPrefix+name)
				promoted, err := admin.Failover(ctx, s.topo, name)
				if errors.Is(err, redisadmin.ErrNoReplica) {
					return r.rolloutWaits(rc, "waiting for a replica of "+name+" to be in sync"), nil
				}
				if err != nil {
					return reconciler.Result{}, err
				}
				return r.handOver(rc, name, promoted), nil
			}, nil
		case rc.Spec.Storage != nil:
			return func(ctx context.Context) (reconciler.Result, error) {
				return r.restart(ctx, rc, pods[name], fmt.Sprintf("restarting master %s in place: its volume keeps its data", name))
			}, nil
		case ro.Evacuating == name:
			// Drained and forgotten (the cluster is settled): restart it empty.
			return func(ctx context.Context) (reconciler.Result, error) {
				return r.restart(ctx, rc, pods[name], fmt.Sprintf("restarting %s, whose slots were moved away", name))
			}, nil
		case ro.Evacuating == "":
			return func(context.Context) (reconciler.Result, error) {
				ro.Evacuating = name
				r.beginStep(rc, name, fmt.Sprintf("moving the slots of %s away before restarting it: it has no replica and no volume", name))
				r.events.Normal(rc, cachev1.ReasonRollingUpdate, events.ActionUpdate, "Moving the slots of %s to the other masters before restarting it", name)
				return reconciler.Requeue(rolloutRetry), nil
			}, nil
		}
	}
	return nil, nil
}

// handOver records that the rollout failed the master name over to
// promoted, and starts the grace before its restart.
func (r *Reconciler) handOver(rc *cachev1.RedisCluster, name, promoted string) reconciler.Result {
	failovers.WithLabelValues(rc.Namespace, rc.Name, causeRollout).Inc()
	// Not Redis's own failover: the next status shows why.
	for i, m := range rc.Status.Masters {
		if m == name {
			rc.Status.Masters[i] = promoted
		}
	}
	r.events.NormalRelated(rc, podRef(rc, name), cachev1.ReasonFailedOver, events.ActionUpdate, "Failed over %s to %s before restarting it", name, promoted)
	r.beginStep(rc, name, fmt.Sprintf("%s%s over to %s before restarting it", handoverPrefix, name, promoted))
	return reconciler.Requeue(handoverGrace)
}

// failingOver reports whether the rollout's step is a failover the
// operator asked for of ro.Pod, not yet recorded as done.
func failingOver(ro *cachev1.RolloutStatus) bool {
	return ro != nil && ro.Step == failoverPrefix+ro.Pod
}

// handingOver reports whether the rollout's step is the grace between a
// master's failover and its restart.
func handingOver(ro *cachev1.RolloutStatus) bool {
	return ro.StepStarted != nil && strings.HasPrefix(ro.Step, handoverPrefix+ro.Pod+" ")
}

// restart deletes pod, the outdated one the rollout read, so that the
// StatefulSet makes it again from the current revision. The delete names
// its UID: when the read lagged and the pod was already made again, the
// new one under the same name stays, and the restart counts as done.
func (r *Reconciler) restart(ctx context.Context, rc *cachev1.RedisCluster, pod *corev1.Pod, what string) (reconciler.Result, error) {
	name := pod.Name
	r.beginStep(rc, name, what)
	target := podRef(rc, name)
	target.UID = pod.UID
	if err := apply.DeleteControlled(ctx, r.client, target); err != nil {
		return reconciler.Result{}, err
	}
	r.events.NormalRelated(rc, podRef(rc, name), cachev1.ReasonPodRestarted, events.ActionUpdate, "%s (%d of %d nodes updated)", capitalize(what), rc.Status.Rollout.Updated, rc.Status.Rollout.Total)
	return reconciler.Requeue(rolloutRetry), nil
}

// podRef is rc's pod name, as much of it as a delete or an event's related
// object needs.
func podRef(rc *cachev1.RedisCluster, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rc.Namespace, Name: name}}
}

// beginStep records the current step and when it began.
func (r *Reconciler) beginStep(rc *cachev1.RedisCluster, pod, what string) {
	ro := rc.Status.Rollout
	if ro.Pod != pod || ro.Step != what {
		ro.Pod, ro.Step = pod, what
		now := metav1.NewTime(r.clock.Now())
		ro.StepStarted = &now
	}
	r.reportRollout(rc, what)
}

// rolloutWaits reports that the rollout waits, and whether the current
// step has taken too long.
func (r *Reconciler) rolloutWaits(rc *cachev1.RedisCluster, what string) reconciler.Result {
	ro := rc.Status.Rollout
	if ro.StepStarted == nil {
		now := metav1.NewTime(r.clock.Now())
		ro.StepStarted = &now
	}
	if elapsed := r.clock.Since(ro.StepStarted.Time); elapsed > stepTimeout {
		msg := fmt.Sprintf("rolling %d/%d: %s has not finished after %s: %s", ro.Updated, ro.Total, stepName(ro), elapsed.Round(time.Second), what)
		if conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonRolloutStalled, msg) {
			r.events.Warning(rc, cachev1.ReasonRolloutStalled, events.ActionUpdate, "%s", msg)
		}
		conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonRolloutStalled, msg)
		return reconciler.Requeue(rolloutRetry)
	}
	r.reportRollout(rc, what)
	return reconciler.Requeue(rolloutRetry)
}

func (r *Reconciler) reportRollout(rc *cachev1.RedisCluster, what string) {
	ro := rc.Status.Rollout
	conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonRollingUpdate,
		fmt.Sprintf("rolling %d/%d: %s", ro.Updated, ro.Total, what))
}

func stepName(ro *cachev1.RolloutStatus) string {
	if ro.Step == "" {
		return "the rollout"
	}
	return ro.Step
}

// pods returns the cluster's pods by name, from the cache.
func (r *Reconciler) pods(ctx context.Context, rc *cachev1.RedisCluster) (map[string]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.client.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels(ownership.SelectorLabels(appName, rc.Name))); err != nil {
		return nil, err
	}
	out := make(map[string]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

func without(list []string, v string) []string {
	var out []string
	for _, x := range list {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
