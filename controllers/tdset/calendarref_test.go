package tdset_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/schedule"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// createCalendar creates the Calendar ns/name with dates.
func createCalendar(g Gomega, c client.Client, ns, name string, dates ...schedulev2.CalendarDate) *schedulev2.Calendar {
	cal := &schedulev2.Calendar{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: schedulev2.CalendarSpec{Dates: dates}}
	g.Expect(c.Create(bg, cal)).To(Succeed())
	return cal
}

// readyOf reads tds's Ready condition, which must be there.
func readyOf(g Gomega, c client.Client, tds *schedulev2.TDSet) *metav1.Condition {
	ready := conditions.Get(fetch(g, c, tds), conditions.Ready)
	g.Expect(ready).NotTo(BeNil())
	return ready
}

// A date added to a Calendar sets the count of the TDSet that references
// it at once: the clock stands still, so only the calendar's watch can
// have reconciled the TDSet. Deleting the calendar leaves the count and
// makes the TDSet not Ready.
func TestCalendarDateScalesTheTDSetsThatReferenceIt(t *testing.T) {
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	g := NewWithT(t)
	cal := createCalendar(g, c, ns, "holidays", schedulev2.CalendarDate{Name: "new year", Yearly: "01-01", Replicas: ptr.To[int32](0)})
	tds := builders.TDSet(ns, "shop").Calendar(schedulev2.CalendarKindNamespaced, "holidays").Obj()
	other := builders.TDSet(ns, "unrelated").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Expect(c.Create(bg, other)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "shop")).To(Equal(int32(5)))
		g.Expect(fetch(g, c, tds).Status.ActiveRule).To(Equal(window9to17))
	}).Should(Succeed())
	otherVersion := fetch(g, c, other).ResourceVersion

	// office is 2026-03-10.
	cal.Spec.Dates = append(cal.Spec.Dates, schedulev2.CalendarDate{Name: "strike", Date: "2026-03-10", Replicas: ptr.To[int32](1)})
	g.Expect(c.Update(bg, cal)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "shop")).To(Equal(int32(1)))
		got := fetch(g, c, tds)
		g.Expect(got.Status.ActiveRule).To(Equal("calendar Calendar/holidays strike 2026-03-10"))
		g.Expect(conditions.Get(got, schedulev2.ConditionScheduled).Reason).To(Equal(schedulev2.ReasonCalendarDateActive))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) string { return fetch(g, c, other).ResourceVersion }).Should(Equal(otherVersion),
		"a TDSet that references no calendar is not reconciled for it")

	// The TDSet's own exception on the same date wins over the calendar's.
	patch(g, c, tds, `{"spec":{"exceptions":[{"date":"2026-03-10","replicas":2}]}}`)
	g.Eventually(func(g Gomega) int32 { return replicasOf(g, c, ns, "shop") }).Should(Equal(int32(2)))
	patch(g, c, tds, `{"spec":{"exceptions":null}}`)
	g.Eventually(func(g Gomega) int32 { return replicasOf(g, c, ns, "shop") }).Should(Equal(int32(1)))

	g.Expect(c.Delete(bg, cal)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := readyOf(g, c, tds)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonCalendarNotFound))
		g.Expect(ready.Message).To(ContainSubstring("Calendar holidays not found in namespace " + ns))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "shop") }).Should(
		ContainElement(HavePrefix("Warning CalendarNotFound: Calendar holidays not found")))
	g.Consistently(func(g Gomega) int32 { return replicasOf(g, c, ns, "shop") }).Should(Equal(int32(1)), "the count is left as it is")
}

// A TDSet cannot use a Calendar of another namespace: it finds none of the
// name in its own, creates nothing and is not Ready.
func TestCalendarOfAnotherNamespaceIsNotFound(t *testing.T) {
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	g := NewWithT(t)
	createCalendar(g, c, ns, "holidays", schedulev2.CalendarDate{Name: "strike", Date: "2026-03-10", Replicas: ptr.To[int32](1)})
	tenant := testenv.Get(t).Namespace(t)
	tds := builders.TDSet(tenant, "borrower").Calendar(schedulev2.CalendarKindNamespaced, "holidays").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) string { return readyOf(g, c, tds).Reason }).Should(Equal(schedulev2.ReasonCalendarNotFound))
	err := c.Get(bg, client.ObjectKey{Namespace: tenant, Name: "borrower"}, &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Deployment while the calendar is missing: %v", err)
}

// A ClusterCalendar serves TDSets of every namespace; one created after the
// TDSet that names it makes the TDSet Ready to be scheduled.
func TestClusterCalendarServesEveryNamespace(t *testing.T) {
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	g := NewWithT(t)
	name := "company-" + ns
	tds := builders.TDSet(ns, "shop").Calendar(schedulev2.CalendarKindCluster, name).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) string { return readyOf(g, c, tds).Reason }).Should(Equal(schedulev2.ReasonCalendarNotFound))

	cc := &schedulev2.ClusterCalendar{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       schedulev2.CalendarSpec{Dates: []schedulev2.CalendarDate{{Name: "offsite", From: "2026-03-09", To: "2026-03-11"}}},
	}
	g.Expect(c.Create(bg, cc)).To(Succeed())
	t.Cleanup(func() { _ = c.Delete(bg, cc) })
	// The range entry has no replicas, nor has the reference: defaultReplicas (3).
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "shop")).To(Equal(int32(3)))
		g.Expect(fetch(g, c, tds).Status.ActiveRule).To(Equal("calendar ClusterCalendar/" + name + " offsite 2026-03-10"))
	}).Should(Succeed())
}

// day is a local date at midnight UTC, as DateSpan holds them.
func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// exc is an exception of ExpandCalendar's, from source "calendar Calendar/c".
func exc(date string, replicas int32, entry string) schedule.Exception {
	d, err := schedule.ParseDate(date)
	if err != nil {
		panic(err)
	}
	return schedule.Exception{Date: d, Replicas: replicas, Source: "calendar Calendar/c " + entry}
}

// ExpandCalendar gives each entry's days within the span, in the order of
// the entries; MergeExceptions keeps the first exception of each date.
func TestExpandCalendar(t *testing.T) {
	span := tdset.DateSpan{From: day(2027, 12, 30), To: day(2028, 3, 1)}
	for _, tc := range []struct {
		name    string
		entries []schedulev2.CalendarDate
		want    []schedule.Exception
		err     string
	}{
		{name: "a fixed date inside and one outside the span",
			entries: []schedulev2.CalendarDate{{Name: "in", Date: "2028-01-15", Replicas: ptr.To[int32](4)}, {Name: "out", Date: "2028-03-02"}},
			want:    []schedule.Exception{exc("2028-01-15", 4, "in")}},
		{name: "a yearly date in every year the span touches",
			entries: []schedulev2.CalendarDate{{Name: "eve", Yearly: "12-31"}, {Name: "nye", Yearly: "01-01", Replicas: ptr.To[int32](0)}},
			want:    []schedule.Exception{exc("2027-12-31", 9, "eve"), exc("2028-01-01", 0, "nye")}},
		{name: "yearly 02-29 in a leap year",
			entries: []schedulev2.CalendarDate{{Name: "leap", Yearly: "02-29"}},
			want:    []schedule.Exception{exc("2028-02-29", 9, "leap")}},
		{name: "a range clipped to the span, ends included",
			entries: []schedulev2.CalendarDate{{Name: "r", From: "2027-12-28", To: "2028-01-01", Replicas: ptr.To[int32](2)}},
			want:    []schedule.Exception{exc("2027-12-30", 2, "r"), exc("2027-12-31", 2, "r"), exc("2028-01-01", 2, "r")}},
		{name: "a range of 31 days is allowed", entries: []schedulev2.CalendarDate{{Name: "r", From: "2029-01-01", To: "2029-01-31"}}},
		{name: "a range of 32 days is not", entries: []schedulev2.CalendarDate{{Name: "r", From: "2029-01-01", To: "2029-02-01"}}, err: "at most 31 days"},
		{name: "a reversed range", entries: []schedulev2.CalendarDate{{Name: "r", From: "2028-01-02", To: "2028-01-01"}}, err: "runs forward"},
		{name: "a date that does not exist", entries: []schedulev2.CalendarDate{{Name: "x", Date: "2027-02-29"}}, err: "no such day"},
		{name: "a yearly day that never exists", entries: []schedulev2.CalendarDate{{Name: "x", Yearly: "02-30"}}, err: "no day of the year"},
		{name: "two kinds in one entry", entries: []schedulev2.CalendarDate{{Name: "x", Date: "2028-01-01", Yearly: "01-01"}}, err: "exactly one of"},
		{name: "replicas over the bound", entries: []schedulev2.CalendarDate{{Name: "x", Date: "2028-01-01", Replicas: ptr.To[int32](1001)}}, err: "replicas must be 0 to 1000"},
		{name: "more entries than the bound", entries: make([]schedulev2.CalendarDate, schedulev2.MaxCalendarDates+1), err: "at most 366"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := tdset.ExpandCalendar(tc.entries, "calendar Calendar/c", 9, span)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// The TDSet's own exceptions win, then the earlier calendar, then the
// earlier entry.
func TestMergeExceptionsKeepsTheFirstOfEachDate(t *testing.T) {
	g := NewWithT(t)
	own := []schedule.Exception{exc("2028-01-01", 1, "own")}
	first := []schedule.Exception{exc("2028-01-01", 2, "a"), exc("2028-01-02", 3, "a"), exc("2028-01-02", 4, "a-later")}
	second := []schedule.Exception{exc("2028-01-02", 5, "b"), exc("2028-01-03", 6, "b")}
	g.Expect(tdset.MergeExceptions(own, first, second)).To(Equal([]schedule.Exception{
		exc("2028-01-01", 1, "own"), exc("2028-01-02", 3, "a"), exc("2028-01-03", 6, "b"),
	}))
}

// A calendar's date applies from local midnight in the TDSet's zone. A
// date beyond the horizon is not seen, so a TDSet with calendars is woken
// at least every CalendarRefresh; one within it is woken exactly at.
func TestCalendarDateFollowsTheTDSetsZoneAndHorizon(t *testing.T) {
	env := testenv.Get(t)
	rec := reconcileOnly(t)
	g := NewWithT(t)
	c, ns := env.Client, env.Namespace(t)
	createCalendar(g, c, ns, "holidays", schedulev2.CalendarDate{Name: "christmas", Yearly: "12-25", Replicas: ptr.To[int32](1)})
	clk := clocktesting.NewFakeClock(office)
	r := tdset.NewWithClient(c, rec, reconciler.Options{Clock: clk})
	tds := builders.TDSet(ns, "tokyo").Windows().DefaultReplicas(4).TimeZone("Asia/Tokyo").Calendar("", "holidays").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tds)}

	res, err := r.Reconcile(bg, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(replicasOf(g, c, ns, "tokyo")).To(Equal(int32(4)))
	g.Expect(fetch(g, c, tds).Status.NextTransitionTime).To(BeNil(), "christmas is beyond the horizon in March")
	g.Expect(res.RequeueAfter).To(Equal(tdset.CalendarRefresh))

	// Tokyo's 25 December begins at 15:00 UTC on the 24th.
	midnight := time.Date(2026, 12, 24, 15, 0, 0, 0, time.UTC)
	clk.SetTime(midnight.Add(-5 * 24 * time.Hour))
	res, err = r.Reconcile(bg, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(5 * 24 * time.Hour))
	st := fetch(g, c, tds).Status
	g.Expect(st.NextTransitionTime).NotTo(BeNil())
	g.Expect(st.NextTransitionTime.Time.Equal(midnight)).To(BeTrue(), "got %s", st.NextTransitionTime)
	g.Expect(st.NextReplicas).To(HaveValue(Equal(int32(1))))

	clk.SetTime(midnight)
	_, err = r.Reconcile(bg, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(replicasOf(g, c, ns, "tokyo")).To(Equal(int32(1)))
	st = fetch(g, c, tds).Status
	g.Expect(st.ActiveRule).To(Equal("calendar Calendar/holidays christmas 2026-12-25"))
	g.Expect(conditions.Get(tds, schedulev2.ConditionScheduled).Reason).To(Equal(schedulev2.ReasonCalendarDateActive))
}

// With autoscaling, a calendar's count becomes the HPA's minReplicas: one
// outside 1 to maxReplicas makes the calendar invalid for that TDSet, which
// then writes nothing.
func TestCalendarCountOutsideAutoscalingIsInvalid(t *testing.T) {
	env := testenv.Get(t)
	rec := reconcileOnly(t)
	g := NewWithT(t)
	c, ns := env.Client, env.Namespace(t)
	createCalendar(g, c, ns, "closed", schedulev2.CalendarDate{Name: "strike", Date: "2026-03-10", Replicas: ptr.To[int32](0)})
	r := tdset.NewWithClient(c, rec, reconciler.Options{Clock: clocktesting.NewFakeClock(office)})
	tds := builders.TDSet(ns, "scaled").Autoscaling(10).Calendar("", "closed").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	res, err := r.Reconcile(bg, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tds)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeZero(), "only a change of the calendar or the spec can fix it")
	ready := readyOf(g, c, tds)
	g.Expect(ready.Reason).To(Equal(schedulev2.ReasonInvalidCalendar))
	g.Expect(ready.Message).To(ContainSubstring("2026-03-10 sets 0 replicas; with spec.autoscaling every count must be 1 to maxReplicas (10)"))
	g.Expect(apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), &appsv1.Deployment{}))).To(BeTrue(), "nothing written")
}
