package tdset_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// step is one reconcile at an instant and what it must leave behind.
type step struct {
	at           time.Time
	replicas     int32
	rule         string // status.activeRule
	reason       string // the Scheduled condition's
	activeWindow *int32
	next         time.Time // zero: the schedule never changes
	nextReplicas int32
	requeue      time.Duration // 0: exactly until next
}

func mustLoad(t *testing.T, zone string) *time.Location {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// The rules of pkg/schedule as the controller applies them, each step one
// reconcile with the fake clock where the previous one asked to be woken.
func TestScheduleRulesWithFakeClock(t *testing.T) {
	env := testenv.Get(t)
	rec := reconcileOnly(t)
	tokyo, berlin, newYork := mustLoad(t, "Asia/Tokyo"), mustLoad(t, "Europe/Berlin"), mustLoad(t, "America/New_York")
	weekdays := []schedulev2.Weekday{"Mon", "Tue", "Wed", "Thu", "Fri"}
	until := time.Date(2099, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		tds    *builders.TDSetWrapper
		steps  []step
		events []string
	}{
		{
			// Christmas 2026 is a Friday. Tokyo is 9 hours ahead of UTC:
			// its 25 December begins at 15:00 UTC on the 24th.
			name: "an exception applies from local midnight in its zone",
			tds: builders.TDSet("", "holiday").TimeZone("Asia/Tokyo").DefaultReplicas(2).
				Windows(builders.Window("08:30", "18:00", 6, weekdays...)).Exception("2026-12-25", 1),
			steps: []step{
				{at: time.Date(2026, 12, 24, 17, 0, 0, 0, tokyo), replicas: 6, rule: "window Mon-Fri 08:30-18:00", reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2026, 12, 24, 18, 0, 0, 0, tokyo), nextReplicas: 2},
				{at: time.Date(2026, 12, 24, 18, 0, 0, 0, tokyo), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 12, 24, 15, 0, 0, 0, time.UTC), nextReplicas: 1},
				// No window on the exception's date, not even Friday's.
				{at: time.Date(2026, 12, 25, 0, 0, 0, 0, tokyo), replicas: 1, rule: "exception 2026-12-25", reason: schedulev2.ReasonExceptionActive,
					next: time.Date(2026, 12, 26, 0, 0, 0, 0, tokyo), nextReplicas: 2},
				{at: time.Date(2026, 12, 26, 0, 0, 0, 0, tokyo), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 12, 28, 8, 30, 0, 0, tokyo), nextReplicas: 6},
			},
			events: []string{
				"Normal DeploymentScaled: Scaled Deployment holiday from 2 to 1 (exception 2026-12-25)",
				"Normal DeploymentScaled: Scaled Deployment holiday from 1 to 2 (defaultReplicas)",
			},
		},
		{
			name: "an override until its instant, then the schedule from exactly then",
			tds:  builders.TDSet("", "override").Override(8, until),
			steps: []step{
				{at: until.Add(-time.Hour), replicas: 8, rule: "override until 2099-03-10T12:00:00Z", reason: schedulev2.ReasonOverrideActive,
					next: until, nextReplicas: 5},
				{at: until, replicas: 5, rule: window9to17, reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2099, 3, 10, 17, 0, 0, 0, time.UTC), nextReplicas: 3},
			},
			events: []string{
				"Normal DeploymentCreated: Created Deployment override with 8 replicas (override until 2099-03-10T12:00:00Z)",
				"Normal DeploymentScaled: Scaled Deployment override from 8 to 5 (window every day 09:00-17:00)",
			},
		},
		{
			// Tuesday 10 March 2026 in Berlin.
			name: "scaleUpLeadTime scales up early and down on time",
			tds: builders.TDSet("", "early").TimeZone("Europe/Berlin").DefaultReplicas(2).
				Windows(builders.Window("08:30", "18:00", 6, weekdays...)).ScaleUpLeadTime(10 * time.Minute),
			steps: []step{
				{at: time.Date(2026, 3, 10, 8, 0, 0, 0, berlin), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 3, 10, 8, 20, 0, 0, berlin), nextReplicas: 6},
				// The window's count, before the window applies.
				{at: time.Date(2026, 3, 10, 8, 20, 0, 0, berlin), replicas: 6, rule: "window Mon-Fri 08:30-18:00 (early by scaleUpLeadTime)", reason: schedulev2.ReasonWindowActive,
					next: time.Date(2026, 3, 10, 8, 30, 0, 0, berlin), nextReplicas: 6},
				{at: time.Date(2026, 3, 10, 8, 30, 0, 0, berlin), replicas: 6, rule: "window Mon-Fri 08:30-18:00", reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2026, 3, 10, 18, 0, 0, 0, berlin), nextReplicas: 2},
				{at: time.Date(2026, 3, 10, 18, 0, 0, 0, berlin), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 3, 11, 8, 20, 0, 0, berlin), nextReplicas: 6},
			},
			events: []string{
				"Normal DeploymentScaled: Scaled Deployment early from 2 to 6 (window Mon-Fri 08:30-18:00 (early by scaleUpLeadTime))",
				"Normal DeploymentScaled: Scaled Deployment early from 6 to 2 (defaultReplicas)",
			},
		},
		{
			// A window over days is one window: nothing happens at the
			// midnights inside it. 2026-03-13 is a Friday; the exception
			// on Saturday takes its date out of the window.
			name: "a window over days scales at its start and its end",
			tds: builders.TDSet("", "weekend").TimeZone("Europe/Berlin").DefaultReplicas(2).
				Windows(builders.WindowOver("Fri", "18:00", "Mon", "06:00", 6)).Exception("2026-03-14", 1),
			steps: []step{
				{at: time.Date(2026, 3, 13, 17, 0, 0, 0, berlin), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 3, 13, 18, 0, 0, 0, berlin), nextReplicas: 6},
				{at: time.Date(2026, 3, 13, 18, 0, 0, 0, berlin), replicas: 6, rule: "window Fri 18:00-Mon 06:00", reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2026, 3, 14, 0, 0, 0, 0, berlin), nextReplicas: 1},
				{at: time.Date(2026, 3, 14, 0, 0, 0, 0, berlin), replicas: 1, rule: "exception 2026-03-14", reason: schedulev2.ReasonExceptionActive,
					next: time.Date(2026, 3, 15, 0, 0, 0, 0, berlin), nextReplicas: 6},
				{at: time.Date(2026, 3, 15, 0, 0, 0, 0, berlin), replicas: 6, rule: "window Fri 18:00-Mon 06:00", reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2026, 3, 16, 6, 0, 0, 0, berlin), nextReplicas: 2},
				{at: time.Date(2026, 3, 16, 6, 0, 0, 0, berlin), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 3, 20, 18, 0, 0, 0, berlin), nextReplicas: 6},
			},
			events: []string{
				"Normal DeploymentScaled: Scaled Deployment weekend from 2 to 6 (window Fri 18:00-Mon 06:00)",
				"Normal DeploymentScaled: Scaled Deployment weekend from 6 to 1 (exception 2026-03-14)",
				"Normal DeploymentScaled: Scaled Deployment weekend from 1 to 6 (window Fri 18:00-Mon 06:00)",
				"Normal DeploymentScaled: Scaled Deployment weekend from 6 to 2 (defaultReplicas)",
			},
		},
		{
			// New York springs forward inside the window, on Sunday
			// 2026-03-08: it lasts 48 real hours, and the lead time starts
			// it on the day before, Friday 23:30 EST.
			name: "a window over days across a DST change, early by the lead time",
			tds: builders.TDSet("", "over-dst").TimeZone("America/New_York").DefaultReplicas(2).
				Windows(builders.WindowOver("Sat", "01:30", "Mon", "02:30", 7)).ScaleUpLeadTime(2 * time.Hour),
			steps: []step{
				{at: time.Date(2026, 3, 6, 12, 0, 0, 0, newYork), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 3, 6, 23, 30, 0, 0, newYork), nextReplicas: 7},
				{at: time.Date(2026, 3, 6, 23, 30, 0, 0, newYork), replicas: 7, rule: "window Sat 01:30-Mon 02:30 (early by scaleUpLeadTime)", reason: schedulev2.ReasonWindowActive,
					next: time.Date(2026, 3, 7, 1, 30, 0, 0, newYork), nextReplicas: 7},
				{at: time.Date(2026, 3, 7, 1, 30, 0, 0, newYork), replicas: 7, rule: "window Sat 01:30-Mon 02:30", reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2026, 3, 9, 2, 30, 0, 0, newYork), nextReplicas: 2},
				{at: time.Date(2026, 3, 9, 2, 30, 0, 0, newYork), replicas: 2, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas,
					next: time.Date(2026, 3, 13, 23, 30, 0, 0, newYork), nextReplicas: 7},
			},
			events: []string{
				"Normal DeploymentScaled: Scaled Deployment over-dst from 2 to 7 (window Sat 01:30-Mon 02:30 (early by scaleUpLeadTime))",
				"Normal DeploymentScaled: Scaled Deployment over-dst from 7 to 2 (defaultReplicas)",
			},
		},
		{
			name: "resyncInterval caps the requeue, not the transition",
			tds:  builders.TDSet("", "resync").ResyncInterval(30 * time.Minute),
			steps: []step{
				{at: office, replicas: 5, rule: window9to17, reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC), nextReplicas: 3, requeue: 30 * time.Minute},
				{at: office.Add(30 * time.Minute), replicas: 5, rule: window9to17, reason: schedulev2.ReasonWindowActive, activeWindow: ptr.To[int32](0),
					next: time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC), nextReplicas: 3, requeue: 30 * time.Minute},
			},
		},
		{
			name: "defaultReplicas alone never changes",
			tds:  builders.TDSet("", "flat").Windows().DefaultReplicas(4),
			steps: []step{
				{at: office, replicas: 4, rule: "defaultReplicas", reason: schedulev2.ReasonDefaultReplicas},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c, ns := env.Client, env.Namespace(t)
			clk := clocktesting.NewFakeClock(tc.steps[0].at)
			r := tdset.NewWithClient(c, rec, reconciler.Options{Clock: clk})
			tds := tc.tds.Obj()
			tds.Namespace = ns
			g.Expect(c.Create(bg, tds)).To(Succeed())
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tds)}

			for i, s := range tc.steps {
				if i > 0 && s.at.Equal(tc.steps[i-1].next) {
					// A millisecond before the transition the count still
					// holds, and the controller asks to come back in exactly
					// that millisecond.
					clk.SetTime(s.at.Add(-time.Millisecond))
					res, err := r.Reconcile(bg, req)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(tc.steps[i-1].replicas), "step %d, a millisecond early", i)
					g.Expect(res.RequeueAfter).To(Equal(time.Millisecond))
				}
				clk.SetTime(s.at)
				res, err := r.Reconcile(bg, req)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(s.replicas), "step %d", i)
				fetch(g, c, tds)
				st := tds.Status
				g.Expect(st.ObservedGeneration).To(Equal(tds.Generation))
				g.Expect(st.CurrentReplicas).To(HaveValue(Equal(s.replicas)), "step %d", i)
				g.Expect(st.ActiveRule).To(Equal(s.rule), "step %d", i)
				g.Expect(st.ActiveWindow).To(Equal(s.activeWindow), "step %d", i)
				scheduled := conditions.Get(tds, schedulev2.ConditionScheduled)
				g.Expect(scheduled.Status).To(BeEquivalentTo("True"))
				g.Expect(scheduled.Reason).To(Equal(s.reason), "step %d", i)
				if s.next.IsZero() {
					g.Expect(st.NextTransitionTime).To(BeNil(), "step %d", i)
					g.Expect(st.NextReplicas).To(BeNil(), "step %d", i)
					g.Expect(res.RequeueAfter).To(BeZero(), "never woken: nothing changes")
					g.Expect(scheduled.Message).To(HaveSuffix("; the schedule never changes it"))
					continue
				}
				g.Expect(st.NextTransitionTime).NotTo(BeNil(), "step %d", i)
				g.Expect(st.NextTransitionTime.Time.Equal(s.next)).To(BeTrue(), "step %d: next %s, want %s", i, st.NextTransitionTime.UTC(), s.next.UTC())
				g.Expect(st.NextReplicas).To(HaveValue(Equal(s.nextReplicas)), "step %d", i)
				want := s.requeue
				if want == 0 {
					want = s.next.Sub(s.at)
				}
				g.Expect(res.RequeueAfter).To(Equal(want), "step %d: requeued exactly at the transition", i)
				g.Expect(scheduled.Message).To(ContainSubstring("until " + s.next.UTC().Format(time.RFC3339)))
			}
			for _, e := range tc.events {
				g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, tds.Name) }).Should(ContainElement(e))
			}
		})
	}
}
