package tdset_test

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/samples"
	"github.com/multi-operator/multi-operator/test/framework/testclock"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// The API server converts v1 through the package's webhook server, which
// also runs the v2 validating webhook of config/webhook.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWith(m, testenv.RunOptions{Webhooks: tdset.SetupWebhooks}, schedulev1.AddToScheme, schedulev2.AddToScheme, cachev1alpha1.AddToScheme, cachev1.AddToScheme))
}

// office is a Tuesday at 10:00 UTC: window every day 09:00-17:00 (5
// replicas) of the original's schedule applies until 17:00, then window
// 17:00-19:00 (3).
var office = time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)

// The original's windows as v2 names them in the status and in events.
const (
	window9to17  = "window every day 09:00-17:00"
	window17to19 = "window every day 17:00-19:00"
)

var bg = context.Background()

func deployment(g Gomega, c client.Client, ns, name string) *appsv1.Deployment {
	dep := &appsv1.Deployment{}
	g.Expect(c.Get(bg, client.ObjectKey{Namespace: ns, Name: name}, dep)).To(Succeed())
	return dep
}

func replicasOf(g Gomega, c client.Client, ns, name string) int32 {
	return ptr.Deref(deployment(g, c, ns, name).Spec.Replicas, -1)
}

// fetch reads tds again, in its own version.
func fetch[T client.Object](g Gomega, c client.Client, tds T) T {
	g.Expect(c.Get(bg, client.ObjectKeyFromObject(tds), tds)).To(Succeed())
	return tds
}

// asV2 reads the TDSet called like obj (of any version) as v2.
func asV2(g Gomega, c client.Client, obj client.Object) *schedulev2.TDSet {
	tds := &schedulev2.TDSet{}
	g.Expect(c.Get(bg, client.ObjectKeyFromObject(obj), tds)).To(Succeed())
	return tds
}

// asV1 reads the TDSet called like obj (of any version) as v1.
func asV1(g Gomega, c client.Client, obj client.Object) *schedulev1.TDSet {
	tds := &schedulev1.TDSet{}
	g.Expect(c.Get(bg, client.ObjectKeyFromObject(obj), tds)).To(Succeed())
	return tds
}

// patch applies a JSON merge patch, which needs no resourceVersion and so
// never conflicts with the controller's writes.
func patch(g Gomega, c client.Client, obj client.Object, p string) {
	g.Expect(c.Patch(bg, obj, client.RawPatch(types.MergePatchType, []byte(p)))).To(Succeed())
}

// suspendAt suspends tds, waits until the controller has seen that, and
// only then moves clk to at and changes the spec (resyncInterval), so that
// the controller looks at the new time suspended. In the other order a
// reconcile in between (a Deployment status update may start one at any
// time) would see the new time unsuspended and scale.
func suspendAt(g Gomega, c client.Client, tds *schedulev2.TDSet, clk *clocktesting.FakeClock, at time.Time) {
	patch(g, c, tds, `{"spec":{"suspend":true}}`)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
		g.Expect(conditions.IsTrue(tds, schedulev2.ConditionSuspended)).To(BeTrue())
	}).Should(Succeed())
	clk.SetTime(at)
	patch(g, c, tds, `{"spec":{"resyncInterval":"2h"}}`)
}

// The original's v1 sample reaches the controller converted to v2.
func TestOriginalSampleAppliesUnchanged(t *testing.T) {
	g := NewWithT(t)
	_, c, _ := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "temp"}}
	if err := c.Create(bg, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tds := &schedulev1.TDSet{}
	samples.Load(t, "tdset.yaml", tds)
	g.Expect(tds.APIVersion).To(Equal("schedule.rs/v1"), "the original's sample is v1")
	g.Expect(tds.Namespace).To(Equal("temp"), "the sample is applied as it is")
	g.Expect(c.Create(bg, tds)).To(Succeed())
	t.Cleanup(func() {
		_ = c.Delete(bg, tds)
		// envtest runs no garbage collector.
		_ = c.Delete(bg, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "temp", Name: tds.Name}})
	})
	g.Expect(fetch(g, c, tds).Spec.TimeZone).To(Equal("UTC"), "timeZone defaults to UTC")
	g.Expect(asV2(g, c, tds).Spec.TimeZone).To(Equal("UTC"))

	var dep *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		dep = deployment(g, c, "temp", "tdset-hello-world")
		g.Expect(*dep.Spec.Replicas).To(Equal(int32(5)), "window 9-17 at 10:00 UTC")
	}).Should(Succeed())
	g.Expect(metav1.IsControlledBy(dep, asV2(g, c, tds))).To(BeTrue())
	g.Expect(dep.OwnerReferences[0].APIVersion).To(Equal("schedule.rs/v2"), "the controller owns it through the hub")
	g.Expect(dep.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
	ctr := dep.Spec.Template.Spec.Containers[0]
	g.Expect(ctr.Image).To(Equal("crccheck/hello-world"))
	g.Expect(ctr.Ports).To(HaveLen(1))
	g.Expect(ctr.Ports[0].Name).To(Equal("http"))
	g.Expect(ctr.Ports[0].ContainerPort).To(Equal(int32(8000)))
	g.Expect(*dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(ctr.Resources.Limits).To(HaveKey(corev1.ResourceMemory))
	g.Expect(apierrors.IsNotFound(c.Get(bg, client.ObjectKey{Namespace: "temp", Name: tds.Name}, &corev1.Service{}))).To(BeTrue(), "no spec.service, no Service")
	g.Expect(apierrors.IsNotFound(c.Get(bg, client.ObjectKey{Namespace: "temp", Name: tds.Name}, &autoscalingv2.HorizontalPodAutoscaler{}))).To(BeTrue(), "no spec.autoscaling, no HPA")

	g.Eventually(func(g Gomega) {
		v2 := asV2(g, c, tds)
		st := v2.Status
		g.Expect(st.ObservedGeneration).To(Equal(v2.Generation))
		g.Expect(st.CurrentReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(st.ActiveRule).To(Equal(window9to17))
		g.Expect(st.ActiveWindow).To(HaveValue(Equal(int32(0))))
		g.Expect(st.NextTransitionTime).NotTo(BeNil())
		g.Expect(st.NextTransitionTime.Time.Equal(time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC))).To(BeTrue(), "next %s", st.NextTransitionTime)
		g.Expect(st.NextReplicas).To(HaveValue(Equal(int32(3))))
		g.Expect(st.AvailableReplicas).To(HaveValue(Equal(int32(0))))
		scheduled := conditions.Get(v2, schedulev2.ConditionScheduled)
		g.Expect(scheduled.Reason).To(Equal(schedulev2.ReasonWindowActive))
		g.Expect(scheduled.Message).To(Equal("Window every day 09:00-17:00 sets 5 replicas until 2026-03-10T17:00:00Z, then 3 (window every day 17:00-19:00)"))
		g.Expect(conditions.Get(v2, conditions.Ready).Reason).To(Equal(schedulev2.ReasonProgressing))

		// The same status as v1 shows it.
		v1 := fetch(g, c, tds)
		g.Expect(v1.Status.ObservedGeneration).To(Equal(v1.Generation))
		g.Expect(v1.Status.DesiredReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(v1.Status.ActiveWindow).To(HaveValue(Equal(int32(0))))
		g.Expect(v1.Status.NextReplicas).To(HaveValue(Equal(int32(3))))
		// v1 has no field for the active rule, and says everything else.
		g.Expect(v1.Annotations).To(Equal(map[string]string{schedulev1.AnnotationV2Data: `{"activeRule":"window every day 09:00-17:00"}`}))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, "temp", tds.Name) }).Should(
		ContainElement("Normal DeploymentCreated: Created Deployment tdset-hello-world with 5 replicas (window every day 09:00-17:00)"))

	testenv.MakeDeploymentAvailable(g, c, client.ObjectKeyFromObject(tds))
	g.Eventually(func(g Gomega) {
		v2 := asV2(g, c, tds)
		g.Expect(v2.Status.AvailableReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(conditions.IsTrue(v2, conditions.Ready)).To(BeTrue())
	}).Should(Succeed())
}

// atTheOffice starts the controller at office time and creates the TDSet
// name of builders.TDSet, and waits until its Deployment has the window's
// 5 replicas.
func atTheOffice(t *testing.T, name string) (*WithT, client.Client, string, *schedulev2.TDSet) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, name).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, name)).To(Equal(int32(5))) }).Should(Succeed())
	return g, c, ns, tds
}

// The gauges follow the schedule and the Deployment, and every series goes
// with the TDSet.
func TestMetricsFollowTheScheduleAndGoWithTheTDSet(t *testing.T) {
	g, c, ns, tds := atTheOffice(t, "measured")
	testenv.MakeDeploymentAvailable(g, c, client.ObjectKeyFromObject(tds))

	g.Eventually(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "tdset_", ns, "measured") }).Should(Equal(map[string]float64{
		"tdset_desired_replicas{}":                     5,
		"tdset_available_replicas{}":                   5,
		"tdset_next_transition_timestamp_seconds{}":    float64(time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC).Unix()),
		`tdset_active_rule_source{source="default"}`:   0,
		`tdset_active_rule_source{source="window"}`:    1,
		`tdset_active_rule_source{source="exception"}`: 0,
		`tdset_active_rule_source{source="override"}`:  0,
	}), "window 9-17 at 10:00 until 17:00; no lead time started, no scale failed")

	g.Expect(c.Delete(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "tdset_", ns, "measured") }).Should(BeEmpty())
}

// A Deployment of the TDSet's name that another owner has is a scale the
// controller cannot make: counted, with the schedule's count still shown.
func TestMetricsCountAScaleThatFails(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "taken").Obj()
	g.Expect(c.Create(bg, tdset.DesiredDeployment(tds, ptr.To[int32](1)))).To(Succeed())
	g.Expect(c.Create(bg, tds)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(conditions.Get(fetch(g, c, tds), conditions.Ready)).To(HaveField("Reason", conditions.ReasonResourceConflict))
		series := testenv.SeriesOf(g, "tdset_", ns, "taken")
		g.Expect(series).To(HaveKeyWithValue("tdset_scale_errors_total{}", BeNumerically(">=", 1)))
		g.Expect(series).To(HaveKeyWithValue("tdset_desired_replicas{}", 5.0))
		g.Expect(series).NotTo(HaveKey("tdset_available_replicas{}"), "no Deployment of its own")
	}).Should(Succeed())
	g.Expect(replicasOf(g, c, ns, "taken")).To(Equal(int32(1)), "the other owner's Deployment is left alone")
}

// A scale-up that spec.scaleUpLeadTime starts early is counted once, when
// the lead time starts, however often the TDSet is reconciled in it.
func TestMetricsCountALeadTimeOnce(t *testing.T) {
	g := NewWithT(t)
	// 08:30: window 07:00-09:00 (3 replicas); window 09:00-17:00 (5) starts
	// 15 minutes early, at 08:45.
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 10, 8, 30, 0, 0, time.UTC))
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clk}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "early").ScaleUpLeadTime(15 * time.Minute).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "early")).To(Equal(int32(3))) }).Should(Succeed())
	g.Expect(testenv.SeriesOf(g, "tdset_", ns, "early")).NotTo(HaveKey("tdset_lead_time_starts_total{}"))

	// Past 08:45; a spec change wakes the controller, whose requeue is
	// still a real quarter of an hour away.
	clk.SetTime(time.Date(2026, 3, 10, 8, 50, 0, 0, time.UTC))
	patch(g, c, tds, `{"spec":{"resyncInterval":"2h"}}`)
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "early")).To(Equal(int32(5))) }).Should(Succeed())
	g.Eventually(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "tdset_", ns, "early") }).Should(And(
		HaveKeyWithValue("tdset_lead_time_starts_total{}", 1.0),
		HaveKeyWithValue("tdset_desired_replicas{}", 5.0),
		HaveKeyWithValue(`tdset_active_rule_source{source="window"}`, 1.0),
	))

	patch(g, c, tds, `{"spec":{"resyncInterval":"3h"}}`)
	g.Eventually(func(g Gomega) int64 { return fetch(g, c, tds).Status.ObservedGeneration }).Should(Equal(tds.Generation))
	g.Expect(testenv.SeriesOf(g, "tdset_", ns, "early")).To(HaveKeyWithValue("tdset_lead_time_starts_total{}", 1.0), "still the same lead time")
}

func TestTimeZoneSampleCreatesServiceAndFollowsBerlin(t *testing.T) {
	g := NewWithT(t)
	// 08:30 UTC on 1 July is 10:30 in Berlin (CEST, +2): window 9-17.
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(time.Date(2026, 7, 1, 8, 30, 0, 0, time.UTC))}, testenv.ManagerOptions{})
	tds := &schedulev1.TDSet{}
	samples.Load(t, "tdset-timezone.yaml", tds)
	tds.Namespace = ns
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(int32(5)))
		svc := &corev1.Service{}
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(tds), svc)).To(Succeed())
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(80)))
		v2 := asV2(g, c, tds)
		g.Expect(v2.Spec.ResyncInterval).To(Equal(&metav1.Duration{Duration: 30 * time.Minute}), "intervalMint 30")
		g.Expect(v2.Status.NextTransitionTime).NotTo(BeNil())
		g.Expect(v2.Status.NextTransitionTime.Time.Equal(time.Date(2026, 7, 1, 15, 0, 0, 0, time.UTC))).To(BeTrue(), "17:00 CEST, got %s", v2.Status.NextTransitionTime)
	}).Should(Succeed())
}

// The v2 sample: weekday windows with minutes, a Saturday window, an
// exception and a lead time.
func TestV2SampleFollowsItsWeekdayWindow(t *testing.T) {
	g := NewWithT(t)
	// Wednesday 1 July 2026, 08:30 UTC is 10:30 in Berlin: Mon-Fri 08:30-18:00.
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(time.Date(2026, 7, 1, 8, 30, 0, 0, time.UTC))}, testenv.ManagerOptions{})
	tds := &schedulev2.TDSet{}
	samples.Load(t, "tdset-v2.yaml", tds)
	g.Expect(tds.APIVersion).To(Equal("schedule.rs/v2"))
	tds.Namespace = ns
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(int32(6)))
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(tds), &corev1.Service{})).To(Succeed())
		st := fetch(g, c, tds).Status
		g.Expect(st.ActiveRule).To(Equal("window Mon-Fri 08:30-18:00"))
		g.Expect(st.ActiveWindow).To(HaveValue(Equal(int32(0))))
		g.Expect(st.NextTransitionTime).NotTo(BeNil())
		g.Expect(st.NextTransitionTime.Time.Equal(time.Date(2026, 7, 1, 16, 0, 0, 0, time.UTC))).To(BeTrue(), "18:00 CEST, on time: a scale-down, got %s", st.NextTransitionTime)
		g.Expect(st.NextReplicas).To(HaveValue(Equal(int32(2))))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, tds.Name) }).Should(
		ContainElement("Normal DeploymentCreated: Created Deployment shop-frontend with 6 replicas (window Mon-Fri 08:30-18:00)"))
}

// driftBound is how soon drift is corrected: through the Deployment's
// watch, at once, where a resync would take hours; the margin is for a
// loaded machine (CI runs this test at the lowest priority beside others),
// speed is for make bench.
const driftBound = 10 * time.Second

// landBound is how soon after a boundary the new count lands through the
// requeue timer, with the same margin.
const landBound = 5 * time.Second

// A Deployment changed or deleted by hand is put back through its watch.
func TestDriftIsCorrectedThroughTheWatch(t *testing.T) {
	_, c, ns, _ := atTheOffice(t, "drift")

	t.Run("replicas changed by hand", func(t *testing.T) {
		g := NewWithT(t)
		patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}, `{"spec":{"replicas":9}}`)
		g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "drift")).To(Equal(int32(5))) }).WithTimeout(driftBound).Should(Succeed())
		g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "drift") }).Should(
			ContainElement("Normal DeploymentScaled: Scaled Deployment drift from 9 to 5 (window every day 09:00-17:00)"))
	})
	t.Run("a different image", func(t *testing.T) {
		g := NewWithT(t)
		// A JSON patch, not an Update: it cannot conflict with the
		// controller's own writes to the Deployment.
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}
		g.Expect(c.Patch(bg, dep, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/other"}]`)))).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/other"))
		g.Eventually(func(g Gomega) {
			g.Expect(deployment(g, c, ns, "drift").Spec.Template.Spec.Containers[0].Image).To(Equal("crccheck/hello-world"))
		}).WithTimeout(driftBound).Should(Succeed())
	})
	t.Run("the Deployment deleted", func(t *testing.T) {
		g := NewWithT(t)
		old := deployment(g, c, ns, "drift")
		g.Expect(c.Delete(bg, old)).To(Succeed())
		g.Eventually(func(g Gomega) {
			dep := deployment(g, c, ns, "drift")
			g.Expect(dep.UID).NotTo(Equal(old.UID))
			g.Expect(*dep.Spec.Replicas).To(Equal(int32(5)))
		}).WithTimeout(driftBound).Should(Succeed())
	})
}

func TestSpecChangesRollOut(t *testing.T) {
	g, c, ns, tds := atTheOffice(t, "rollout")

	patch(g, c, tds, `{"spec":{"container":{"image":"registry.example/app:2","port":9090}}}`)
	g.Eventually(func(g Gomega) {
		ctr := deployment(g, c, ns, "rollout").Spec.Template.Spec.Containers[0]
		g.Expect(ctr.Image).To(Equal("registry.example/app:2"))
		g.Expect(ctr.Ports[0].ContainerPort).To(Equal(int32(9090)))
		g.Expect(ctr.Ports[0].Name).To(Equal("http"))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "rollout") }).Should(
		ContainElement(HavePrefix("Normal DeploymentUpdated: Updated the pod template of Deployment rollout")))
	g.Expect(replicasOf(g, c, ns, "rollout")).To(Equal(int32(5)), "a new template keeps the count")
}

// A podTemplate written through v1 reaches the Deployment, and a change
// to it rolls out like any other template change.
func TestPodTemplateRollsOutFromEitherVersion(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	v1 := builders.TDSetV1(ns, "placed")
	v1.Spec.PodTemplate = builders.PodTemplate()
	g.Expect(c.Create(bg, v1)).To(Succeed())
	g.Eventually(func(g Gomega) {
		dep := deployment(g, c, ns, "placed")
		builders.ExpectPodTemplate(g, dep.Spec.Template, dep.Spec.Selector.MatchLabels)
	}).Should(Succeed())
	g.Expect(asV2(g, c, v1).Spec.PodTemplate).To(Equal(builders.PodTemplate()), "v2 reads what v1 wrote")

	patch(g, c, asV2(g, c, v1), `{"spec":{"podTemplate":{"nodeSelector":{"pool":"night"},"affinity":null,"topologySpreadConstraints":null}}}`)
	g.Eventually(func(g Gomega) {
		pod := deployment(g, c, ns, "placed").Spec.Template.Spec
		g.Expect(pod.NodeSelector).To(Equal(map[string]string{"pool": "night"}))
		g.Expect(pod.Affinity).To(BeNil())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "placed") }).Should(
		ContainElement(HavePrefix("Normal DeploymentUpdated: Updated the pod template of Deployment placed")))
}

func TestServiceIsAddedAndRemoved(t *testing.T) {
	g, c, ns, tds := atTheOffice(t, "web")
	g.Expect(apierrors.IsNotFound(c.Get(bg, client.ObjectKey{Namespace: ns, Name: "web"}, &corev1.Service{}))).To(BeTrue())

	patch(g, c, tds, `{"spec":{"service":{"port":8080}}}`)
	svc := &corev1.Service{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(bg, client.ObjectKey{Namespace: ns, Name: "web"}, svc)).To(Succeed())
		g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		g.Expect(svc.Spec.Ports).To(HaveLen(1))
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(8080)))
		g.Expect(svc.Spec.Ports[0].TargetPort.StrVal).To(Equal("http"))
		g.Expect(svc.Spec.Selector).To(Equal(deployment(g, c, ns, "web").Spec.Selector.MatchLabels))
	}).Should(Succeed())
	g.Expect(metav1.IsControlledBy(svc, fetch(g, c, tds))).To(BeTrue())

	patch(g, c, tds, `{"spec":{"service":{"port":9090}}}`)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(bg, client.ObjectKey{Namespace: ns, Name: "web"}, svc)).To(Succeed())
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(9090)))
	}).Should(Succeed())

	patch(g, c, tds, `{"spec":{"service":null}}`)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(bg, client.ObjectKey{Namespace: ns, Name: "web"}, &corev1.Service{}))
	}).Should(BeTrue())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "web") }).Should(ContainElements(
		"Normal ServiceCreated: Created Service web on port 8080",
		"Normal ServiceUpdated: Updated Service web to port 9090",
		"Normal ServiceDeleted: Deleted Service web: spec.service.port is not set"))
}

func TestForeignServiceIsNotDeleted(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	// Labelled like ours, so the cache sees it, but controlled by no TDSet.
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "multi-operator"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	g.Expect(c.Create(bg, foreign)).To(Succeed())
	g.Expect(c.Create(bg, builders.TDSet(ns, "shared").Obj())).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "shared")).To(Equal(int32(5))) }).Should(Succeed())
	g.Consistently(func(g Gomega) {
		svc := &corev1.Service{}
		g.Expect(c.Get(bg, client.ObjectKey{Namespace: ns, Name: "shared"}, svc)).To(Succeed())
		g.Expect(svc.UID).To(Equal(foreign.UID))
	}, 2*time.Second).Should(Succeed())
}

// reconcileOnly starts a manager that only provides the event recorder, so
// that a test drives every reconcile itself.
func reconcileOnly(t *testing.T) events.Recorder {
	return testenv.EventRecorder(t, "tdset-test")
}

func TestBoundaryCrossingWithFakeClock(t *testing.T) {
	env := testenv.Get(t)
	rec := reconcileOnly(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		windows  []schedulev2.Window
		boundary time.Time // in Berlin
		before   time.Duration
		from, to int32
		event    string
		next     time.Time
	}{
		{
			name:     "window 9-17 ends in Berlin",
			windows:  builders.OriginalWindows(),
			boundary: time.Date(2026, 3, 10, 17, 0, 0, 0, berlin),
			before:   800 * time.Millisecond,
			from:     5, to: 3,
			event: "Scaled Deployment tdset-hello-world from 5 to 3 (window every day 17:00-19:00)",
			next:  time.Date(2026, 3, 10, 19, 0, 0, 0, berlin),
		},
		{
			// 02:00 CET jumps to 03:00 CEST: window 01:00-03:00 ends at the jump.
			name:     "spring forward in Berlin",
			windows:  []schedulev2.Window{builders.Window("01:00", "03:00", 4)},
			boundary: time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC),
			before:   30 * time.Minute,
			from:     4, to: 2,
			event: "Scaled Deployment tdset-hello-world from 4 to 2 (defaultReplicas)",
			next:  time.Date(2026, 3, 30, 1, 0, 0, 0, berlin),
		},
		{
			// Friday 13 March 2026 22:00 to Saturday 02:00; it does not
			// start again before next Friday.
			name:     "a Friday night window ends on Saturday",
			windows:  []schedulev2.Window{builders.Window("22:00", "02:00", 4, "Fri")},
			boundary: time.Date(2026, 3, 14, 2, 0, 0, 0, berlin),
			before:   time.Hour + 30*time.Minute,
			from:     4, to: 2,
			event: "Scaled Deployment tdset-hello-world from 4 to 2 (defaultReplicas)",
			next:  time.Date(2026, 3, 20, 22, 0, 0, 0, berlin),
		},
		{
			// Minutes, not hours: 08:30 on a weekday.
			name:     "a weekday window opens at half past",
			windows:  []schedulev2.Window{builders.Window("08:30", "18:00", 6, "Mon", "Tue", "Wed", "Thu", "Fri")},
			boundary: time.Date(2026, 3, 10, 8, 30, 0, 0, berlin),
			before:   10 * time.Second,
			from:     2, to: 6,
			event: "Scaled Deployment tdset-hello-world from 2 to 6 (window Mon-Fri 08:30-18:00)",
			next:  time.Date(2026, 3, 10, 18, 0, 0, 0, berlin),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c, ns := env.Client, env.Namespace(t)
			clk := clocktesting.NewFakeClock(tc.boundary.Add(-tc.before))
			r := tdset.NewWithClient(c, rec, reconciler.Options{Clock: clk})
			tds := builders.TDSet(ns, "tdset-hello-world").TimeZone("Europe/Berlin").Windows(tc.windows...).DefaultReplicas(2).Obj()
			g.Expect(c.Create(bg, tds)).To(Succeed())
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tds)}

			res, err := r.Reconcile(bg, req)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(tc.from))
			g.Expect(res.RequeueAfter).To(Equal(tc.before), "requeued exactly at the boundary")
			fetch(g, c, tds)
			g.Expect(tds.Status.NextTransitionTime.Time.Equal(tc.boundary)).To(BeTrue(), "next %s", tds.Status.NextTransitionTime)
			g.Expect(tds.Status.NextReplicas).To(HaveValue(Equal(tc.to)))

			// A millisecond early the old count still holds, and the
			// controller asks to come back in exactly that millisecond.
			clk.Step(res.RequeueAfter - time.Millisecond)
			res, err = r.Reconcile(bg, req)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(tc.from))
			g.Expect(res.RequeueAfter).To(Equal(time.Millisecond))

			// The requeue fires: the new count lands at the boundary.
			clk.Step(res.RequeueAfter)
			res, err = r.Reconcile(bg, req)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(tc.to))
			landed := clk.Now()
			g.Expect(landed.Sub(tc.boundary)).To(BeNumerically(">=", 0))
			g.Expect(landed.Sub(tc.boundary)).To(BeNumerically("<", time.Second))
			g.Expect(res.RequeueAfter).To(Equal(tc.next.Sub(tc.boundary)))
			fetch(g, c, tds)
			g.Expect(tds.Status.CurrentReplicas).To(HaveValue(Equal(tc.to)))
			g.Expect(tds.Status.NextTransitionTime.Time.Equal(tc.next)).To(BeTrue(), "next %s", tds.Status.NextTransitionTime)
			g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, tds.Name) }).Should(ContainElement("Normal DeploymentScaled: " + tc.event))
		})
	}
}

// TestBoundaryCrossingThroughTheManager lets controller-runtime's own requeue
// timer carry the controller across a boundary two seconds ahead: the new
// count must land after it, never before, and soon after (landBound: the
// timer, not a resync hours away; how soon is for make bench).
func TestBoundaryCrossingThroughTheManager(t *testing.T) {
	g := NewWithT(t)
	clk := &testclock.Offset{}
	clk.Set(office)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clk}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "timer").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "timer")).To(Equal(int32(5))) }).Should(Succeed())

	// Jump to two seconds before 17:00 and wake the controller by touching
	// its Deployment; its requeue from 10:00 is hours away.
	boundary := time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC)
	const lead = 2 * time.Second
	realBoundary := clk.Set(boundary.Add(-lead)).Add(lead)
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "timer"}}, `{"metadata":{"annotations":{"test/wake":"1"}}}`)

	var landed time.Time
	g.Eventually(func(g Gomega) {
		n := replicasOf(g, c, ns, "timer")
		if n == 5 {
			g.Expect(time.Now()).To(BeTemporally("<", realBoundary.Add(landBound)), "still 5 long after the boundary")
		}
		g.Expect(n).To(Equal(int32(3)))
		landed = time.Now()
	}).WithTimeout(lead + landBound + 5*time.Second).WithPolling(10 * time.Millisecond).Should(Succeed())
	g.Expect(landed).To(BeTemporally(">=", realBoundary), "scaled before the boundary")
	g.Expect(landed).To(BeTemporally("<", realBoundary.Add(landBound)), "landed %s after the boundary", landed.Sub(realBoundary))
}

func TestSuspendKeepsTheReplicaCount(t *testing.T) {
	g := NewWithT(t)
	clk := clocktesting.NewFakeClock(office)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clk}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "paused").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(5))) }).Should(Succeed())

	// Past 17:00 the schedule wants 3, but the TDSet is suspended.
	suspendAt(g, c, tds, clk, time.Date(2026, 3, 10, 17, 30, 0, 0, time.UTC))
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
		g.Expect(conditions.IsTrue(tds, schedulev2.ConditionSuspended)).To(BeTrue())
		g.Expect(conditions.Get(tds, schedulev2.ConditionScheduled).Reason).To(Equal(schedulev2.ReasonSuspended))
		g.Expect(tds.Status.CurrentReplicas).To(HaveValue(Equal(int32(3))), "the status still says what the schedule wants")
		g.Expect(tds.Status.ActiveRule).To(Equal(window17to19))
	}).Should(Succeed())
	g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(5)), "suspended before it scaled")
	// Scaled by hand while suspended: that count is kept too.
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "paused"}}, `{"spec":{"replicas":7}}`)
	g.Consistently(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(7))) }, 2*time.Second).Should(Succeed())

	patch(g, c, tds, `{"spec":{"suspend":false}}`)
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(3))) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(conditions.Get(tds, schedulev2.ConditionSuspended).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(conditions.IsTrue(tds, schedulev2.ConditionScheduled)).To(BeTrue())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "paused") }).Should(
		ContainElement("Normal DeploymentScaled: Scaled Deployment paused from 7 to 3 (window every day 17:00-19:00)"))
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	counted, writes := testenv.CountWrites(testenv.Get(t).Config)
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{Config: counted})
	tds := builders.TDSet(ns, "steady").ServicePort(80).TimeZone("America/St_Johns").ResyncInterval(time.Hour).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	// 10:00 UTC is 07:30 in St. John's, on summer time (-2:30) since 8 March:
	// window 07:00-09:00, 3 replicas.
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "steady")).To(Equal(int32(3)))
		g.Expect(c.Get(bg, client.ObjectKey{Namespace: ns, Name: "steady"}, &corev1.Service{})).To(Succeed())
	}).Should(Succeed())
	testenv.MakeDeploymentAvailable(g, c, client.ObjectKey{Namespace: ns, Name: "steady"})
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue())
		g.Expect(tds.Status.AvailableReplicas).To(HaveValue(Equal(int32(3))))
		g.Expect(tds.Status.ActiveWindow).To(HaveValue(Equal(int32(4))))
	}).Should(Succeed())

	// Wake the controller through both children without changing anything
	// it owns. A label, since a changed annotation bumps a Deployment's
	// generation, which rightly makes it not Ready until observed.
	testenv.ExpectSteadyState(g, writes, tdset.Name, ns, func() {
		patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steady"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
		patch(g, c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steady"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
		dep := deployment(g, c, ns, "steady")
		dep.Status.Conditions = append(dep.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"})
		g.Expect(c.Status().Update(bg, dep)).To(Succeed())
	})
}

// The offset clock must fit the Reconciler like the fake clock does.
var _ clock.PassiveClock = (*testclock.Offset)(nil)

// A Deployment available within the startup grace gives a new TDSet one
// status write, Ready=True beside the schedule; one still starting when the
// grace ends is shown then, Ready=False, without another report of it.
func TestStartupGraceSavesAStatusWrite(t *testing.T) {
	const grace = 4 * time.Second
	counted, writes := testenv.CountWrites(testenv.Get(t).Config)
	opts := reconciler.Options{Clock: clocktesting.NewFakeClock(office), StartupGrace: grace}
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), opts, testenv.ManagerOptions{Config: counted})
	statusWrites := func(name string) []string {
		return writes.Requests("/namespaces/" + ns + "/tdsets/" + name + "/status")
	}
	created := func(name string) time.Time {
		var dep *appsv1.Deployment
		g.Eventually(func(g Gomega) { dep = deployment(g, c, ns, name) }).Should(Succeed())
		return dep.CreationTimestamp.Time
	}

	quick := builders.TDSet(ns, "quick").Obj()
	g.Expect(c.Create(bg, quick)).To(Succeed())
	created(quick.Name)
	g.Consistently(func(g Gomega) []metav1.Condition { return fetch(g, c, quick).Status.Conditions }, time.Second).Should(BeEmpty())
	testenv.MakeDeploymentAvailable(g, c, client.ObjectKeyFromObject(quick))
	g.Eventually(func(g Gomega) {
		fetch(g, c, quick)
		g.Expect(conditions.IsTrue(quick, conditions.Ready)).To(BeTrue())
		g.Expect(conditions.IsTrue(quick, schedulev2.ConditionScheduled)).To(BeTrue())
	}).Should(Succeed())
	g.Expect(statusWrites(quick.Name)).To(HaveLen(1))

	slow := builders.TDSet(ns, "slow").Obj()
	g.Expect(c.Create(bg, slow)).To(Succeed())
	start := created(slow.Name)
	g.Eventually(func(g Gomega) *metav1.Condition { return conditions.Get(fetch(g, c, slow), conditions.Ready) }, 2*grace).ShouldNot(BeNil())
	// The creation time has whole seconds.
	g.Expect(time.Since(start)).To(BeNumerically(">=", grace-time.Second), "the status waited for the grace")
	g.Expect(conditions.Get(slow, conditions.Ready).Reason).To(Equal(schedulev2.ReasonProgressing))
	g.Expect(statusWrites(slow.Name)).To(HaveLen(1))
}
