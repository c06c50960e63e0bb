package tdset

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/utils/ptr"

	"github.com/multi-operator/multi-operator/pkg/schedule"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

func TestLeadTimeStarted(t *testing.T) {
	const (
		window = "window every day 09:00-17:00"
		early  = window + " (early by scaleUpLeadTime)"
	)
	for _, tc := range []struct {
		name     string
		was, now string
		early    bool
		want     bool
	}{
		{name: "from the default to a window early", was: "defaultReplicas", now: early, early: true, want: true},
		{name: "still early: counted once", was: early, now: early, early: true},
		{name: "the window itself, after its lead time", was: early, now: window},
		{name: "a window on time", was: "defaultReplicas", now: window},
		{name: "a new TDSet inside a lead time", was: "", now: early, early: true},
		{name: "from one early rule to the next", was: early, now: "window Mon-Fri 08:30-18:00 (early by scaleUpLeadTime)", early: true, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := leadTimeStarted(tc.was, tc.now, tc.early); got != tc.want {
				t.Errorf("leadTimeStarted(%q, %q, %v) = %v, want %v", tc.was, tc.now, tc.early, got, tc.want)
			}
		})
	}
}

// The plan's gauges follow the status recordPlan computes, and a TDSet
// whose spec cannot be evaluated, and then one that is gone, has none.
func TestPlanMetricsFollowTheStatus(t *testing.T) {
	g := NewWithT(t)
	next := time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC)
	tds := builders.TDSet("metrics-ns", "plan").Obj()
	cal, err := Calendar(tds)
	g.Expect(err).NotTo(HaveOccurred())
	plan := schedule.Result{Replicas: 5, Rule: schedule.Rule{Kind: schedule.RuleWindow}, Early: true, Next: next, NextReplicas: 5, NextRule: schedule.Rule{Kind: schedule.RuleWindow}}
	recordPlan(tds, cal, plan)
	recordPlanMetrics(tds, plan, "defaultReplicas")
	tds.Status.AvailableReplicas = ptr.To[int32](2)
	recordAvailable(tds)

	g.Expect(testutil.ToFloat64(desiredReplicas.WithLabelValues("metrics-ns", "plan"))).To(Equal(5.0))
	g.Expect(testutil.ToFloat64(availableReplicas.WithLabelValues("metrics-ns", "plan"))).To(Equal(2.0))
	g.Expect(testutil.ToFloat64(nextTransition.WithLabelValues("metrics-ns", "plan"))).To(Equal(float64(next.Unix())))
	g.Expect(testutil.ToFloat64(activeSource.WithLabelValues("metrics-ns", "plan", "window"))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(activeSource.WithLabelValues("metrics-ns", "plan", "default"))).To(BeZero())
	g.Expect(testutil.ToFloat64(leadTimeStarts.WithLabelValues("metrics-ns", "plan"))).To(Equal(1.0))

	// The next reconcile computes the same: nothing more is counted.
	recordPlanMetrics(tds, plan, tds.Status.ActiveRule)
	g.Expect(testutil.ToFloat64(leadTimeStarts.WithLabelValues("metrics-ns", "plan"))).To(Equal(1.0))

	forgetPlanMetrics(tds)
	g.Expect(testutil.CollectAndCount(desiredReplicas)).To(BeZero())
	g.Expect(testutil.CollectAndCount(nextTransition)).To(BeZero())
	g.Expect(testutil.CollectAndCount(activeSource)).To(BeZero())
	g.Expect(testutil.CollectAndCount(availableReplicas)).To(Equal(1), "the Deployment is still there")

	forgetMetrics("metrics-ns", "plan")
	g.Expect(testutil.CollectAndCount(availableReplicas)).To(BeZero())
	g.Expect(testutil.CollectAndCount(leadTimeStarts)).To(BeZero())
}
