package memcached_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/podmonitor"
	"github.com/multi-operator/multi-operator/test/framework/promoperator"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// warnings are the Warning events about name.
func warnings(g Gomega, c client.Reader, ns, name string) []string {
	var out []string
	for _, e := range testenv.Events(g, c, ns, name) {
		if strings.HasPrefix(e, "Warning ") {
			out = append(out, e)
		}
	}
	return out
}

// The PodMonitor, under the controller's generated role: without the
// Prometheus Operator's CRD a Memcached becomes Ready with no error and no
// Warning; once the CRD is installed (no restart) its PodMonitor appears,
// follows spec changes, and goes when disabled, and when the exporter is.
func TestPodMonitorFollowsTheKindAndTheSpec(t *testing.T) {
	env := testenv.Get(t)
	cfg := generatedRoleConfig(t)
	g, c, ns := testenv.StartController(t, descriptorWith(func(r *memcached.Reconciler) {
		memcached.SetPodMonitorRefresh(r, 200*time.Millisecond)
	}), options, testenv.ManagerOptions{Config: cfg})
	ctx := context.Background()
	m := newMemcached(ns, "watched")
	g.Expect(c.Create(ctx, m)).To(Succeed())
	children(g, c, m)
	testenv.SetDeploymentStatus(g, env.Client, client.ObjectKey{Namespace: ns, Name: m.Name}, 1)
	expectCondition(g, c, ns, m.Name, conditions.Ready, metav1.ConditionTrue, cachev1alpha1.ReasonReady)
	g.Consistently(func(g Gomega) []string { return warnings(g, c, ns, m.Name) }, 2*time.Second).Should(BeEmpty(), "no PodMonitor kind is not a problem")

	promoperator.InstallPodMonitorCRD(t, env.Config)
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(podmonitor.GVK)
	get := func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Name}, pm)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		get(g)
		g.Expect(metav1.IsControlledBy(pm, m)).To(BeTrue())
		sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
		dep := &appsv1.Deployment{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(m), dep)).To(Succeed())
		g.Expect(sel).To(Equal(dep.Spec.Selector.MatchLabels))
	}, 20*time.Second).Should(Succeed(), "the PodMonitor appears without a restart")
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, m.Name) }).Should(ContainElement(HavePrefix("Normal " + cachev1alpha1.ReasonPodMonitorCreated)))

	setMonitoring(g, c, m, &shared.Monitoring{PodMonitor: &shared.PodMonitor{Interval: "15s", Labels: map[string]string{"release": "prom"}}})
	g.Eventually(func(g Gomega) {
		get(g)
		g.Expect(pm.GetLabels()).To(HaveKeyWithValue("release", "prom"))
		eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
		g.Expect(eps).To(ConsistOf(HaveKeyWithValue("interval", "15s")))
	}).Should(Succeed(), "the PodMonitor follows the spec")

	setMonitoring(g, c, m, &shared.Monitoring{PodMonitor: &shared.PodMonitor{Disabled: true}})
	expectGone(g, c, pm, ns, m.Name)
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, m.Name) }).Should(ContainElement(HavePrefix("Normal " + cachev1alpha1.ReasonPodMonitorDeleted)))

	setMonitoring(g, c, m, nil)
	g.Eventually(get).Should(Succeed(), "back when enabled again")
	setMonitoring(g, c, m, &shared.Monitoring{Exporter: &shared.Exporter{Disabled: true}})
	expectGone(g, c, pm, ns, m.Name)
	g.Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(m), dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers).To(HaveLen(1), "no exporter")
	}).Should(Succeed())
	g.Expect(warnings(g, c, ns, m.Name)).To(BeEmpty())
}

func newMemcached(ns, name string) *cachev1alpha1.Memcached {
	return &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: cachev1alpha1.MemcachedSpec{Size: 1}}
}

func setMonitoring(g *WithT, c client.Client, m *cachev1alpha1.Memcached, mon *shared.Monitoring) {
	updateSpec(g, c, m, func(spec *cachev1alpha1.MemcachedSpec) { spec.Monitoring = mon })
}

func expectGone(g *WithT, c client.Client, pm *unstructured.Unstructured, ns, name string) {
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pm))
	}).Should(BeTrue(), "the PodMonitor is deleted")
}

// spec.monitoring's bounds hold on a Memcached (the shared type's markers
// reach its CRD).
func TestAdmissionBoundsMonitoring(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	many := map[string]string{}
	for i := range 17 {
		many[string(rune('a'+i))] = "v"
	}
	huge := resource.MustParse("1")
	eightPlus := corev1.ResourceList{}
	for i := range 9 {
		eightPlus[corev1.ResourceName("example.com/r"+string(rune('a'+i)))] = huge
	}
	for _, tc := range []struct {
		name       string
		monitoring *shared.Monitoring
		message    string
	}{
		{"interval not a duration", &shared.Monitoring{PodMonitor: &shared.PodMonitor{Interval: "soon"}}, "spec.monitoring.podMonitor.interval"},
		{"too many labels", &shared.Monitoring{PodMonitor: &shared.PodMonitor{Labels: many}}, "spec.monitoring.podMonitor.labels"},
		{"image too long", &shared.Monitoring{Exporter: &shared.Exporter{Image: strings.Repeat("i", 513)}}, "spec.monitoring.exporter.image"},
		{"too many resources", &shared.Monitoring{Exporter: &shared.Exporter{Resources: &corev1.ResourceRequirements{Limits: eightPlus}}}, "at most 8 resources"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := newMemcached(ns, "bounds")
			m.Spec.Monitoring = tc.monitoring
			err := env.Client.Create(context.Background(), m)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.message))
		})
	}
	g := NewWithT(t)
	m := newMemcached(ns, "bounded")
	m.Spec.Monitoring = &shared.Monitoring{PodMonitor: &shared.PodMonitor{Interval: "1m30s", Labels: map[string]string{"release": "prom"}}}
	g.Expect(env.Client.Create(context.Background(), m)).To(Succeed())
}
