package tdset_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// scaling starts the controller at office time on a fake clock.
func scaling(t *testing.T, opts reconciler.Options) (*WithT, client.Client, string, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(office)
	opts.Clock = clk
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), opts, testenv.ManagerOptions{})
	return g, c, ns, clk
}

// poke changes the TDSet's spec (its resync interval) and waits until the
// controller has reconciled that generation: after the fake clock moved,
// or a change of the target's status, which the watch leaves out.
func poke(g *WithT, c client.Client, tds *schedulev2.TDSet, resync string) {
	patch(g, c, tds, `{"spec":{"resyncInterval":"`+resync+`"}}`)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
	}).Should(Succeed())
}

// A Deployment the TDSet did not create follows the calendar, is set back
// as soon as someone else changes its count (the target is watched), is not written while its count is
// right, and keeps its count when the TDSet goes (onDelete Keep, the
// default).
func TestScaleTargetDeploymentFollowsTheCalendar(t *testing.T) {
	g, c, ns, clk := scaling(t, reconciler.Options{})
	dep := builders.Deployment(ns, "web", 2)
	g.Expect(c.Create(bg, dep)).To(Succeed())
	tds := builders.TDSet(ns, "web-hours").ScaleTarget("apps/v1", "Deployment", "web").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())

	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5))) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		st := fetch(g, c, tds).Status
		g.Expect(st.Target).To(Equal(&schedulev2.TargetStatus{
			APIVersion: "apps/v1", Kind: "Deployment", Name: "web",
			Replicas: ptr.To[int32](5), ObservedReplicas: ptr.To[int32](0), OriginalReplicas: ptr.To[int32](2),
		}))
		g.Expect(st.CurrentReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(conditions.Get(tds, conditions.Ready).Reason).To(Equal(schedulev2.ReasonTargetProgressing))
		g.Expect(tds.Finalizers).To(ConsistOf(tdset.Finalizer))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web-hours") }).Should(
		ContainElements("Normal TargetAdopted: Scaling Deployment web by the schedule from now on; it had 2 replicas",
			"Normal TargetScaled: Scaled Deployment web from 2 to 5 (window every day 09:00-17:00)"))
	dep = deployment(g, c, ns, "web")
	g.Expect(dep.OwnerReferences).To(BeEmpty(), "the TDSet scales the Deployment, it does not take it over")

	// The Deployment reports its pods available: Ready, seen through the
	// watch of the target's status.
	testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(dep), 5)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(fetch(g, c, tds), conditions.Ready)).To(BeTrue(), "%v", conditions.Get(tds, conditions.Ready))
	}).Should(Succeed())
	g.Expect(tds.Status.Target.ObservedReplicas).To(HaveValue(Equal(int32(5))))
	g.Expect(tds.Status.AvailableReplicas).To(HaveValue(Equal(int32(5))))

	// At steady state a reconcile writes nothing to the Deployment.
	rv := deployment(g, c, ns, "web").ResourceVersion
	poke(g, c, tds, "3h")
	g.Expect(deployment(g, c, ns, "web").ResourceVersion).To(Equal(rv), "no write when the count is right")

	// Someone else scales it: the watch sees it, and the TDSet sets it
	// back without being touched.
	patch(g, c, dep, `{"spec":{"replicas":9}}`)
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5))) }).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web-hours") }).Should(
		ContainElement("Normal TargetScaled: Scaled Deployment web from 9 to 5 (window every day 09:00-17:00)"))

	// The next window.
	clk.SetTime(time.Date(2026, 3, 10, 17, 30, 0, 0, time.UTC))
	poke(g, c, tds, "5h")
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(3))) }).Should(Succeed())
	g.Expect(fetch(g, c, tds).Status.Target.OriginalReplicas).To(HaveValue(Equal(int32(2))), "the original count is recorded once")

	// onDelete Keep: the Deployment keeps 3.
	g.Expect(c.Delete(bg, tds)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), tds)) }).Should(BeTrue())
	g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(3)))
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web-hours") }).Should(
		ContainElement("Normal TargetKept: Left Deployment web at its current replicas (onDelete Keep)"))
}

// scalingWeb starts the controller with a Deployment web of 2 replicas and
// a TDSet named name that scales it, and waits until the TDSet set the
// office-time count, 5.
func scalingWeb(t *testing.T, name string) (*WithT, client.Client, string, *schedulev2.TDSet) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	g.Expect(c.Create(bg, builders.Deployment(ns, "web", 2))).To(Succeed())
	tds := builders.TDSet(ns, name).ScaleTarget("apps/v1", "Deployment", "web").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5))) }).Should(Succeed())
	return g, c, ns, tds
}

// A Deployment target whose pods all run but are not available (a crash
// loop) is not Ready, and its available replicas, in the status and the
// metric, are those available, not those running; once they are
// available, the watch of the target's status makes the TDSet Ready.
func TestScaleTargetReadyOnlyWhenAvailable(t *testing.T) {
	g, c, ns, tds := scalingWeb(t, "web-hours")

	// Five pods run (the scale's status.replicas), none is available.
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	testenv.SetDeploymentStatus(g, c, key, 0)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.Target).NotTo(BeNil())
		g.Expect(tds.Status.Target.ObservedReplicas).To(HaveValue(Equal(int32(5))), "the scale says five run")
		g.Expect(tds.Status.AvailableReplicas).To(HaveValue(Equal(int32(0))))
		ready := conditions.Get(tds, conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonTargetProgressing))
		g.Expect(ready.Message).To(Equal("Deployment web has 0/5 replicas available (5 running)"))
		g.Expect(testenv.SeriesOf(g, "tdset_available_replicas", ns, "web-hours")).To(Equal(map[string]float64{"tdset_available_replicas{}": 0}))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(conditions.IsTrue(fetch(g, c, tds), conditions.Ready)).To(BeFalse())
	}).Should(Succeed(), "running is not available")

	// Three become available: still not Ready, and the count follows
	// without a change of the TDSet.
	testenv.SetDeploymentStatus(g, c, key, 3)
	g.Eventually(func(g Gomega) {
		g.Expect(fetch(g, c, tds).Status.AvailableReplicas).To(HaveValue(Equal(int32(3))))
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeFalse())
		g.Expect(testenv.SeriesOf(g, "tdset_available_replicas", ns, "web-hours")).To(Equal(map[string]float64{"tdset_available_replicas{}": 3}))
	}).Should(Succeed())

	// All five: Ready.
	testenv.SetDeploymentStatus(g, c, key, 5)
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(fetch(g, c, tds), conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonTargetAvailable))
		g.Expect(ready.Message).To(Equal("Deployment web has 5/5 replicas available (5 running)"))
	}).Should(Succeed())
}

// A StatefulSet follows the calendar, and onDelete Restore gives it back
// the count it had before the TDSet first scaled it.
func TestScaleTargetStatefulSetRestoredOnDelete(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	sts := builders.StatefulSet(ns, "db", 1)
	g.Expect(c.Create(bg, sts)).To(Succeed())
	tds := builders.TDSet(ns, "db-hours").ScaleTarget("apps/v1", "StatefulSet", "db").OnDelete(schedulev2.OnDeleteRestore).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	stsReplicas := func(g Gomega) int32 {
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		return ptr.Deref(sts.Spec.Replicas, -1)
	}
	g.Eventually(stsReplicas).Should(Equal(int32(5)))
	g.Eventually(func(g Gomega) {
		g.Expect(fetch(g, c, tds).Status.Target).NotTo(BeNil())
		g.Expect(tds.Status.Target.OriginalReplicas).To(HaveValue(Equal(int32(1))))
		g.Expect(tds.Status.Target.Replicas).To(HaveValue(Equal(int32(5))))
	}).Should(Succeed())

	g.Expect(c.Delete(bg, tds)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), tds)) }).Should(BeTrue())
	g.Expect(stsReplicas(g)).To(Equal(int32(1)), "onDelete Restore")
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "db-hours") }).Should(
		ContainElement("Normal TargetRestored: Restored StatefulSet db from 5 to the 1 replicas it had before (onDelete Restore)"))
}

// A custom resource with a scale subresource (our Memcached: spec.size)
// follows the calendar; the TDSet is read and kept through v1 too.
func TestScaleTargetCustomResource(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	m := builders.Memcached(ns, "cache").Size(2).Obj()
	g.Expect(c.Create(bg, m)).To(Succeed())
	// Memcached's size is at most 3.
	tds := builders.TDSet(ns, "cache-hours").Windows(builders.Window("09:00", "17:00", 3)).DefaultReplicas(1).
		ScaleTarget("cache.example.com/v1alpha1", "Memcached", "cache").OnDelete(schedulev2.OnDeleteRestore).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	size := func(g Gomega) int32 {
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(m), m)).To(Succeed())
		return m.Spec.Size
	}
	g.Eventually(size).Should(Equal(int32(3)))
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "cache-hours") }).Should(
		ContainElement("Normal TargetScaled: Scaled Memcached cache from 2 to 3 (window every day 09:00-17:00)"))

	// Through v1 (a read and a write back), the scale target and its
	// status stay.
	g.Eventually(func(g Gomega) {
		v1 := asV1(g, c, tds)
		g.Expect(v1.Spec.Container).To(Equal(schedulev1.ContainerSpec{}))
		g.Expect(v1.Annotations).To(HaveKey(schedulev1.AnnotationV2Data))
		v1.Spec.Suspend = true
		g.Expect(c.Update(bg, v1)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		v2 := asV2(g, c, tds)
		g.Expect(v2.Spec.Suspend).To(BeTrue())
		g.Expect(v2.Spec.ScaleTargetRef).To(Equal(&schedulev2.ScaleTargetRef{APIVersion: "cache.example.com/v1alpha1", Kind: "Memcached", Name: "cache"}))
		g.Expect(v2.Spec.OnDelete).To(Equal(schedulev2.OnDeleteRestore))
		g.Expect(v2.Spec.Container).To(Equal(schedulev2.ContainerSpec{}))
		g.Expect(v2.Status.Target).NotTo(BeNil())
		g.Expect(v2.Status.Target.OriginalReplicas).To(HaveValue(Equal(int32(2))))
		g.Expect(v2.Annotations).NotTo(HaveKey(schedulev1.AnnotationV2Data))
	}).Should(Succeed())

	// Suspended: someone else's count stays.
	patch(g, c, m, `{"spec":{"size":1}}`)
	poke(g, c, asV2(g, c, tds), "2h")
	g.Consistently(size, time.Second).Should(Equal(int32(1)), "suspended")

	g.Expect(c.Delete(bg, tds)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), tds)) }).Should(BeTrue())
	g.Expect(size(g)).To(Equal(int32(2)), "onDelete Restore gives back the original size")
}

// expectRefused waits for tds to report Ready=False with reason and
// message, with no target status, and for the Warning event.
func expectRefused(g *WithT, c client.Client, tds *schedulev2.TDSet, reason, message string) {
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(fetch(g, c, tds), conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(reason))
		g.Expect(ready.Message).To(Equal(message))
		g.Expect(tds.Status.Target).To(BeNil())
	}).Should(Succeed(), tds.Name)
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, tds.Namespace, tds.Name) }).Should(
		ContainElement("Warning "+reason+": "+message), tds.Name)
}

// A target the TDSet may not or cannot scale is reported (Ready=False with
// the reason and a Warning event) and nothing is written; a target that
// appears later is scaled; a TDSet whose target is gone is deleted.
func TestScaleTargetRefused(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{ScalableKinds: []schema.GroupKind{{Group: "apps", Kind: "Deployment"}, {Kind: "ConfigMap"}}})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
	g.Expect(c.Create(bg, cm)).To(Succeed())
	sts := builders.StatefulSet(ns, "db", 1)
	g.Expect(c.Create(bg, sts)).To(Succeed())

	for _, tc := range []struct {
		name, apiVersion, kind, target, reason, message string
	}{
		{"not-allowed", "apps/v1", "StatefulSet", "db", schedulev2.ReasonTargetKindNotAllowed,
			"StatefulSet.apps is not a kind this manager scales (--tdset-scalable-kinds: Deployment.apps, ConfigMap); nothing is written to it"},
		{"missing", "apps/v1", "Deployment", "web", schedulev2.ReasonTargetNotFound,
			"Deployment web does not exist in namespace " + ns + "; nothing is written to it"},
		{"not-scalable", "v1", "ConfigMap", "settings", schedulev2.ReasonTargetNotScalable,
			"ConfigMap settings has no scale subresource; nothing is written to it"},
	} {
		tds := builders.TDSet(ns, tc.name).ScaleTarget(tc.apiVersion, tc.kind, tc.target).OnDelete(schedulev2.OnDeleteRestore).Obj()
		g.Expect(c.Create(bg, tds)).To(Succeed())
		expectRefused(g, c, tds, tc.reason, tc.message)
	}
	g.Expect(c.Get(bg, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
	g.Expect(sts.Spec.Replicas).To(HaveValue(Equal(int32(1))), "a kind not allowed is not written")

	// The missing Deployment appears: the watch sees it, and it is scaled.
	missing := builders.TDSet(ns, "missing").Obj()
	g.Expect(c.Create(bg, builders.Deployment(ns, "web", 1))).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5))) }).Should(Succeed())

	// Its target goes, then the TDSet (onDelete Restore): nothing holds the
	// deletion up.
	g.Expect(c.Delete(bg, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}})).To(Succeed())
	g.Expect(c.Delete(bg, missing)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(missing), missing)) }).Should(BeTrue())
}

// Two TDSets that name the same target: the later one reports the
// conflict and writes nothing; the first scales it.
func TestScaleTargetConflict(t *testing.T) {
	g, c, ns, first := scalingWeb(t, "a-first")

	// Its own schedule would set 7; it must not.
	second := builders.TDSet(ns, "b-second").DefaultReplicas(7).Windows().ScaleTarget("apps/v1", "Deployment", "web").Obj()
	g.Expect(c.Create(bg, second)).To(Succeed())
	msg := "TDSet a-first, created before this one, already scales Deployment web; nothing is written to it"
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(fetch(g, c, second), conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonTargetConflict))
		g.Expect(ready.Message).To(Equal(msg))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "b-second") }).Should(
		ContainElement("Warning TargetConflict: " + msg))
	g.Consistently(func(g Gomega) int32 { return replicasOf(g, c, ns, "web") }).Should(Equal(int32(5)))

	// The first goes (Keep): the second takes over.
	g.Expect(c.Delete(bg, first)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(first), first)) }).Should(BeTrue())
	// The first one's deletion wakes the second.
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(7))) }).Should(Succeed())
	g.Expect(fetch(g, c, second).Status.Target.OriginalReplicas).To(HaveValue(Equal(int32(5))), "its original is the count it found")
}

// A scale target cannot be changed, through v2 (the schema) or through v1
// (the annotation, which the webhook holds to the same rule).
func TestScaleTargetImmutable(t *testing.T) {
	env := testenv.Get(t)
	g := NewWithT(t)
	ns := env.Namespace(t)
	c := env.Client
	tds := builders.TDSet(ns, "fixed").ScaleTarget("apps/v1", "Deployment", "web").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())

	err := c.Patch(bg, tds, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"scaleTargetRef":{"name":"other"}}}`)))
	expectAnswer(g, err, invalid, "spec.scaleTargetRef is immutable")

	v1 := asV1(g, c, tds)
	v1.Annotations[schedulev1.AnnotationV2Data] = strings.Replace(v1.Annotations[schedulev1.AnnotationV2Data], `"name":"web"`, `"name":"other"`, 1)
	g.Expect(v1.Annotations[schedulev1.AnnotationV2Data]).To(ContainSubstring(`"name":"other"`))
	expectAnswer(g, c.Update(bg, v1), denied, "spec.scaleTargetRef is immutable: delete the TDSet (spec.onDelete says what the target keeps) and create another")

	// Other fields still change through v1.
	v1 = asV1(g, c, tds)
	v1.Spec.Suspend = true
	g.Expect(c.Update(bg, v1)).To(Succeed())
	g.Expect(asV2(g, c, tds).Spec.ScaleTargetRef.Name).To(Equal("web"))
}

// A target another controller sets the count of (a controller
// ownerReference, or this operator's managed-by label) is refused and
// never written: the two would otherwise undo each other's writes.
func TestScaleTargetControlledRefused(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	g.Expect(c.Create(bg, owner)).To(Succeed())
	owned := builders.Deployment(ns, "owned", 2)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID, Controller: ptr.To(true)}}
	g.Expect(c.Create(bg, owned)).To(Succeed())
	labelled := builders.Deployment(ns, "labelled", 2)
	labelled.Labels = map[string]string{ownership.LabelManagedBy: ownership.ManagedBy}
	g.Expect(c.Create(bg, labelled)).To(Succeed())

	for _, tc := range []struct{ target, message string }{
		{"owned", "Deployment owned is controlled by ConfigMap owner, which sets its replicas; nothing is written to it"},
		{"labelled", "Deployment labelled is managed by multi-operator (label app.kubernetes.io/managed-by), which sets its replicas; nothing is written to it"},
	} {
		before := deployment(g, c, ns, tc.target)
		tds := builders.TDSet(ns, tc.target).ScaleTarget("apps/v1", "Deployment", tc.target).Obj()
		g.Expect(c.Create(bg, tds)).To(Succeed())
		expectRefused(g, c, tds, schedulev2.ReasonTargetControlled, tc.message)
		g.Consistently(func(g Gomega) {
			after := deployment(g, c, ns, tc.target)
			g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), tc.target)
			g.Expect(after.Generation).To(Equal(before.Generation), tc.target)
		}).Should(Succeed())
	}
	g.Expect(tdset.DefaultScalableKinds()).NotTo(ContainElement(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}))
}

// A scale target can be neither added to a TDSet that creates its own
// Deployment nor removed from one that scales a workload, through v2 (the
// schema) or through v1 (the annotation, which the webhook holds to the
// same rule).
func TestScaleTargetCannotBeAddedOrRemoved(t *testing.T) {
	env := testenv.Get(t)
	g := NewWithT(t)
	ns := env.Namespace(t)
	c := env.Client
	const msg = "spec.scaleTargetRef cannot be added or removed: a TDSet either creates its own Deployment (spec.container) or scales an existing workload for its whole life; delete it and create another"
	own := builders.TDSet(ns, "own").Obj()
	g.Expect(c.Create(bg, own)).To(Succeed())
	scaler := builders.TDSet(ns, "scaler").ScaleTarget("apps/v1", "Deployment", "web").Obj()
	g.Expect(c.Create(bg, scaler)).To(Succeed())

	// v2: added, removed.
	err := c.Patch(bg, own, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"container":null,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`)))
	expectAnswer(g, err, invalid, msg)
	err = c.Patch(bg, scaler, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"scaleTargetRef":null,"container":{"image":"crccheck/hello-world","port":8000}}}`)))
	expectAnswer(g, err, invalid, msg)

	// v1: added through the annotation, in place of the container.
	v1 := asV1(g, c, own)
	v1.Spec.Container = schedulev1.ContainerSpec{}
	if v1.Annotations == nil {
		v1.Annotations = map[string]string{}
	}
	v1.Annotations[schedulev1.AnnotationV2Data] = `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}`
	expectAnswer(g, c.Update(bg, v1), denied, msg)

	// v1: removed, the annotation dropped and a container given.
	v1 = asV1(g, c, scaler)
	g.Expect(v1.Annotations).To(HaveKey(schedulev1.AnnotationV2Data))
	delete(v1.Annotations, schedulev1.AnnotationV2Data)
	v1.Spec.Container = schedulev1.ContainerSpec{Image: "crccheck/hello-world", Port: 8000}
	expectAnswer(g, c.Update(bg, v1), denied, msg)

	g.Expect(asV2(g, c, own).Spec.ScaleTargetRef).To(BeNil())
	g.Expect(asV2(g, c, scaler).Spec.ScaleTargetRef).NotTo(BeNil())
}

// status.target.originalReplicas is bounded like every count of the spec:
// a larger target's count is recorded at the bound (and given back as
// that), and the schema refuses a larger value.
func TestScaleTargetOriginalReplicasBounded(t *testing.T) {
	g, c, ns, _ := scaling(t, reconciler.Options{})
	g.Expect(c.Create(bg, builders.Deployment(ns, "big", 1500))).To(Succeed())
	tds := builders.TDSet(ns, "big").ScaleTarget("apps/v1", "Deployment", "big").OnDelete(schedulev2.OnDeleteRestore).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "big")).To(Equal(int32(5))) }).Should(Succeed())
	g.Expect(fetch(g, c, tds).Status.Target.OriginalReplicas).To(HaveValue(Equal(int32(schedulev2.MaxReplicas))))

	err := c.Status().Patch(bg, tds, client.RawPatch(types.MergePatchType, []byte(`{"status":{"target":{"originalReplicas":1001}}}`)))
	expectAnswer(g, err, invalid, "status.target.originalReplicas")
	err = c.Status().Patch(bg, tds, client.RawPatch(types.MergePatchType, []byte(`{"status":{"target":{"originalReplicas":-1}}}`)))
	expectAnswer(g, err, invalid, "status.target.originalReplicas")

	g.Expect(c.Delete(bg, tds)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), tds)) }).Should(BeTrue())
	g.Expect(replicasOf(g, c, ns, "big")).To(Equal(int32(schedulev2.MaxReplicas)), "restored at the bound")
}
