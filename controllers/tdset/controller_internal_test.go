package tdset

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/schedule"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

func TestRequeueAfter(t *testing.T) {
	now := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		resync time.Duration
		next   time.Duration // from now; 0: the schedule never changes
		never  bool
		want   time.Duration
	}{
		{name: "until the boundary", next: 7 * time.Hour, want: 7 * time.Hour},
		{name: "exactly, to the nanosecond", next: 800*time.Millisecond + time.Nanosecond, want: 800*time.Millisecond + time.Nanosecond},
		{name: "a boundary days ahead", next: 6*24*time.Hour + 20*time.Hour, want: 6*24*time.Hour + 20*time.Hour},
		{name: "resyncInterval caps", resync: 30 * time.Minute, next: 7 * time.Hour, want: 30 * time.Minute},
		{name: "resyncInterval does not delay", resync: 30 * time.Minute, next: 10 * time.Minute, want: 10 * time.Minute},
		{name: "never changes: no requeue", never: true, want: 0},
		{name: "never changes: resyncInterval", resync: time.Hour, never: true, want: time.Hour},
		// A boundary at or before now (a clock that stood still) still
		// asks for a requeue, never for none.
		{name: "boundary now", next: 0, want: time.Nanosecond},
		{name: "boundary passed", next: -time.Second, want: time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			next := now.Add(tc.next)
			if tc.never {
				next = time.Time{}
			}
			g.Expect(requeueAfter(tc.resync, next, now)).To(Equal(tc.want))
		})
	}
}

func TestResyncCap(t *testing.T) {
	g := NewWithT(t)
	g.Expect(resyncCap(builders.TDSet("ns", "x").Obj())).To(BeZero())
	g.Expect(resyncCap(builders.TDSet("ns", "x").ResyncInterval(90 * time.Second).Obj())).To(Equal(90 * time.Second))
}

// describe and ruleReason name what sets the count, as the status, the
// conditions and the events show it.
func TestDescribeAndRuleReason(t *testing.T) {
	until := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	tds := builders.TDSet("ns", "x").Windows(
		builders.Window("08:30", "18:00", 6, "Mon", "Tue", "Wed", "Thu", "Fri"),
		builders.Window("19:00", "00:00", 2),
		builders.Window("18:30", "19:00", 3, "Mon", "Wed", "Sat"),
	).Exception("2026-12-25", 1).Override(9, until).Obj()
	cal, err := Calendar(tds)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule   schedule.Rule
		early  bool
		want   string
		reason string
	}{
		{rule: schedule.Rule{Kind: schedule.RuleWindow, Index: 0}, want: "window Mon-Fri 08:30-18:00", reason: schedulev2.ReasonWindowActive},
		{rule: schedule.Rule{Kind: schedule.RuleWindow, Index: 1}, want: "window every day 19:00-00:00", reason: schedulev2.ReasonWindowActive},
		{rule: schedule.Rule{Kind: schedule.RuleWindow, Index: 2}, want: "window Mon,Wed,Sat 18:30-19:00", reason: schedulev2.ReasonWindowActive},
		{rule: schedule.Rule{Kind: schedule.RuleWindow, Index: 0}, early: true, want: "window Mon-Fri 08:30-18:00 (early by scaleUpLeadTime)", reason: schedulev2.ReasonWindowActive},
		{rule: schedule.Rule{Kind: schedule.RuleException, Index: 0}, want: "exception 2026-12-25", reason: schedulev2.ReasonExceptionActive},
		{rule: schedule.Rule{Kind: schedule.RuleOverride}, want: "override until 2026-11-30T18:00:00Z", reason: schedulev2.ReasonOverrideActive},
		{rule: schedule.Rule{}, want: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas},
	} {
		t.Run(tc.want, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(describe(cal, tc.rule, tc.early)).To(Equal(tc.want))
			g.Expect(ruleReason(&schedule.Calendar{}, schedule.Result{Rule: tc.rule, Early: tc.early})).To(Equal(tc.reason))
		})
	}
}

func TestCapitalize(t *testing.T) {
	g := NewWithT(t)
	g.Expect(capitalize("window every day 09:00-17:00")).To(Equal("Window every day 09:00-17:00"))
	g.Expect(capitalize("defaultReplicas")).To(Equal("DefaultReplicas"))
	g.Expect(capitalize("")).To(Equal(""))
	g.Expect(capitalize("Already")).To(Equal("Already"))
}

// recordPlan fills the status and the Scheduled condition from a plan.
func TestRecordPlan(t *testing.T) {
	next := time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name         string
		suspend      bool
		plan         schedule.Result
		activeRule   string
		activeWindow *int32
		next         bool
		status       metav1.ConditionStatus
		reason       string
		message      string
	}{
		{
			name:       "a window until the next",
			plan:       schedule.Result{Replicas: 5, Rule: schedule.Rule{Kind: schedule.RuleWindow}, Next: next, NextReplicas: 3, NextRule: schedule.Rule{Kind: schedule.RuleWindow, Index: 1}},
			activeRule: "window every day 09:00-17:00", activeWindow: ptr.To[int32](0), next: true,
			status: metav1.ConditionTrue, reason: schedulev2.ReasonWindowActive,
			message: "Window every day 09:00-17:00 sets 5 replicas until 2026-03-10T17:00:00Z, then 3 (window every day 17:00-19:00)",
		},
		{
			name:       "early by the lead time: no active window yet",
			plan:       schedule.Result{Replicas: 5, Rule: schedule.Rule{Kind: schedule.RuleWindow}, Early: true, Next: next, NextReplicas: 5, NextRule: schedule.Rule{Kind: schedule.RuleWindow}},
			activeRule: "window every day 09:00-17:00 (early by scaleUpLeadTime)", next: true,
			status: metav1.ConditionTrue, reason: schedulev2.ReasonWindowActive,
			message: "Window every day 09:00-17:00 (early by scaleUpLeadTime) sets 5 replicas until 2026-03-10T17:00:00Z, then 5 (window every day 09:00-17:00)",
		},
		{
			name:       "the default forever",
			plan:       schedule.Result{Replicas: 3},
			activeRule: "defaultReplicas",
			status:     metav1.ConditionTrue, reason: schedulev2.ReasonDefaultReplicas,
			message: "DefaultReplicas sets 3 replicas; the schedule never changes it",
		},
		{
			name:       "suspended",
			suspend:    true,
			plan:       schedule.Result{Replicas: 3, Rule: schedule.Rule{Kind: schedule.RuleWindow, Index: 1}, Next: next, NextReplicas: 2, NextRule: schedule.Rule{Kind: schedule.RuleWindow, Index: 2}},
			activeRule: "window every day 17:00-19:00", activeWindow: ptr.To[int32](1), next: true,
			status: metav1.ConditionFalse, reason: schedulev2.ReasonSuspended,
			message: "spec.suspend is true: the schedule's 3 replicas (window every day 17:00-19:00) are not applied",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tds := builders.TDSet("ns", "x").Suspend(tc.suspend).Obj()
			// Left over from an earlier reconcile: replaced, not kept.
			tds.Status.ActiveWindow = ptr.To[int32](4)
			tds.Status.NextTransitionTime = &metav1.Time{Time: next.Add(time.Hour)}
			cal, err := Calendar(tds)
			g.Expect(err).NotTo(HaveOccurred())
			recordPlan(tds, cal, tc.plan)
			st := tds.Status
			g.Expect(st.CurrentReplicas).To(HaveValue(Equal(tc.plan.Replicas)))
			g.Expect(st.ActiveRule).To(Equal(tc.activeRule))
			g.Expect(st.ActiveWindow).To(Equal(tc.activeWindow))
			if tc.next {
				g.Expect(st.NextTransitionTime.Time).To(Equal(next))
				g.Expect(st.NextReplicas).To(HaveValue(Equal(tc.plan.NextReplicas)))
			} else {
				g.Expect(st.NextTransitionTime).To(BeNil())
				g.Expect(st.NextReplicas).To(BeNil())
			}
			c := conditions.Get(tds, schedulev2.ConditionScheduled)
			g.Expect(c.Status).To(Equal(tc.status))
			g.Expect(c.Reason).To(Equal(tc.reason))
			g.Expect(c.Message).To(Equal(tc.message))
		})
	}
}

func TestReportReady(t *testing.T) {
	for _, tc := range []struct {
		name     string
		suspend  bool
		replicas *int32
		gen      int64
		status   appsv1.DeploymentStatus
		ready    metav1.ConditionStatus
		reason   string
		message  string
	}{
		{name: "all available", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 5}, ready: metav1.ConditionTrue, reason: schedulev2.ReasonAvailable, message: "5/5 replicas available"},
		{name: "scaling up", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 3}, ready: metav1.ConditionFalse, reason: schedulev2.ReasonProgressing, message: "3/5 replicas available"},
		{name: "scaling down counts as available", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 7, AvailableReplicas: 7}, ready: metav1.ConditionTrue, reason: schedulev2.ReasonAvailable},
		{name: "spec not yet seen", gen: 3, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 5}, ready: metav1.ConditionFalse, reason: schedulev2.ReasonProgressing},
		{name: "rolling out a new image", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 2, AvailableReplicas: 5}, ready: metav1.ConditionFalse, reason: schedulev2.ReasonProgressing},
		{name: "suspended", suspend: true, gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 5}, ready: metav1.ConditionTrue, reason: schedulev2.ReasonAvailable, message: "5/5 replicas available (the count kept while suspended)"},
		// With an HPA, the Deployment's own count (the HPA's choice) is
		// what must be available.
		{name: "scaled by an HPA", replicas: ptr.To[int32](7), gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 7, AvailableReplicas: 6}, ready: metav1.ConditionFalse, reason: schedulev2.ReasonProgressing, message: "6/7 replicas available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tds := builders.TDSet("ns", "x").Suspend(tc.suspend).Obj()
			dep := DesiredDeployment(tds, ptr.To[int32](5))
			if tc.replicas != nil {
				dep.Spec.Replicas = tc.replicas
			}
			dep.Generation = tc.gen
			dep.Status = tc.status
			reportReady(tds, reportOf(dep))
			c := conditions.Get(tds, conditions.Ready)
			g.Expect(c.Status).To(Equal(tc.ready))
			g.Expect(c.Reason).To(Equal(tc.reason))
			if tc.message != "" {
				g.Expect(c.Message).To(Equal(tc.message))
			}
		})
	}
}

func TestSuspendedMessage(t *testing.T) {
	target := &schedulev2.ScaleTargetRef{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"}
	hpaRef := &schedulev2.Autoscaling{HPARef: &schedulev2.HPARef{Name: "db-hpa"}}
	recorded := &schedulev2.TargetStatus{Autoscaler: &schedulev2.AutoscalerStatus{Name: "db-hpa",
		OriginalMinReplicas: ptr.To[int32](2), OriginalMaxReplicas: ptr.To[int32](9)}}
	for _, tc := range []struct {
		name   string
		spec   schedulev2.TDSetSpec
		status schedulev2.TDSetStatus
		want   string
	}{
		{name: "own Deployment", want: "spec.suspend is true: Deployment web keeps its current replica count"},
		{name: "own Deployment and HPA", spec: schedulev2.TDSetSpec{Autoscaling: &schedulev2.Autoscaling{MaxReplicas: 5}},
			want: "spec.suspend is true: HorizontalPodAutoscaler web keeps its current minReplicas, and scales Deployment web by CPU"},
		{name: "scale target", spec: schedulev2.TDSetSpec{ScaleTargetRef: target},
			want: "spec.suspend is true: StatefulSet db keeps its current replica count"},
		{name: "an existing HPA, bounds recorded", spec: schedulev2.TDSetSpec{ScaleTargetRef: target, Autoscaling: hpaRef},
			status: schedulev2.TDSetStatus{Target: recorded},
			want:   "spec.suspend is true: HorizontalPodAutoscaler db-hpa has minReplicas 2 and maxReplicas 9 back, the bounds it had before this TDSet, and scales StatefulSet db by its own metrics"},
		{name: "an existing HPA never changed", spec: schedulev2.TDSetSpec{ScaleTargetRef: target, Autoscaling: hpaRef},
			want: "spec.suspend is true: HorizontalPodAutoscaler db-hpa has the bounds it had before this TDSet, and scales StatefulSet db by its own metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tds := &schedulev2.TDSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: tc.spec, Status: tc.status}
			tds.Spec.Suspend = true
			if got := suspendedMessage(tds); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
