package whalesay

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
)

func TestOutcomeLabel(t *testing.T) {
	for phase, want := range map[whalesayv1alpha1.Phase]string{
		whalesayv1alpha1.PhaseSucceeded: "succeeded",
		whalesayv1alpha1.PhaseFailed:    "failed",
		whalesayv1alpha1.PhaseRunning:   "",
		whalesayv1alpha1.PhasePending:   "",
	} {
		if got := outcomeLabel(phase); got != want {
			t.Errorf("outcomeLabel(%s) = %q, want %q", phase, got, want)
		}
	}
}

func TestRecordFinishedCountsFinishedJobsOnly(t *testing.T) {
	g := NewWithT(t)
	ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Namespace: "metrics-ns", Name: "moo"}}
	start := metav1.NewTime(time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(7 * time.Second))

	recordFinished(ws, jobOutcome{phase: whalesayv1alpha1.PhaseRunning, startTime: &start})
	g.Expect(testutil.CollectAndCount(jobsFinished)).To(BeZero(), "a running Job is not counted")

	recordFinished(ws, jobOutcome{phase: whalesayv1alpha1.PhaseSucceeded, startTime: &start, completionTime: &end})
	recordFinished(ws, jobOutcome{phase: whalesayv1alpha1.PhaseFailed, completionTime: &end})
	g.Expect(testutil.ToFloat64(jobsFinished.WithLabelValues("metrics-ns", "moo", "succeeded"))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(jobsFinished.WithLabelValues("metrics-ns", "moo", "failed"))).To(Equal(1.0))
	g.Expect(testutil.CollectAndCount(jobDuration)).To(Equal(1), "a Job without a start time has no duration")

	forgetMetrics("metrics-ns", "moo")
	g.Expect(testutil.CollectAndCount(jobsFinished)).To(BeZero())
	g.Expect(testutil.CollectAndCount(jobDuration)).To(BeZero())
}
