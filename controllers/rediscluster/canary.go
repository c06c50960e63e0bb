package rediscluster

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/rediscanary"
)

// DefaultCanaryInterval is the write canary's interval when the spec
// names none.
const DefaultCanaryInterval = 5 * time.Second

// canaryLossQueue bounds the losses waiting to be reconciled; more are
// dropped, as the next reconcile reports them all.
const canaryLossQueue = 64

// CanarySecretName names the generated Secret with the password of the
// write canary's ACL user. No pod mounts it: only the manager reads it.
func CanarySecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-canary" }

// CanaryEnabled reports whether rc runs the write canary.
func CanaryEnabled(rc *cachev1.RedisCluster) bool {
	m := rc.Spec.Monitoring
	return m != nil && m.Canary != nil && m.Canary.Enabled
}

// CanaryInterval is the time between two probes of rc's canary.
func CanaryInterval(rc *cachev1.RedisCluster) time.Duration {
	if m := rc.Spec.Monitoring; m != nil && m.Canary != nil && m.Canary.Interval != nil {
		// Admission keeps it from 1s to 60s; an object stored before that
		// rule is clamped.
		return min(max(m.Canary.Interval.Duration, time.Second), time.Minute)
	}
	return DefaultCanaryInterval
}

// setupCanaries makes the Runnable that probes the clusters' canaries,
// on the leader only. A probe that finds a loss reconciles the cluster.
func (r *Reconciler) setupCanaries(mgr ctrl.Manager) error {
	r.canaryLost = make(chan event.TypedGenericEvent[*cachev1.RedisCluster], canaryLossQueue)
	r.canaries = rediscanary.New(0, func(key types.NamespacedName) {
		rc := &cachev1.RedisCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		select {
		case r.canaryLost <- event.TypedGenericEvent[*cachev1.RedisCluster]{Object: rc}:
		default:
		}
	})
	return mgr.Add(r.canaries)
}

// canaryLossSource reconciles a cluster whose canary found a loss.
func (r *Reconciler) canaryLossSource() source.Source {
	return source.Channel(r.canaryLost, &handler.TypedEnqueueRequestForObject[*cachev1.RedisCluster]{})
}

// readCanaryPassword generates <name>-canary when the canary runs and
// puts its password in s.access. A disabled canary's Secret is kept, for
// when it is enabled again; the nodes drop its user.
func (r *Reconciler) readCanaryPassword(ctx context.Context, s *scope) error {
	if !CanaryEnabled(s.rc) {
		return nil
	}
	secret, err := r.generatedPassword(ctx, s.rc, CanarySecretName(s.rc))
	if err != nil {
		return err
	}
	s.access.CanaryPassword = string(secret.Data[PasswordKey])
	return nil
}

// reconcileCanary registers rc's canary with the Runner, or removes it,
// and records what the canary found: the WritesLost condition, with a
// Warning event when it reports a new loss, and the rollout's counts. It
// runs before the Redis phases, so that the canary follows new pod
// addresses even while those phases wait, and never stops the reconcile.
// A new cluster's canary starts once the cluster served every slot.
func (r *Reconciler) reconcileCanary(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	key := types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}
	if !CanaryEnabled(rc) || s.access.CanaryPassword == "" {
		r.canaries.Remove(key)
		conditions.Remove(rc, cachev1.ConditionWritesLost)
		if rc.Status.Rollout != nil {
			rc.Status.Rollout.Canary = nil
		}
		return reconciler.Result{}, nil
	}
	if len(rc.Status.Masters) == 0 {
		// The cluster has not served every slot yet: its bootstrap is not
		// a write outage.
		return reconciler.Result{}, nil
	}
	cfg := rediscanary.Config{
		Interval: CanaryInterval(rc),
		Password: s.access.CanaryPassword,
		Target:   redisadmin.CanaryTarget{Replicas: int(min(rc.Spec.ReplicasPerMaster, 1))},
	}
	if s.tls != nil {
		cfg.TLSRootCAs = s.tls.RootCAs
	}
	for _, shard := range s.topo.Shards {
		var addrs []string
		for _, pod := range shard {
			// A pod without an address is left out until it has one.
			if addr, err := r.resolve(ctx, rc, pod); err == nil {
				addrs = append(addrs, addr)
			}
		}
		cfg.Target.Shards = append(cfg.Target.Shards, addrs)
	}
	if ro := rc.Status.Rollout; ro != nil {
		cfg.Rollout, cfg.Step = ro.Revision, ro.Step
		if ro.StepStarted != nil {
			cfg.Step += "@" + ro.StepStarted.UTC().Format(time.RFC3339)
		}
	}
	r.canaries.Set(key, cfg)
	snap, _ := r.canaries.Snapshot(key)
	recordCanary(rc, snap, r.events)
	return reconciler.Result{}, nil
}

// recordCanary writes what the canary found into rc's status. The
// condition stays True once a loss was seen, also across a manager
// restart, whose canary counts from zero; a Warning event goes with each
// new count.
func recordCanary(rc *cachev1.RedisCluster, snap rediscanary.Snapshot, rec events.Recorder) {
	switch {
	case snap.Total.WritesLost > 0:
		msg := fmt.Sprintf("the write canary found %d acknowledged writes lost since %s, the latest on shard %d at %s",
			snap.Total.WritesLost, snap.Since.UTC().Format(time.RFC3339), snap.LastLossShard, snap.LastLoss.UTC().Format(time.RFC3339))
		if conditions.MarkTrue(rc, cachev1.ConditionWritesLost, cachev1.ReasonAcknowledgedWritesLost, msg) {
			rec.Warning(rc, cachev1.ReasonAcknowledgedWritesLost, events.ActionReconcile, "%s", msg)
		}
	case conditions.Get(rc, cachev1.ConditionWritesLost) == nil:
		conditions.MarkFalse(rc, cachev1.ConditionWritesLost, cachev1.ReasonNoWritesLost, "the write canary has found no acknowledged write lost")
	}
	ro := rc.Status.Rollout
	if ro == nil {
		return
	}
	was := ro.Canary
	if was == nil {
		was = &cachev1.RolloutCanary{}
	}
	// The rollout's counts never go down: a manager that started during
	// the rollout counts from then.
	ro.Canary = &cachev1.RolloutCanary{
		WritesLost:             max(was.WritesLost, int64(snap.Rollout.WritesLost)),
		WriteOutageSeconds:     max(was.WriteOutageSeconds, int64(snap.Rollout.OutageSeconds)),
		StepWritesLost:         int64(snap.Step.WritesLost),
		StepWriteOutageSeconds: int64(snap.Step.OutageSeconds),
	}
}
