package tdset

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/objectmetrics"
	"github.com/multi-operator/multi-operator/pkg/schedule"
)

// The controller's own metrics, on controller-runtime's registry, so the
// manager's metrics endpoint serves them. Every series is labelled with
// the TDSet's namespace and name, and goes with the TDSet (forgetMetrics).
var (
	// desiredReplicas is the count the schedule asks for now: what an
	// alert compares the available replicas with.
	desiredReplicas = objectmetrics.GaugeVec("tdset_desired_replicas",
		"Replicas the TDSet's schedule asks for now (status.currentReplicas; with autoscaling, the HPA's minReplicas); absent while the spec cannot be evaluated.")

	// availableReplicas is what the Deployment or the scale target
	// reports available (status.availableReplicas).
	availableReplicas = objectmetrics.GaugeVec("tdset_available_replicas",
		"Available replicas of what the TDSet scales (status.availableReplicas): its own Deployment's availableReplicas, or its scale target's availableReplicas, else readyReplicas, else the scale subresource's status.replicas (docs/tdset.md); a pod that runs but is not available (a crash loop) does not count. Absent while the TDSet has neither a Deployment of its own nor a target it scales.")

	// nextTransition is when the count changes next, so that a dashboard
	// can show the next scale and an alert can tell a late one.
	nextTransition = objectmetrics.GaugeVec("tdset_next_transition_timestamp_seconds",
		"Unix time at which the TDSet's schedule changes the count next (early by spec.scaleUpLeadTime for a scale-up); absent when the schedule never changes it.")

	// activeSource says which kind of rule sets the count: the rule's own
	// name (status.activeRule) is free text and so not a label.
	activeSource = objectmetrics.GaugeVec("tdset_active_rule_source",
		"1 for the kind of rule that sets the TDSet's count now (source: default, window, exception or override), 0 for the others; absent while the spec cannot be evaluated.", "source")

	// leadTimeStarts counts scale-ups applied early by spec.scaleUpLeadTime.
	leadTimeStarts = objectmetrics.CounterVec("tdset_lead_time_starts_total",
		"Scale-ups of the TDSet that spec.scaleUpLeadTime started ahead of their rule: counted when the status first names the rule as applied early.")

	// scaleErrors counts failed writes of the objects that carry the count.
	scaleErrors = objectmetrics.CounterVec("tdset_scale_errors_total",
		"Reconciles of the TDSet that could not apply the count to its Deployment or HorizontalPodAutoscaler (the write failed or the name is taken by an object the TDSet does not control).")
)

// ruleSources are the values of activeSource's source label: every
// schedule.RuleKind's name.
var ruleSources = []string{
	schedule.RuleDefault.String(),
	schedule.RuleWindow.String(),
	schedule.RuleException.String(),
	schedule.RuleOverride.String(),
}

func init() {
	metrics.Registry.MustRegister(desiredReplicas, availableReplicas, nextTransition, activeSource, leadTimeStarts, scaleErrors)
}

// recordPlanMetrics sets the gauges of what the schedule asks for, from the
// status recordPlan computed, and counts a lead time that starts: the
// previous status (wasRule) named another rule, or the same one not yet
// early. A TDSet whose first status is already early counts none: no scale
// was started ahead, the TDSet just arrived during a lead time.
func recordPlanMetrics(tds *schedulev2.TDSet, plan schedule.Result, wasRule string) {
	ns, name := tds.Namespace, tds.Name
	setOrDelete(desiredReplicas, ns, name, tds.Status.CurrentReplicas)
	if t := tds.Status.NextTransitionTime; t != nil {
		nextTransition.WithLabelValues(ns, name).Set(float64(t.Unix()))
	} else {
		nextTransition.DeleteLabelValues(ns, name)
	}
	objectmetrics.SetOneOf(activeSource, ns, name, ruleSources, plan.Rule.Kind.String())
	if leadTimeStarted(wasRule, tds.Status.ActiveRule, plan.Early) {
		leadTimeStarts.WithLabelValues(ns, name).Inc()
	}
}

// leadTimeStarted reports whether a status that goes from activeRule was
// to now, applied early or not, starts a lead time.
func leadTimeStarted(was, now string, early bool) bool {
	return early && was != "" && was != now
}

// forgetPlanMetrics drops the gauges of a schedule that cannot be
// evaluated, which asks for nothing.
func forgetPlanMetrics(tds *schedulev2.TDSet) {
	ns, name := tds.Namespace, tds.Name
	objectmetrics.Forget(ns, name, desiredReplicas, nextTransition, activeSource)
}

// recordAvailable sets the available replicas from the status.
func recordAvailable(tds *schedulev2.TDSet) {
	setOrDelete(availableReplicas, tds.Namespace, tds.Name, tds.Status.AvailableReplicas)
}

// setOrDelete sets a TDSet's gauge to v, or drops it when v is nil.
func setOrDelete(g *prometheus.GaugeVec, namespace, name string, v *int32) {
	if v == nil {
		g.DeleteLabelValues(namespace, name)
		return
	}
	g.WithLabelValues(namespace, name).Set(float64(*v))
}

// forgetMetrics drops every series of a deleted TDSet.
func forgetMetrics(namespace, name string) {
	objectmetrics.Forget(namespace, name, desiredReplicas, availableReplicas, nextTransition, activeSource, leadTimeStarts, scaleErrors)
}

// countScaleError counts a failed apply of the Deployment or the HPA.
func countScaleError(tds *schedulev2.TDSet) {
	scaleErrors.WithLabelValues(tds.Namespace, tds.Name).Inc()
}
