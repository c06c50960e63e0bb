package rediscluster_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/podmonitor"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/promoperator"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// quickPodMonitors is the controller asking often whether PodMonitors are
// served, so that a CRD installed mid-test is seen quickly.
func quickPodMonitors() reconciler.Descriptor {
	d := rediscluster.Descriptor()
	d.Setup = func(mgr ctrl.Manager, opts reconciler.Options) error {
		r, err := rediscluster.NewReconciler(mgr, opts)
		if err != nil {
			return err
		}
		rediscluster.SetPodMonitorRefresh(r, 200*time.Millisecond)
		return r.SetupWithManager(mgr)
	}
	return d
}

// The PodMonitor of a RedisCluster, under the controller's generated role:
// without the Prometheus Operator's CRD the cluster becomes Ready with no
// Warning about PodMonitors; once the CRD is installed (no restart) a PodMonitor appears
// that selects the cluster's pods and scrapes their "metrics" port, and it
// goes when spec.monitoring.podMonitor.disabled.
func TestPodMonitorKeptWhereServed(t *testing.T) {
	env := testenv.Get(t)
	cfg := testenv.GeneratedRoleConfig(t, "rediscluster")
	g, c, ns := testenv.StartController(t, quickPodMonitors(), options, testenv.ManagerOptions{Config: cfg})
	ctx := context.Background()
	rc := builders.RedisCluster(ns, "scraped").Size(1).Obj()
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 1)
	events := func(g Gomega) []string { return testenv.Events(g, c, ns, rc.Name) }
	// The nodes' start-up warns that they cannot be reached yet; nothing
	// may warn about PodMonitors.
	podMonitorWarning := ContainElement(And(HavePrefix("Warning "), ContainSubstring("PodMonitor")))
	g.Consistently(events, 2*time.Second).ShouldNot(podMonitorWarning, "no PodMonitor kind is not a problem")

	promoperator.InstallPodMonitorCRD(t, env.Config)
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(podmonitor.GVK)
	key := client.ObjectKey{Namespace: ns, Name: rc.Name}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, key, pm)).To(Succeed())
		g.Expect(metav1.IsControlledBy(pm, rc)).To(BeTrue())
		sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
		sts := &appsv1.StatefulSet{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
		g.Expect(sel).To(Equal(sts.Spec.Selector.MatchLabels))
		for k, v := range sel {
			g.Expect(sts.Spec.Template.Labels).To(HaveKeyWithValue(k, v), "it selects the cluster's pods")
		}
		eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
		g.Expect(eps).To(ConsistOf(HaveKeyWithValue("port", rediscluster.MetricsPortName)))
		targetLabels, _, _ := unstructured.NestedStringSlice(pm.Object, "spec", "podTargetLabels")
		g.Expect(targetLabels).To(ContainElement("app.kubernetes.io/instance"))
		for _, l := range targetLabels {
			g.Expect(sts.Spec.Template.Labels).To(HaveKey(l), "the series get the pods' %s", l)
		}
		g.Expect(sts.Spec.Template.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", rc.Name), "which names the cluster")
	}, 20*time.Second).Should(Succeed(), "the PodMonitor appears without a restart")
	g.Expect(rediscluster.MetricsPortName).To(Equal("metrics"))
	g.Eventually(events).Should(ContainElement(HavePrefix("Normal " + cachev1.ReasonPodMonitorCreated)))

	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		rc.Spec.Monitoring = &cachev1.RedisClusterMonitoring{Monitoring: shared.Monitoring{PodMonitor: &shared.PodMonitor{Disabled: true}}}
		g.Expect(c.Update(ctx, rc)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(ctx, key, pm)) }, 20*time.Second).Should(BeTrue(), "the PodMonitor is deleted")
	g.Eventually(events).Should(ContainElement(HavePrefix("Normal " + cachev1.ReasonPodMonitorDeleted)))
	g.Expect(events(g)).NotTo(podMonitorWarning)
}
