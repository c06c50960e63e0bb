package tdset

import (
	"context"
	"math"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// redisClusterKind is the scale target whose growth takes the time its
// keys take to move, which its status measures (status.migration).
var redisClusterKind = schema.GroupKind{Group: "cache.example.com", Kind: "RedisCluster"}

const (
	// redisClusterSlots is how many slots a Redis Cluster shares out.
	redisClusterSlots = 16384
	// migrationLeadFactor leaves room over the measured rate: a busier
	// cluster, or larger values, move slower than the last measurement.
	migrationLeadFactor = 1.5
	// NodeStartAllowance is the time a scale-up of a RedisCluster gets,
	// beyond moving its slots, for the new pods to start and join the
	// cluster. It is not measured.
	NodeStartAllowance = time.Minute
	// leadTimeStep rounds an estimated lead time up, so that a slightly
	// different measurement moves no transition.
	leadTimeStep = 10 * time.Second
)

// migrationLeadTime estimates how long a RedisCluster target takes to
// grow from lowest to highest masters: the slots the new masters take
// (an even share each) at the rate of the cluster's last measured
// migration (status.migration.slotsPerMinute), with migrationLeadFactor's
// room, plus NodeStartAllowance. ok is false when the target is not a
// RedisCluster, the calendar never grows it, or no migration was measured
// yet.
func migrationLeadTime(target *unstructured.Unstructured, lowest, highest int32) (lead time.Duration, ok bool) {
	if target == nil || target.GroupVersionKind().GroupKind() != redisClusterKind || highest <= lowest || highest <= 0 {
		return 0, false
	}
	perMinute, found := nestedNumber(target.Object, "status", "migration", "slotsPerMinute")
	if !found || perMinute <= 0 {
		return 0, false
	}
	slots := float64(redisClusterSlots) * float64(highest-max(lowest, 0)) / float64(highest)
	moving := time.Duration(slots / perMinute * migrationLeadFactor * float64(time.Minute))
	lead = min(moving+NodeStartAllowance, schedule.MaxLeadTime)
	// Round up to the step (and stay within the bound).
	if r := lead % leadTimeStep; r != 0 {
		lead = min(lead+leadTimeStep-r, schedule.MaxLeadTime)
	}
	return lead, true
}

// nestedNumber is a number of an unstructured object; found is false when
// it is absent or not a number. A custom resource's status may hold
// anything, and a float beyond int64 has no defined conversion.
func nestedNumber(obj map[string]any, fields ...string) (float64, bool) {
	var v any = obj
	for _, f := range fields {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = m[f]
	}
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// estimateLeadTime reads a RedisCluster target and, when its growth to the
// calendar's highest count takes longer than spec.scaleUpLeadTime, makes
// the calendar start scale-ups that much early (s.estimatedLead). Any
// other target, or one that cannot be read, keeps the spec's lead time:
// the target phase reports what is wrong with it.
func (r *Reconciler) estimateLeadTime(ctx context.Context, s *scope, cal *schedule.Calendar) error {
	s.target, s.estimatedLead = nil, nil
	ref := s.tds.Spec.ScaleTargetRef
	if ref == nil {
		return nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if gvk.GroupKind() != redisClusterKind || !slices.Contains(r.scalableKinds, gvk.GroupKind()) {
		return nil
	}
	target, err := r.getTarget(ctx, s.tds.Namespace, gvk, ref.Name)
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil
	} else if err != nil {
		return err
	}
	s.target = target
	lowest, highest := cal.Counts()
	if lead, ok := migrationLeadTime(target, lowest, highest); ok && lead > cal.LeadTime {
		cal.LeadTime = lead
		s.estimatedLead = &lead
	}
	return nil
}
