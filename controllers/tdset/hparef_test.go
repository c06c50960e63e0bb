package tdset_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// hpaBounds are an HPA's minReplicas and maxReplicas.
func hpaBounds(g Gomega, c client.Client, ns, name string) [2]int32 {
	hpa := autoscaler(g, c, ns, name)
	return [2]int32{ptr.Deref(hpa.Spec.MinReplicas, -1), hpa.Spec.MaxReplicas}
}

// With spec.autoscaling.hpaRef, the schedule is the floor of the target's
// existing HPA: its minReplicas follows the windows, is set back when
// someone else changes it, and is given back (with maxReplicas) while
// suspended and when the TDSet is deleted. The Deployment's replicas,
// which the HPA owns, are never written.
func TestHPARefMinReplicasFollowsTheSchedule(t *testing.T) {
	g, c, ns, clk := scaling(t, reconciler.Options{})
	g.Expect(c.Create(bg, builders.Deployment(ns, "web", 2))).To(Succeed())
	g.Expect(c.Create(bg, builders.HPA(ns, "web-hpa", "apps/v1", "Deployment", "web", 2, 8))).To(Succeed())
	tds := builders.TDSet(ns, "web-hours").ScaleTarget("apps/v1", "Deployment", "web").HPARef("web-hpa", 0).
		OnDelete(schedulev2.OnDeleteRestore).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())

	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{5, 8})) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		st := fetch(g, c, tds).Status
		g.Expect(st.Target).NotTo(BeNil())
		g.Expect(st.Target.Autoscaler).To(Equal(&schedulev2.AutoscalerStatus{
			Name: "web-hpa", MinReplicas: ptr.To[int32](5), MaxReplicas: ptr.To[int32](8),
			OriginalMinReplicas: ptr.To[int32](2), OriginalMaxReplicas: ptr.To[int32](8),
		}))
		g.Expect(st.Target.OriginalReplicas).To(BeNil(), "the target's count is the HPA's, never changed by the TDSet")
		g.Expect(tds.Finalizers).NotTo(BeEmpty())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web-hours") }).Should(ContainElements(
		"Normal AutoscalerAdopted: Setting the minReplicas of HorizontalPodAutoscaler web-hpa by the schedule from now on; it had minReplicas 2 and maxReplicas 8",
		"Normal AutoscalerBounded: Set HorizontalPodAutoscaler web-hpa's minReplicas from 2 to 5 (window every day 09:00-17:00)"))
	g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(2)), "the target's replicas are the HPA's")

	// The HPA controller (not run by envtest) raises the Deployment to the
	// floor, and it runs: Ready.
	patch(g, c, deployment(g, c, ns, "web"), `{"spec":{"replicas":5}}`)
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: "web"}, 5)
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(fetch(g, c, tds), conditions.Ready)
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonAutoscalerAvailable))
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Message).To(HavePrefix("HorizontalPodAutoscaler web-hpa has minReplicas 5 (window every day 09:00-17:00) and maxReplicas 8"))
	}).Should(Succeed())

	// Someone lowers the floor: the watch of HPAs sees it, the TDSet sets it back.
	patch(g, c, autoscaler(g, c, ns, "web-hpa"), `{"spec":{"minReplicas":1}}`)
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{5, 8})) }).Should(Succeed())

	// The next window.
	clk.SetTime(time.Date(2026, 3, 10, 17, 30, 0, 0, time.UTC))
	poke(g, c, tds, "5h")
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{3, 8})) }).Should(Succeed())

	// Suspended: the HPA gets its own bounds back.
	patch(g, c, tds, `{"spec":{"suspend":true}}`)
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{2, 8})) }).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web-hours") }).Should(ContainElement(
		"Normal AutoscalerRestored: Gave HorizontalPodAutoscaler web-hpa back its own minReplicas 2 and maxReplicas 8 (suspended; it had 3 and 8)"))
	patch(g, c, tds, `{"spec":{"suspend":false}}`)
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{3, 8})) }).Should(Succeed())
	g.Expect(fetch(g, c, tds).Status.Target.Autoscaler.OriginalMinReplicas).To(HaveValue(Equal(int32(2))), "recorded once")

	// hpaRef cannot change.
	err := c.Patch(bg, tds.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"autoscaling":{"hpaRef":{"name":"other"}}}}`)))
	g.Expect(err).To(MatchError(ContainSubstring(schedulev2.MessageHPARefImmutable)))

	// Deleted: the bounds go back, whatever onDelete says, and the
	// Deployment is not written.
	g.Expect(c.Delete(bg, tds)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), tds)) }).Should(BeTrue())
	g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{2, 8}))
	g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5)), "the HPA's count, not restored (onDelete Restore is the target's, which the TDSet never set)")
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web-hours") }).Should(ContainElement(
		"Normal AutoscalerRestored: Gave HorizontalPodAutoscaler web-hpa back its own minReplicas 2 and maxReplicas 8 (the TDSet was deleted; it had 3 and 8)"))
}

// spec.autoscaling.maxReplicas, when set with hpaRef, becomes the HPA's
// maxReplicas (and is given back); unset, the HPA's own maximum caps the
// schedule's count, which the Ready message says.
func TestHPARefMaxReplicas(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	for _, name := range []string{"a", "b"} {
		g.Expect(c.Create(bg, builders.Deployment(ns, name, 1))).To(Succeed())
	}
	g.Expect(c.Create(bg, builders.HPA(ns, "a", "apps/v1", "Deployment", "a", 1, 4))).To(Succeed())
	g.Expect(c.Create(bg, builders.HPA(ns, "b", "apps/v1", "Deployment", "b", 1, 4))).To(Succeed())
	withMax := builders.TDSet(ns, "with-max").ScaleTarget("apps/v1", "Deployment", "a").HPARef("a", 12).Obj()
	capped := builders.TDSet(ns, "capped").ScaleTarget("apps/v1", "Deployment", "b").HPARef("b", 0).Obj()
	g.Expect(c.Create(bg, withMax)).To(Succeed())
	g.Expect(c.Create(bg, capped)).To(Succeed())

	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "a")).To(Equal([2]int32{5, 12})) }).Should(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "b")).To(Equal([2]int32{4, 4})) }).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "with-max") }).Should(ContainElement(
		"Normal AutoscalerBounded: Set HorizontalPodAutoscaler a's minReplicas from 1 to 5 (window every day 09:00-17:00) and maxReplicas from 4 to 12 (spec.autoscaling.maxReplicas)"))
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.Get(fetch(g, c, capped), conditions.Ready).Message).To(ContainSubstring(
			"the schedule's 5 replicas are capped at the HPA's maxReplicas 4 (spec.autoscaling.maxReplicas is not set)"))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "capped") }).Should(ContainElement(
		"Normal AutoscalerBounded: Set HorizontalPodAutoscaler b's minReplicas from 1 to 4 (window every day 09:00-17:00); the schedule's 5 replicas are capped at the HPA's maxReplicas 4 (spec.autoscaling.maxReplicas is not set)"))

	g.Expect(c.Delete(bg, withMax)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "a")).To(Equal([2]int32{1, 4})) }).Should(Succeed())
}

// An HPA that is missing, or scales another workload, is reported
// (Ready=False and a Warning) and not written; once it exists and points
// at the target, the watch of HPAs makes the TDSet drive it.
func TestHPARefMissingOrMismatched(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	g.Expect(c.Create(bg, builders.Deployment(ns, "web", 2))).To(Succeed())
	g.Expect(c.Create(bg, builders.Deployment(ns, "api", 2))).To(Succeed())
	tds := builders.TDSet(ns, "web-hours").ScaleTarget("apps/v1", "Deployment", "web").HPARef("web-hpa", 0).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	expectRefused(g, c, tds, schedulev2.ReasonAutoscalerNotFound,
		"HorizontalPodAutoscaler web-hpa (spec.autoscaling.hpaRef) does not exist in namespace "+ns+"; the TDSet sets its minReplicas once it is created; nothing is written to it")

	hpa := builders.HPA(ns, "web-hpa", "apps/v1", "Deployment", "api", 2, 8)
	g.Expect(c.Create(bg, hpa)).To(Succeed())
	expectRefused(g, c, tds, schedulev2.ReasonAutoscalerTargetMismatch,
		"HorizontalPodAutoscaler web-hpa scales Deployment api (apps/v1), not spec.scaleTargetRef Deployment web (apps/v1); nothing is written to it")
	g.Consistently(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{2, 8})) }, "1s").Should(Succeed())

	patch(g, c, hpa, `{"spec":{"scaleTargetRef":{"name":"web"}}}`)
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{5, 8})) }).Should(Succeed())
	g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(2)))
	g.Expect(replicasOf(g, c, ns, "api")).To(Equal(int32(2)))
}

// Without hpaRef, a TDSet whose target an HPA scales does not fight it:
// TargetAutoscaled names the HPA and hpaRef, and the replicas stay; once
// the HPA is gone the TDSet scales the target.
func TestScaleTargetAutoscaledByAnHPA(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	g.Expect(c.Create(bg, builders.Deployment(ns, "web", 2))).To(Succeed())
	hpa := builders.HPA(ns, "web-hpa", "apps/v1", "Deployment", "web", 2, 8)
	g.Expect(c.Create(bg, hpa)).To(Succeed())
	tds := builders.TDSet(ns, "web-hours").ScaleTarget("apps/v1", "Deployment", "web").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	expectRefused(g, c, tds, schedulev2.ReasonTargetAutoscaled,
		"HorizontalPodAutoscaler web-hpa scales Deployment web, and setting its replicas would fight it: set spec.autoscaling.hpaRef.name to web-hpa to make the schedule its minReplicas; nothing is written to it")
	g.Consistently(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(2))) }, "1s").Should(Succeed())
	g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{2, 8}))

	g.Expect(c.Delete(bg, hpa)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5))) }).Should(Succeed())
}

// A calendar date sets the HPA's floor with hpaRef and no maxReplicas
// (no maximum of the spec bounds the calendar's counts then).
func TestHPARefCalendarDate(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	g.Expect(c.Create(bg, builders.Deployment(ns, "web", 2))).To(Succeed())
	g.Expect(c.Create(bg, builders.HPA(ns, "web-hpa", "apps/v1", "Deployment", "web", 2, 20))).To(Succeed())
	createCalendar(g, c, ns, "sale", schedulev2.CalendarDate{Name: "sale", Date: "2026-03-10", Replicas: ptr.To[int32](15)})
	tds := builders.TDSet(ns, "web-hours").ScaleTarget("apps/v1", "Deployment", "web").HPARef("web-hpa", 0).
		Calendar(schedulev2.CalendarKindNamespaced, "sale").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{15, 20})) }).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web-hours") }).Should(ContainElement(
		"Normal AutoscalerBounded: Set HorizontalPodAutoscaler web-hpa's minReplicas from 2 to 15 (calendar Calendar/sale sale 2026-03-10)"))
}

// A second HPA on the hpaRef's workload fights the named one: the TDSet
// still sets the named HPA's floor, and Ready says False, naming both,
// with one Warning, until the second goes.
func TestHPARefBesideASecondHPA(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	g.Expect(c.Create(bg, builders.Deployment(ns, "web", 5))).To(Succeed())
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: "web"}, 5)
	g.Expect(c.Create(bg, builders.HPA(ns, "web-hpa", "apps/v1", "Deployment", "web", 2, 8))).To(Succeed())
	tds := builders.TDSet(ns, "web-hours").ScaleTarget("apps/v1", "Deployment", "web").HPARef("web-hpa", 0).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	readyReason := func(g Gomega) string {
		ready := conditions.Get(fetch(g, c, tds), conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		return ready.Reason
	}
	g.Eventually(readyReason).Should(Equal(schedulev2.ReasonAutoscalerAvailable))

	second := builders.HPA(ns, "web-cpu", "apps/v1", "Deployment", "web", 1, 3)
	g.Expect(c.Create(bg, second)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(fetch(g, c, tds), conditions.Ready)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonAutoscalerAmbiguous))
		g.Expect(ready.Message).To(HavePrefix("HorizontalPodAutoscaler web-cpu also scales Deployment web: two HPAs on one workload fight over its replicas, so the schedule's floor on web-hpa holds only while web-hpa wins"))
	}).Should(Succeed())
	g.Expect(hpaBounds(g, c, ns, "web-hpa")).To(Equal([2]int32{5, 8}), "the named HPA still gets the schedule's floor")
	g.Expect(hpaBounds(g, c, ns, "web-cpu")).To(Equal([2]int32{1, 3}), "the other HPA is not the TDSet's to change")
	warnings := func(g Gomega) int {
		n := 0
		for _, e := range testenv.Events(g, c, ns, "web-hours") {
			if strings.HasPrefix(e, "Warning "+schedulev2.ReasonAutoscalerAmbiguous+":") {
				n++
			}
		}
		return n
	}
	g.Eventually(warnings).Should(Equal(1), "%v", testenv.Events(g, c, ns, "web-hours"))
	// The counts the message ends with change: no second Warning.
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: "web"}, 4)
	g.Eventually(func(g Gomega) string { return conditions.Get(fetch(g, c, tds), conditions.Ready).Message }).
		Should(HaveSuffix("Deployment web has 4 available (5 running)"))
	g.Consistently(warnings, "2s").Should(Equal(1))

	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: "web"}, 5)
	g.Expect(c.Delete(bg, second)).To(Succeed())
	g.Eventually(readyReason).Should(Equal(schedulev2.ReasonAutoscalerAvailable), "the conflict clears with the second HPA")
}
