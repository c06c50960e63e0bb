package tdset_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func autoscaler(g Gomega, c client.Client, ns, name string) *autoscalingv2.HorizontalPodAutoscaler {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	g.Expect(c.Get(bg, client.ObjectKey{Namespace: ns, Name: name}, hpa)).To(Succeed())
	return hpa
}

func minReplicasOf(g Gomega, c client.Client, ns, name string) int32 {
	return ptr.Deref(autoscaler(g, c, ns, name).Spec.MinReplicas, -1)
}

// updatesOf are the controller's writes to an existing object at path
// (creates go to the collection and are not among them).
func updatesOf(writes *testenv.RequestCounter, path string) []string {
	var out []string
	for _, w := range writes.Requests(path) {
		if w == "PATCH "+path || w == "PUT "+path {
			out = append(out, w)
		}
	}
	return out
}

// With spec.autoscaling, the schedule is the HPA's floor and the HPA owns
// the Deployment's replicas: the controller never writes them after
// creating the Deployment, across a boundary, while suspended and at
// steady state; removing spec.autoscaling hands the count back.
func TestAutoscalingScheduleIsTheHPAFloor(t *testing.T) {
	counted, writes := testenv.CountWrites(testenv.Get(t).Config)
	clk := clocktesting.NewFakeClock(office)
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clk}, testenv.ManagerOptions{Config: counted})
	tds := builders.TDSet(ns, "elastic").Autoscaling(10).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Expect(tds.Spec.Autoscaling.TargetCPUUtilizationPercentage).To(BeNil(), "no CRD default (it would apply with hpaRef too): the HPA gets 80 from the code")
	depPath := "/apis/apps/v1/namespaces/" + ns + "/deployments/elastic"
	key := client.ObjectKey{Namespace: ns, Name: "elastic"}

	var hpa *autoscalingv2.HorizontalPodAutoscaler
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "elastic")).To(Equal(int32(5)), "created with the schedule's count")
		hpa = autoscaler(g, c, ns, "elastic")
	}).Should(Succeed())
	g.Expect(metav1.IsControlledBy(hpa, fetch(g, c, tds))).To(BeTrue())
	g.Expect(hpa.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
		APIVersion: "schedule.rs/v2", Kind: "TDSet", Name: "elastic", UID: tds.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}))
	g.Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "elastic"}))
	g.Expect(hpa.Spec.MinReplicas).To(HaveValue(Equal(int32(5))))
	g.Expect(hpa.Spec.MaxReplicas).To(Equal(int32(10)))
	g.Expect(hpa.Spec.Metrics).To(HaveLen(1))
	g.Expect(hpa.Spec.Metrics[0].Resource.Name).To(Equal(corev1.ResourceCPU))
	g.Expect(hpa.Spec.Metrics[0].Resource.Target.Type).To(Equal(autoscalingv2.UtilizationMetricType))
	g.Expect(hpa.Spec.Metrics[0].Resource.Target.AverageUtilization).To(HaveValue(Equal(int32(80))))
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "elastic") }).Should(ContainElements(
		"Normal DeploymentCreated: Created Deployment elastic with 5 replicas (window every day 09:00-17:00)",
		"Normal AutoscalerCreated: Created HorizontalPodAutoscaler elastic with minReplicas 5 (window every day 09:00-17:00) and maxReplicas 10"))
	g.Eventually(func(g Gomega) {
		g.Expect(fetch(g, c, tds).Status.CurrentReplicas).To(HaveValue(Equal(int32(5))))
	}).Should(Succeed())

	// Crossing 17:00: the floor follows the schedule, down to 3, and the
	// count the HPA chose (envtest runs no HPA controller: the test plays
	// it, which also wakes the controller) stays.
	clk.SetTime(time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC))
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elastic"}}, `{"spec":{"replicas":7}}`)
	g.Eventually(func(g Gomega) {
		g.Expect(minReplicasOf(g, c, ns, "elastic")).To(Equal(int32(3)))
		st := fetch(g, c, tds).Status
		g.Expect(st.CurrentReplicas).To(HaveValue(Equal(int32(3))), "the HPA's minReplicas")
		g.Expect(st.ActiveRule).To(Equal(window17to19))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "elastic") }).Should(ContainElement(
		"Normal AutoscalerUpdated: Updated HorizontalPodAutoscaler elastic to minReplicas 3 (window every day 17:00-19:00), maxReplicas 10"))
	g.Consistently(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "elastic")).To(Equal(int32(7))) }, 2*time.Second).Should(Succeed())

	// A target of its own.
	patch(g, c, tds, `{"spec":{"autoscaling":{"targetCPUUtilizationPercentage":50}}}`)
	g.Eventually(func(g Gomega) {
		g.Expect(autoscaler(g, c, ns, "elastic").Spec.Metrics[0].Resource.Target.AverageUtilization).To(HaveValue(Equal(int32(50))))
	}).Should(Succeed())
	g.Expect(replicasOf(g, c, ns, "elastic")).To(Equal(int32(7)))
	g.Expect(updatesOf(writes, depPath)).To(BeEmpty(), "the Deployment is not written after its creation")

	// A template drifts: the controller corrects it, and only it.
	g.Expect(c.Patch(bg, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elastic"}}, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/other"}]`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(deployment(g, c, ns, "elastic").Spec.Template.Spec.Containers[0].Image).To(Equal("crccheck/hello-world"))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "elastic")).To(Equal(int32(7))) }, time.Second).Should(Succeed(), "the image is restored, not the count")

	// The HPA's floor drifts: corrected like any child.
	patch(g, c, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elastic"}}, `{"spec":{"minReplicas":1,"maxReplicas":2}}`)
	g.Eventually(func(g Gomega) {
		hpa := autoscaler(g, c, ns, "elastic")
		g.Expect(hpa.Spec.MinReplicas).To(HaveValue(Equal(int32(3))))
		g.Expect(hpa.Spec.MaxReplicas).To(Equal(int32(10)))
	}).Should(Succeed())

	// Steady state: Ready counts the HPA's 7, and nothing is written.
	testenv.MakeDeploymentAvailable(g, c, key)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue())
		g.Expect(conditions.Get(tds, conditions.Ready).Message).To(Equal("7/7 replicas available"))
		g.Expect(tds.Status.AvailableReplicas).To(HaveValue(Equal(int32(7))))
	}).Should(Succeed())
	testenv.ExpectSteadyState(g, writes, tdset.Name, ns, func() {
		patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elastic"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
		patch(g, c, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elastic"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
	})

	// Suspended past 19:00, where the schedule wants 2: the floor stays 3,
	// also when maxReplicas changes meanwhile.
	writes.Reset()
	suspendAt(g, c, tds, clk, time.Date(2026, 3, 10, 19, 30, 0, 0, time.UTC))
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
		g.Expect(tds.Status.CurrentReplicas).To(HaveValue(Equal(int32(2))), "the status still says what the schedule wants")
	}).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(minReplicasOf(g, c, ns, "elastic")).To(Equal(int32(3))) }, 2*time.Second).Should(Succeed())
	patch(g, c, tds, `{"spec":{"autoscaling":{"maxReplicas":12}}}`)
	g.Eventually(func(g Gomega) { g.Expect(autoscaler(g, c, ns, "elastic").Spec.MaxReplicas).To(Equal(int32(12))) }).Should(Succeed())
	g.Expect(minReplicasOf(g, c, ns, "elastic")).To(Equal(int32(3)), "the floor kept while suspended")
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "elastic") }).Should(ContainElement(
		"Normal AutoscalerUpdated: Updated HorizontalPodAutoscaler elastic to minReplicas 3 (suspended), maxReplicas 12"))
	patch(g, c, tds, `{"spec":{"suspend":false}}`)
	g.Eventually(func(g Gomega) { g.Expect(minReplicasOf(g, c, ns, "elastic")).To(Equal(int32(2))) }).Should(Succeed())
	g.Expect(replicasOf(g, c, ns, "elastic")).To(Equal(int32(7)))
	g.Expect(updatesOf(writes, depPath)).To(BeEmpty(), "the Deployment is not written while suspended either")

	// Without spec.autoscaling the HPA goes and the schedule sets the count.
	patch(g, c, tds, `{"spec":{"autoscaling":null}}`)
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(c.Get(bg, key, &autoscalingv2.HorizontalPodAutoscaler{}))).To(BeTrue())
		g.Expect(replicasOf(g, c, ns, "elastic")).To(Equal(int32(2)))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "elastic") }).Should(ContainElements(
		"Normal AutoscalerDeleted: Deleted HorizontalPodAutoscaler elastic: spec.autoscaling is not set",
		"Normal DeploymentScaled: Scaled Deployment elastic from 7 to 2 (window every day 19:00-00:00)"))
}

// Adding spec.autoscaling to a running TDSet creates the HPA with the
// schedule's floor and leaves the Deployment as it is.
func TestAutoscalingAddedLater(t *testing.T) {
	counted, writes := testenv.CountWrites(testenv.Get(t).Config)
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{Config: counted})
	tds := builders.TDSet(ns, "later").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "later")).To(Equal(int32(5))) }).Should(Succeed())
	g.Consistently(func() bool {
		return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), &autoscalingv2.HorizontalPodAutoscaler{}))
	}, time.Second).Should(BeTrue())
	depPath := "/apis/apps/v1/namespaces/" + ns + "/deployments/later"
	g.Eventually(func() []string {
		writes.Reset()
		time.Sleep(500 * time.Millisecond)
		return writes.Requests()
	}).Should(BeEmpty(), "the controller settles")

	patch(g, c, tds, `{"spec":{"autoscaling":{"maxReplicas":6,"targetCPUUtilizationPercentage":70}}}`)
	g.Eventually(func(g Gomega) {
		hpa := autoscaler(g, c, ns, "later")
		g.Expect(hpa.Spec.MinReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(hpa.Spec.MaxReplicas).To(Equal(int32(6)))
		g.Expect(hpa.Spec.Metrics[0].Resource.Target.AverageUtilization).To(HaveValue(Equal(int32(70))))
		g.Expect(fetch(g, c, tds).Status.ObservedGeneration).To(Equal(tds.Generation))
	}).Should(Succeed())
	g.Expect(updatesOf(writes, depPath)).To(BeEmpty())
}
