package tdset_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/test/samples"
	"github.com/multi-operator/multi-operator/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, v1.AddToScheme)) }

// office is a Tuesday at 10:00 UTC: window 9-17 (5 replicas) of the
// original's schedule applies until 17:00, then window 17-19 (3).
var office = time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)

var bg = context.Background()

// start runs the TDSet controller on clk and returns a client and a fresh namespace.
func start(t *testing.T, clk clock.PassiveClock) (client.Client, string) {
	t.Helper()
	env := testenv.Get(t)
	env.StartManager(t, testenv.ManagerOptions{Controllers: []manager.Descriptor{tdset.Descriptor()}}, func(mgr ctrl.Manager) error {
		return tdset.NewReconciler(mgr, clk).SetupWithManager(mgr)
	})
	return env.Client, env.Namespace(t)
}

// originalWindows is the original's schedule.
func originalWindows() []v1.SchedulingConfig {
	return []v1.SchedulingConfig{
		{StartTime: 9, EndTime: 17, Replica: 5},
		{StartTime: 17, EndTime: 19, Replica: 3},
		{StartTime: 19, EndTime: 0, Replica: 2},
		{StartTime: 1, EndTime: 7, Replica: 2},
		{StartTime: 7, EndTime: 9, Replica: 3},
	}
}

func newTDSet(ns, name string, mutate ...func(*v1.TDSet)) *v1.TDSet {
	tds := &v1.TDSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.TDSetSpec{
			Container:        v1.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
			SchedulingConfig: originalWindows(),
			DefaultReplica:   3,
		},
	}
	for _, m := range mutate {
		m(tds)
	}
	return tds
}

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

func deployment(g Gomega, c client.Client, ns, name string) *appsv1.Deployment {
	dep := &appsv1.Deployment{}
	g.Expect(c.Get(bg, key(ns, name), dep)).To(Succeed())
	return dep
}

func replicasOf(g Gomega, c client.Client, ns, name string) int32 {
	return ptr.Deref(deployment(g, c, ns, name).Spec.Replicas, -1)
}

func fetch(g Gomega, c client.Client, tds *v1.TDSet) *v1.TDSet {
	g.Expect(c.Get(bg, client.ObjectKeyFromObject(tds), tds)).To(Succeed())
	return tds
}

// makeAvailable writes the status the Deployment controller would write
// once every replica is available; envtest runs no controller-manager.
func makeAvailable(g Gomega, c client.Client, ns, name string) {
	dep := deployment(g, c, ns, name)
	n := *dep.Spec.Replicas
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	g.Expect(c.Status().Update(bg, dep)).To(Succeed())
}

// patch applies a JSON merge patch, which needs no resourceVersion and so
// never conflicts with the controller's writes.
func patch(g Gomega, c client.Client, obj client.Object, p string) {
	g.Expect(c.Patch(bg, obj, client.RawPatch(types.MergePatchType, []byte(p)))).To(Succeed())
}

// eventsOf returns "Type Reason: note" of the events about the TDSet name.
func eventsOf(g Gomega, c client.Client, ns, name string) []string {
	list := &eventsv1.EventList{}
	g.Expect(c.List(bg, list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "TDSet" && e.Regarding.Name == name {
			out = append(out, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return out
}

func TestOriginalSampleAppliesUnchanged(t *testing.T) {
	g := NewWithT(t)
	c, _ := start(t, clocktesting.NewFakeClock(office))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "temp"}}
	if err := c.Create(bg, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tds := &v1.TDSet{}
	samples.Load(t, "tdset.yaml", tds)
	g.Expect(tds.Namespace).To(Equal("temp"), "the sample is applied as it is")
	g.Expect(c.Create(bg, tds)).To(Succeed())
	t.Cleanup(func() {
		_ = c.Delete(bg, tds)
		// envtest runs no garbage collector.
		_ = c.Delete(bg, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "temp", Name: tds.Name}})
	})
	g.Expect(fetch(g, c, tds).Spec.TimeZone).To(Equal("UTC"), "timeZone defaults to UTC")

	var dep *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		dep = deployment(g, c, "temp", "tdset-hello-world")
		g.Expect(*dep.Spec.Replicas).To(Equal(int32(5)), "window 9-17 at 10:00 UTC")
	}).Should(Succeed())
	g.Expect(metav1.IsControlledBy(dep, tds)).To(BeTrue())
	g.Expect(dep.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
	ctr := dep.Spec.Template.Spec.Containers[0]
	g.Expect(ctr.Image).To(Equal("crccheck/hello-world"))
	g.Expect(ctr.Ports).To(HaveLen(1))
	g.Expect(ctr.Ports[0].Name).To(Equal("http"))
	g.Expect(ctr.Ports[0].ContainerPort).To(Equal(int32(8000)))
	g.Expect(*dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(ctr.Resources.Limits).To(HaveKey(corev1.ResourceMemory))
	g.Expect(apierrors.IsNotFound(c.Get(bg, key("temp", tds.Name), &corev1.Service{}))).To(BeTrue(), "no spec.service, no Service")

	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		st := tds.Status
		g.Expect(st.ObservedGeneration).To(Equal(tds.Generation))
		g.Expect(st.DesiredReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(st.ActiveWindow).To(HaveValue(Equal(int32(0))))
		g.Expect(st.NextTransitionTime).NotTo(BeNil())
		g.Expect(st.NextTransitionTime.Time.Equal(time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC))).To(BeTrue(), "next %s", st.NextTransitionTime)
		g.Expect(st.NextReplicas).To(HaveValue(Equal(int32(3))))
		g.Expect(st.AvailableReplicas).To(HaveValue(Equal(int32(0))))
		g.Expect(conditions.Get(tds, v1.ConditionScheduled).Reason).To(Equal(v1.ReasonWindowActive))
		g.Expect(conditions.Get(tds, conditions.Ready).Reason).To(Equal(v1.ReasonProgressing))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return eventsOf(g, c, "temp", tds.Name) }).Should(
		ContainElement("Normal Created: Created deployment tdset-hello-world with 5 replicas (window 9-17)"))

	makeAvailable(g, c, "temp", tds.Name)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.AvailableReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue())
	}).Should(Succeed())
}

func TestTimeZoneSampleCreatesServiceAndFollowsBerlin(t *testing.T) {
	g := NewWithT(t)
	// 08:30 UTC on 1 July is 10:30 in Berlin (CEST, +2): window 9-17.
	c, ns := start(t, clocktesting.NewFakeClock(time.Date(2026, 7, 1, 8, 30, 0, 0, time.UTC)))
	tds := &v1.TDSet{}
	samples.Load(t, "tdset-timezone.yaml", tds)
	tds.Namespace = ns
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, tds.Name)).To(Equal(int32(5)))
		svc := &corev1.Service{}
		g.Expect(c.Get(bg, key(ns, tds.Name), svc)).To(Succeed())
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(80)))
		fetch(g, c, tds)
		g.Expect(tds.Status.NextTransitionTime).NotTo(BeNil())
		g.Expect(tds.Status.NextTransitionTime.Time.Equal(time.Date(2026, 7, 1, 15, 0, 0, 0, time.UTC))).To(BeTrue(), "17:00 CEST, got %s", tds.Status.NextTransitionTime)
	}).Should(Succeed())
}

func TestDriftIsCorrectedWithinASecond(t *testing.T) {
	g := NewWithT(t)
	c, ns := start(t, clocktesting.NewFakeClock(office))
	tds := newTDSet(ns, "drift")
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "drift")).To(Equal(int32(5))) }).Should(Succeed())

	t.Run("replicas changed by hand", func(t *testing.T) {
		g := NewWithT(t)
		patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}, `{"spec":{"replicas":9}}`)
		g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "drift")).To(Equal(int32(5))) }).WithTimeout(time.Second).Should(Succeed())
		g.Eventually(func(g Gomega) []string { return eventsOf(g, c, ns, "drift") }).Should(
			ContainElement("Normal Scaled: Scaled deployment drift from 9 to 5 (window 9-17)"))
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
		}).WithTimeout(time.Second).Should(Succeed())
	})
	t.Run("the Deployment deleted", func(t *testing.T) {
		g := NewWithT(t)
		old := deployment(g, c, ns, "drift")
		g.Expect(c.Delete(bg, old)).To(Succeed())
		g.Eventually(func(g Gomega) {
			dep := deployment(g, c, ns, "drift")
			g.Expect(dep.UID).NotTo(Equal(old.UID))
			g.Expect(*dep.Spec.Replicas).To(Equal(int32(5)))
		}).WithTimeout(time.Second).Should(Succeed())
	})
}

func TestSpecChangesRollOut(t *testing.T) {
	g := NewWithT(t)
	c, ns := start(t, clocktesting.NewFakeClock(office))
	tds := newTDSet(ns, "rollout")
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "rollout")).To(Equal(int32(5))) }).Should(Succeed())

	patch(g, c, tds, `{"spec":{"container":{"image":"registry.example/app:2","port":9090}}}`)
	g.Eventually(func(g Gomega) {
		ctr := deployment(g, c, ns, "rollout").Spec.Template.Spec.Containers[0]
		g.Expect(ctr.Image).To(Equal("registry.example/app:2"))
		g.Expect(ctr.Ports[0].ContainerPort).To(Equal(int32(9090)))
		g.Expect(ctr.Ports[0].Name).To(Equal("http"))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return eventsOf(g, c, ns, "rollout") }).Should(
		ContainElement(HavePrefix("Normal Updated: Updated the pod template of deployment rollout")))
}

func TestServiceIsAddedAndRemoved(t *testing.T) {
	g := NewWithT(t)
	c, ns := start(t, clocktesting.NewFakeClock(office))
	tds := newTDSet(ns, "web")
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5))) }).Should(Succeed())
	g.Expect(apierrors.IsNotFound(c.Get(bg, key(ns, "web"), &corev1.Service{}))).To(BeTrue())

	patch(g, c, tds, `{"spec":{"service":{"port":8080}}}`)
	svc := &corev1.Service{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(bg, key(ns, "web"), svc)).To(Succeed())
		g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		g.Expect(svc.Spec.Ports).To(HaveLen(1))
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(8080)))
		g.Expect(svc.Spec.Ports[0].TargetPort.StrVal).To(Equal("http"))
		g.Expect(svc.Spec.Selector).To(Equal(deployment(g, c, ns, "web").Spec.Selector.MatchLabels))
	}).Should(Succeed())
	g.Expect(metav1.IsControlledBy(svc, fetch(g, c, tds))).To(BeTrue())

	patch(g, c, tds, `{"spec":{"service":{"port":9090}}}`)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(bg, key(ns, "web"), svc)).To(Succeed())
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(9090)))
	}).Should(Succeed())

	patch(g, c, tds, `{"spec":{"service":null}}`)
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, key(ns, "web"), &corev1.Service{})) }).Should(BeTrue())
	g.Eventually(func(g Gomega) []string { return eventsOf(g, c, ns, "web") }).Should(ContainElements(
		"Normal Created: Created service web on port 8080",
		"Normal Updated: Updated service web to port 9090",
		"Normal Deleted: Deleted service web: spec.service.port is not set"))
}

func TestForeignServiceIsNotDeleted(t *testing.T) {
	g := NewWithT(t)
	c, ns := start(t, clocktesting.NewFakeClock(office))
	// Labelled like ours, so the cache sees it, but controlled by no TDSet.
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "multi-operator"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	g.Expect(c.Create(bg, foreign)).To(Succeed())
	g.Expect(c.Create(bg, newTDSet(ns, "shared"))).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "shared")).To(Equal(int32(5))) }).Should(Succeed())
	g.Consistently(func(g Gomega) {
		svc := &corev1.Service{}
		g.Expect(c.Get(bg, key(ns, "shared"), svc)).To(Succeed())
		g.Expect(svc.UID).To(Equal(foreign.UID))
	}, 2*time.Second).Should(Succeed())
}

func TestAdmissionRejectsBadSchedules(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	windows := func(ws ...[3]int32) func(*v1.TDSet) {
		return func(t *v1.TDSet) {
			t.Spec.SchedulingConfig = nil
			for _, w := range ws {
				t.Spec.SchedulingConfig = append(t.Spec.SchedulingConfig, v1.SchedulingConfig{StartTime: w[0], EndTime: w[1], Replica: w[2]})
			}
		}
	}
	hourly := func(n int) func(*v1.TDSet) {
		return func(t *v1.TDSet) {
			t.Spec.SchedulingConfig = nil
			for h := range n {
				t.Spec.SchedulingConfig = append(t.Spec.SchedulingConfig, v1.SchedulingConfig{StartTime: int32(h % 24), EndTime: int32((h + 1) % 24), Replica: 1})
			}
		}
	}
	for _, tc := range []struct {
		name    string
		objName string // object name, when it matters
		mutate  func(*v1.TDSet)
		message string // empty: accepted
	}{
		{name: "the original's schedule", mutate: func(*v1.TDSet) {}},
		{name: "adjacent windows", mutate: windows([3]int32{9, 17, 5}, [3]int32{17, 9, 1})},
		{name: "23-0 next to 0-1", mutate: windows([3]int32{23, 0, 5}, [3]int32{0, 1, 1})},
		{name: "24 hourly windows", mutate: hourly(24)},
		{name: "empty window", mutate: windows([3]int32{9, 9, 5}),
			message: "window 9-9 is empty: startTime and endTime must differ"},
		{name: "overlap", mutate: windows([3]int32{9, 17, 5}, [3]int32{10, 12, 1}),
			message: "windows 9-17 and 10-12 overlap"},
		{name: "overlap named in list order", mutate: windows([3]int32{1, 7, 2}, [3]int32{9, 17, 5}, [3]int32{16, 18, 1}),
			message: "windows 9-17 and 16-18 overlap"},
		{name: "overlap across midnight", mutate: windows([3]int32{22, 2, 5}, [3]int32{1, 3, 1}),
			message: "windows 22-2 and 1-3 overlap"},
		{name: "19-0 overlaps 23-1", mutate: windows([3]int32{19, 0, 5}, [3]int32{23, 1, 1}),
			message: "windows 19-0 and 23-1 overlap"},
		{name: "duplicate windows", mutate: windows([3]int32{1, 2, 5}, [3]int32{1, 2, 5}),
			message: "windows 1-2 and 1-2 overlap"},
		{name: "hour 24", mutate: windows([3]int32{24, 2, 5}),
			message: "spec.schedulingConfig[0].startTime: Invalid value: 24: spec.schedulingConfig[0].startTime in body should be less than or equal to 23"},
		{name: "negative replica", mutate: windows([3]int32{1, 2, -1}),
			message: "spec.schedulingConfig[0].replica in body should be greater than or equal to 0"},
		{name: "25 windows", mutate: hourly(25),
			message: "spec.schedulingConfig: Too many: 25: must have at most 24 items"},
		{name: "no windows", mutate: windows(),
			message: "spec.schedulingConfig"},
		{name: "defaultReplica 0", mutate: func(t *v1.TDSet) { t.Spec.DefaultReplica = 0 },
			message: "spec.defaultReplica in body should be greater than or equal to 1"},
		{name: "port 65536", mutate: func(t *v1.TDSet) { t.Spec.Container.Port = 65536 },
			message: "spec.container.port in body should be less than or equal to 65535"},
		{name: "no image", mutate: func(t *v1.TDSet) { t.Spec.Container.Image = "" },
			message: "spec.container.image"},
		{name: "intervalMint over a day", mutate: func(t *v1.TDSet) { t.Spec.IntervalMint = 1441 },
			message: "spec.intervalMint in body should be less than or equal to 1440"},
		{name: "service on a name that is no DNS label", objName: "9to5", mutate: func(t *v1.TDSet) { t.Spec.Service = &v1.ServiceSpec{Port: 80} },
			message: "the name must be a DNS label"},
		{name: "no service on a name that is no DNS label", objName: "9to5.ok", mutate: func(*v1.TDSet) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			name := tc.objName
			if name == "" {
				name = strings.ReplaceAll(strings.ReplaceAll(tc.name, " ", "-"), "'", "")
			}
			tds := newTDSet(ns, name, tc.mutate)
			err := env.Client.Create(bg, tds)
			if tc.message == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.message))
		})
	}
}

func TestBoundaryCrossingWithFakeClock(t *testing.T) {
	env := testenv.Get(t)
	var rec events.Recorder
	// The manager only provides the event recorder; the test drives every reconcile.
	env.StartManager(t, testenv.ManagerOptions{}, func(mgr ctrl.Manager) error {
		rec = events.NewRecorder(mgr.GetEventRecorder("tdset-test"))
		return nil
	})
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		windows  []v1.SchedulingConfig
		boundary time.Time // in Berlin
		before   time.Duration
		from, to int32
		event    string
		next     time.Time
	}{
		{
			name:     "window 9-17 ends in Berlin",
			windows:  originalWindows(),
			boundary: time.Date(2026, 3, 10, 17, 0, 0, 0, berlin),
			before:   800 * time.Millisecond,
			from:     5, to: 3,
			event: "Scaled deployment tdset-hello-world from 5 to 3 (window 17-19)",
			next:  time.Date(2026, 3, 10, 19, 0, 0, 0, berlin),
		},
		{
			// 02:00 CET jumps to 03:00 CEST: window 1-3 ends at the jump.
			name:     "spring forward in Berlin",
			windows:  []v1.SchedulingConfig{{StartTime: 1, EndTime: 3, Replica: 4}},
			boundary: time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC),
			before:   30 * time.Minute,
			from:     4, to: 2,
			event: "Scaled deployment tdset-hello-world from 4 to 2 (defaultReplica)",
			next:  time.Date(2026, 3, 30, 1, 0, 0, 0, berlin),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c, ns := env.Client, env.Namespace(t)
			clk := clocktesting.NewFakeClock(tc.boundary.Add(-tc.before))
			r := tdset.New(c, rec, clk)
			tds := newTDSet(ns, "tdset-hello-world", func(t *v1.TDSet) {
				t.Spec.TimeZone = "Europe/Berlin"
				t.Spec.SchedulingConfig = tc.windows
				t.Spec.DefaultReplica = 2
			})
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
			g.Expect(tds.Status.DesiredReplicas).To(HaveValue(Equal(tc.to)))
			g.Expect(tds.Status.NextTransitionTime.Time.Equal(tc.next)).To(BeTrue(), "next %s", tds.Status.NextTransitionTime)
			g.Eventually(func(g Gomega) []string { return eventsOf(g, c, ns, tds.Name) }).Should(ContainElement("Normal Scaled: " + tc.event))
		})
	}
}

// offsetClock runs at the speed of real time from a chosen instant, so the
// manager's real requeue timer and the controller's idea of the time agree.
type offsetClock struct{ offset atomic.Int64 }

func (o *offsetClock) Now() time.Time                  { return time.Now().Add(time.Duration(o.offset.Load())) }
func (o *offsetClock) Since(t time.Time) time.Duration { return o.Now().Sub(t) }

// set makes the clock read to now and returns the real time it did so.
func (o *offsetClock) set(to time.Time) time.Time {
	now := time.Now()
	o.offset.Store(int64(to.Sub(now)))
	return now
}

// TestBoundaryCrossingThroughTheManager lets controller-runtime's own requeue
// timer carry the controller across a boundary two seconds ahead: the new
// count must land within a second after it, and not before it.
func TestBoundaryCrossingThroughTheManager(t *testing.T) {
	g := NewWithT(t)
	clk := &offsetClock{}
	clk.set(office)
	c, ns := start(t, clk)
	tds := newTDSet(ns, "timer")
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "timer")).To(Equal(int32(5))) }).Should(Succeed())

	// Jump to two seconds before 17:00 and wake the controller by touching
	// its Deployment; its requeue from 10:00 is hours away.
	boundary := time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC)
	const lead = 2 * time.Second
	realBoundary := clk.set(boundary.Add(-lead)).Add(lead)
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "timer"}}, `{"metadata":{"annotations":{"test/wake":"1"}}}`)

	var landed time.Time
	g.Eventually(func(g Gomega) {
		n := replicasOf(g, c, ns, "timer")
		if n == 5 {
			g.Expect(time.Now()).To(BeTemporally("<", realBoundary.Add(time.Second)), "still 5 a second after the boundary")
		}
		g.Expect(n).To(Equal(int32(3)))
		landed = time.Now()
	}).WithTimeout(lead + 5*time.Second).WithPolling(10 * time.Millisecond).Should(Succeed())
	g.Expect(landed).To(BeTemporally(">=", realBoundary), "scaled before the boundary")
	g.Expect(landed).To(BeTemporally("<", realBoundary.Add(time.Second)), "landed %s after the boundary", landed.Sub(realBoundary))
}

func TestSuspendKeepsTheReplicaCount(t *testing.T) {
	g := NewWithT(t)
	clk := clocktesting.NewFakeClock(office)
	c, ns := start(t, clk)
	tds := newTDSet(ns, "paused")
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(5))) }).Should(Succeed())

	// Past 17:00 the schedule wants 3, but the TDSet is suspended.
	clk.SetTime(time.Date(2026, 3, 10, 17, 30, 0, 0, time.UTC))
	patch(g, c, tds, `{"spec":{"suspend":true}}`)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
		g.Expect(conditions.IsTrue(tds, v1.ConditionSuspended)).To(BeTrue())
		g.Expect(conditions.Get(tds, v1.ConditionScheduled).Reason).To(Equal(v1.ReasonSuspended))
		g.Expect(tds.Status.DesiredReplicas).To(HaveValue(Equal(int32(3))), "the status still says what the schedule wants")
	}).Should(Succeed())
	// Scaled by hand while suspended: that count is kept too.
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "paused"}}, `{"spec":{"replicas":7}}`)
	g.Consistently(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(7))) }, 2*time.Second).Should(Succeed())

	patch(g, c, tds, `{"spec":{"suspend":false}}`)
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(3))) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(conditions.Get(tds, v1.ConditionSuspended).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(conditions.IsTrue(tds, v1.ConditionScheduled)).To(BeTrue())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return eventsOf(g, c, ns, "paused") }).Should(
		ContainElement("Normal Scaled: Scaled deployment paused from 7 to 3 (window 17-19)"))
}

func TestInvalidTimeZoneLeavesTheDeploymentAlone(t *testing.T) {
	c, ns := start(t, clocktesting.NewFakeClock(office))
	expectInvalid := func(g Gomega, tds *v1.TDSet, zone string) {
		g.Eventually(func(g Gomega) {
			fetch(g, c, tds)
			g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
			ready := conditions.Get(tds, conditions.Ready)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(v1.ReasonInvalidTimeZone))
			g.Expect(ready.Message).To(ContainSubstring(zone))
			g.Expect(tds.Status.DesiredReplicas).To(BeNil())
			g.Expect(tds.Status.NextTransitionTime).To(BeNil())
		}).Should(Succeed())
		g.Eventually(func(g Gomega) []string { return eventsOf(g, c, ns, tds.Name) }).Should(
			ContainElement(And(HavePrefix("Warning InvalidTimeZone: "), ContainSubstring(zone))))
	}

	t.Run("never created", func(t *testing.T) {
		g := NewWithT(t)
		tds := newTDSet(ns, "mars", func(t *v1.TDSet) { t.Spec.TimeZone = "Mars/Olympus_Mons" })
		g.Expect(c.Create(bg, tds)).To(Succeed())
		expectInvalid(g, tds, "Mars/Olympus_Mons")
		g.Consistently(func() bool {
			return apierrors.IsNotFound(c.Get(bg, key(ns, "mars"), &appsv1.Deployment{}))
		}, 2*time.Second).Should(BeTrue())

		patch(g, c, tds, `{"spec":{"timeZone":"Asia/Kathmandu"}}`)
		// 10:00 UTC is 15:45 in Kathmandu: window 9-17.
		g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "mars")).To(Equal(int32(5))) }).Should(Succeed())
	})
	t.Run("never updated", func(t *testing.T) {
		g := NewWithT(t)
		tds := newTDSet(ns, "local")
		g.Expect(c.Create(bg, tds)).To(Succeed())
		g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "local")).To(Equal(int32(5))) }).Should(Succeed())
		before := deployment(g, c, ns, "local")

		// The controller's own zone is refused, and the image change that
		// comes with it is not rolled out while the zone is invalid.
		patch(g, c, tds, `{"spec":{"timeZone":"Local","container":{"image":"registry.example/new"}}}`)
		expectInvalid(g, tds, "Local")
		g.Consistently(func(g Gomega) {
			dep := deployment(g, c, ns, "local")
			g.Expect(dep.ResourceVersion).To(Equal(before.ResourceVersion))
		}, 2*time.Second).Should(Succeed())
	})
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	counted, writes := testenv.CountWrites(env.Config)
	env.StartManager(t, testenv.ManagerOptions{Config: counted, Controllers: []manager.Descriptor{tdset.Descriptor()}}, func(mgr ctrl.Manager) error {
		return tdset.NewReconciler(mgr, clocktesting.NewFakeClock(office)).SetupWithManager(mgr)
	})
	c, ns := env.Client, env.Namespace(t)
	tds := newTDSet(ns, "steady", func(t *v1.TDSet) {
		t.Spec.Service = &v1.ServiceSpec{Port: 80}
		t.Spec.TimeZone = "America/St_Johns"
		t.Spec.IntervalMint = 60
	})
	g.Expect(c.Create(bg, tds)).To(Succeed())
	// 10:00 UTC is 07:30 in St. John's, on summer time (-2:30) since 8 March:
	// window 7-9, 3 replicas.
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "steady")).To(Equal(int32(3)))
		g.Expect(c.Get(bg, key(ns, "steady"), &corev1.Service{})).To(Succeed())
	}).Should(Succeed())
	makeAvailable(g, c, ns, "steady")
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue())
		g.Expect(tds.Status.AvailableReplicas).To(HaveValue(Equal(int32(3))))
		g.Expect(tds.Status.ActiveWindow).To(HaveValue(Equal(int32(4))))
	}).Should(Succeed())

	// A reconcile that read the TDSet from the cache before the cache saw
	// the previous status write repeats that write once; wait until a whole
	// second passes without any write.
	g.Eventually(func() []string {
		writes.Reset()
		time.Sleep(time.Second)
		return writes.Writes()
	}).Should(BeEmpty())

	writes.Reset()
	// Wake the controller through both children without changing anything
	// it owns. A label, since a changed annotation bumps a Deployment's
	// generation, which rightly makes it not Ready until observed.
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steady"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
	patch(g, c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steady"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
	dep := deployment(g, c, ns, "steady")
	dep.Status.Conditions = append(dep.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"})
	g.Expect(c.Status().Update(bg, dep)).To(Succeed())
	g.Consistently(func() []string { return writes.Writes() }, 3*time.Second).Should(BeEmpty())
}

// offsetClock must fit the Reconciler like the fake clock does.
var _ clock.PassiveClock = (*offsetClock)(nil)
