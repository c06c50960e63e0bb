package whalesay

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/objectmetrics"
)

// The controller's own metrics, on controller-runtime's registry, so the
// manager's metrics endpoint serves them. Every series is labelled with
// the WhaleSay's namespace and name and the Job's outcome, and goes with
// the WhaleSay (forgetMetrics).
var (
	// jobsFinished counts the Jobs whose outcome the status recorded.
	jobsFinished = objectmetrics.CounterVec("whalesay_jobs_total",
		"Jobs of the WhaleSay that finished, by outcome (succeeded or failed), counted once, when the status first records the outcome.", "outcome")

	// jobDuration is how long finished Jobs ran. The buckets reach the
	// Job's active deadline, past which a Job fails.
	jobDuration = objectmetrics.HistogramVec("whalesay_job_duration_seconds",
		"Time from the start to the end of the WhaleSay's finished Jobs (the Job's startTime to its completion or failure), by outcome, observed once per Job.",
		[]float64{1, 2.5, 5, 10, 30, 60, 120, activeDeadlineSeconds}, "outcome")
)

func init() {
	metrics.Registry.MustRegister(jobsFinished, jobDuration)
}

// outcomeLabel is the outcome label of a finished phase, and "" for the
// others, which are not counted.
func outcomeLabel(phase whalesayv1alpha1.Phase) string {
	switch phase {
	case whalesayv1alpha1.PhaseSucceeded:
		return "succeeded"
	case whalesayv1alpha1.PhaseFailed:
		return "failed"
	}
	return ""
}

// recordFinished counts a Job whose outcome the status records for the
// first time, and observes how long it ran when the Job says when it
// started. recordOutcome calls it only then: a WhaleSay whose status is
// already final is not reconciled into recordOutcome again.
func recordFinished(ws *whalesayv1alpha1.WhaleSay, out jobOutcome) {
	outcome := outcomeLabel(out.phase)
	if outcome == "" {
		return
	}
	jobsFinished.WithLabelValues(ws.Namespace, ws.Name, outcome).Inc()
	if out.startTime != nil && out.completionTime != nil {
		d := out.completionTime.Sub(out.startTime.Time)
		jobDuration.WithLabelValues(ws.Namespace, ws.Name, outcome).Observe(max(d.Seconds(), 0))
	}
}

// forgetMetrics drops every series of a deleted WhaleSay.
func forgetMetrics(namespace, name string) {
	objectmetrics.Forget(namespace, name, jobsFinished, jobDuration)
}
