package podmonitor_test

import (
	"context"
	"os"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/pkg/podmonitor"
	"github.com/multi-operator/multi-operator/test/framework/promoperator"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

func TestWanted(t *testing.T) {
	for _, tc := range []struct {
		name               string
		m                  *shared.Monitoring
		exporter, wantsPod bool
	}{
		{"absent", nil, true, true},
		{"empty", &shared.Monitoring{}, true, true},
		{"exporter disabled", &shared.Monitoring{Exporter: &shared.Exporter{Disabled: true}}, false, false},
		{"PodMonitor disabled", &shared.Monitoring{PodMonitor: &shared.PodMonitor{Disabled: true}}, true, false},
		{"both set, enabled", &shared.Monitoring{Exporter: &shared.Exporter{Image: "x"}, PodMonitor: &shared.PodMonitor{Interval: "1m"}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(podmonitor.ExporterEnabled(tc.m)).To(Equal(tc.exporter))
			g.Expect(podmonitor.Wanted(tc.m)).To(Equal(tc.wantsPod))
		})
	}
}

// The series labels are the names Prometheus gives TargetLabels: each
// character other than a letter, a digit or an underscore becomes an
// underscore.
func TestSeriesLabelsNameTheTargetLabels(t *testing.T) {
	g := NewWithT(t)
	sanitize := regexp.MustCompile(`[^a-zA-Z0-9_]`)
	var got []string
	for _, l := range podmonitor.TargetLabels {
		got = append(got, sanitize.ReplaceAllString(l, "_"))
	}
	g.Expect(got).To(Equal([]string{podmonitor.KindSeriesLabel, podmonitor.NameSeriesLabel}))
}

func TestDesired(t *testing.T) {
	for _, tc := range []struct {
		name         string
		spec         *shared.PodMonitor
		wantLabels   map[string]string
		wantEndpoint map[string]any
	}{
		{"no spec", nil, map[string]string{"own": "1"}, map[string]any{"port": "metrics", "path": "/metrics"}},
		{"interval and labels", &shared.PodMonitor{Interval: "30s", Labels: map[string]string{"release": "p"}},
			map[string]string{"own": "1", "release": "p"}, map[string]any{"port": "metrics", "path": "/metrics", "interval": "30s"}},
		{"a label of the operator's is kept", &shared.PodMonitor{Labels: map[string]string{"own": "2"}},
			map[string]string{"own": "1"}, map[string]any{"port": "metrics", "path": "/metrics"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			target := podmonitor.Target{Name: "n", Namespace: "ns", Labels: map[string]string{"own": "1"}, Selector: map[string]string{"app": "a"}, Spec: tc.spec}
			u := podmonitor.Desired(target)
			g.Expect(u.GetAPIVersion()).To(Equal("monitoring.coreos.com/v1"))
			g.Expect(u.GetKind()).To(Equal("PodMonitor"))
			g.Expect(u.GetName()).To(Equal("n"))
			g.Expect(u.GetNamespace()).To(Equal("ns"))
			g.Expect(u.GetLabels()).To(Equal(tc.wantLabels))
			g.Expect(target.Labels).To(Equal(map[string]string{"own": "1"}), "the target's labels are not changed")
			sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
			g.Expect(sel).To(Equal(map[string]string{"app": "a"}))
			ns, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "namespaceSelector", "matchNames")
			g.Expect(ns).To(Equal([]string{"ns"}))
			eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "podMetricsEndpoints")
			g.Expect(eps).To(Equal([]any{tc.wantEndpoint}))
			targetLabels, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "podTargetLabels")
			g.Expect(targetLabels).To(Equal([]string{"app.kubernetes.io/name", "app.kubernetes.io/instance"}),
				"every series carries the kind and the custom resource's name")
			g.Expect(u.DeepCopy().Object).To(Equal(u.Object), "deep-copyable, as the client needs")
		})
	}
}

// Served answers false without an error or a change callback while the
// kind is absent, turns true once the CRD is installed without a restart,
// calling OnChange once, and false again when it goes.
func TestServedFollowsTheCRD(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	served, err := podmonitor.ServedBy(dc)
	g.Expect(err).NotTo(HaveOccurred(), "an absent kind is an answer")
	g.Expect(served).To(BeFalse())

	var changes atomic.Int32
	var last atomic.Bool
	s := &podmonitor.Served{Discovery: dc, Refresh: 100 * time.Millisecond, OnChange: func(_ context.Context, served bool) {
		changes.Add(1)
		last.Store(served)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	g.Consistently(s.Served, time.Second).Should(BeFalse())
	g.Expect(changes.Load()).To(BeZero(), "no callback while the kind stays absent")

	crdGone := make(chan struct{})
	t.Run("installed", func(t *testing.T) {
		promoperator.InstallPodMonitorCRD(t, env.Config)
		NewWithT(t).Eventually(s.Served, 10*time.Second).Should(BeTrue())
		NewWithT(t).Eventually(changes.Load).Should(Equal(int32(1)))
		NewWithT(t).Expect(last.Load()).To(BeTrue())
		close(crdGone) // the subtest's cleanup removes the CRD
	})
	<-crdGone
	g.Eventually(s.Served, 30*time.Second).Should(BeFalse())
	g.Eventually(changes.Load).Should(Equal(int32(2)))
	cancel()
	g.Eventually(done).Should(Receive(BeNil()))
}

// Delete removes only a PodMonitor the owner controls.
func TestDelete(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	promoperator.InstallPodMonitorCRD(t, env.Config)
	ctx := context.Background()
	c := env.Client
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}
	g.Expect(c.Create(ctx, other)).To(Succeed())

	deleted, err := podmonitor.Delete(ctx, c, owner, ns, "mine")
	g.Expect(err).NotTo(HaveOccurred(), "absent is not an error")
	g.Expect(deleted).To(BeFalse())

	create := func(name string, by client.Object) {
		pm := podmonitor.Desired(podmonitor.Target{Name: name, Namespace: ns, Selector: map[string]string{"a": "b"}})
		pm.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: by.GetName(), UID: by.GetUID(), Controller: ptr.To(true)}})
		g.Expect(c.Create(ctx, pm)).To(Succeed())
	}
	create("mine", owner)
	create("theirs", other)
	deleted, err = podmonitor.Delete(ctx, c, owner, ns, "theirs")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deleted).To(BeFalse(), "another owner's PodMonitor stays")
	deleted, err = podmonitor.Delete(ctx, c, owner, ns, "mine")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deleted).To(BeTrue())
	for name, gone := range map[string]bool{"mine": true, "theirs": false} {
		pm := &unstructured.Unstructured{}
		pm.SetGroupVersionKind(podmonitor.GVK)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pm)
		g.Expect(apierrors.IsNotFound(err)).To(Equal(gone), name)
	}
}
