package tdset_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/builders"
	"github.com/multi-operator/multi-operator/test/samples"
	"github.com/multi-operator/multi-operator/test/testclock"
	"github.com/multi-operator/multi-operator/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, schedulev1.AddToScheme)) }

// office is a Tuesday at 10:00 UTC: window 9-17 (5 replicas) of the
// original's schedule applies until 17:00, then window 17-19 (3).
var office = time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)

var bg = context.Background()

func deployment(g Gomega, c client.Client, ns, name string) *appsv1.Deployment {
	dep := &appsv1.Deployment{}
	g.Expect(c.Get(bg, client.ObjectKey{Namespace: ns, Name: name}, dep)).To(Succeed())
	return dep
}

func replicasOf(g Gomega, c client.Client, ns, name string) int32 {
	return ptr.Deref(deployment(g, c, ns, name).Spec.Replicas, -1)
}

func fetch(g Gomega, c client.Client, tds *schedulev1.TDSet) *schedulev1.TDSet {
	g.Expect(c.Get(bg, client.ObjectKeyFromObject(tds), tds)).To(Succeed())
	return tds
}

// patch applies a JSON merge patch, which needs no resourceVersion and so
// never conflicts with the controller's writes.
func patch(g Gomega, c client.Client, obj client.Object, p string) {
	g.Expect(c.Patch(bg, obj, client.RawPatch(types.MergePatchType, []byte(p)))).To(Succeed())
}

func TestOriginalSampleAppliesUnchanged(t *testing.T) {
	g := NewWithT(t)
	_, c, _ := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "temp"}}
	if err := c.Create(bg, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tds := &schedulev1.TDSet{}
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
	g.Expect(apierrors.IsNotFound(c.Get(bg, client.ObjectKey{Namespace: "temp", Name: tds.Name}, &corev1.Service{}))).To(BeTrue(), "no spec.service, no Service")

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
		g.Expect(conditions.Get(tds, schedulev1.ConditionScheduled).Reason).To(Equal(schedulev1.ReasonWindowActive))
		g.Expect(conditions.Get(tds, conditions.Ready).Reason).To(Equal(schedulev1.ReasonProgressing))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, "temp", tds.Name) }).Should(
		ContainElement("Normal DeploymentCreated: Created deployment tdset-hello-world with 5 replicas (window 9-17)"))

	testenv.MakeDeploymentAvailable(g, c, client.ObjectKeyFromObject(tds))
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.AvailableReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue())
	}).Should(Succeed())
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
		fetch(g, c, tds)
		g.Expect(tds.Status.NextTransitionTime).NotTo(BeNil())
		g.Expect(tds.Status.NextTransitionTime.Time.Equal(time.Date(2026, 7, 1, 15, 0, 0, 0, time.UTC))).To(BeTrue(), "17:00 CEST, got %s", tds.Status.NextTransitionTime)
	}).Should(Succeed())
}

func TestDriftIsCorrectedWithinASecond(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "drift").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "drift")).To(Equal(int32(5))) }).Should(Succeed())

	t.Run("replicas changed by hand", func(t *testing.T) {
		g := NewWithT(t)
		patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}, `{"spec":{"replicas":9}}`)
		g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "drift")).To(Equal(int32(5))) }).WithTimeout(time.Second).Should(Succeed())
		g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "drift") }).Should(
			ContainElement("Normal DeploymentScaled: Scaled deployment drift from 9 to 5 (window 9-17)"))
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
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "rollout").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "rollout")).To(Equal(int32(5))) }).Should(Succeed())

	patch(g, c, tds, `{"spec":{"container":{"image":"registry.example/app:2","port":9090}}}`)
	g.Eventually(func(g Gomega) {
		ctr := deployment(g, c, ns, "rollout").Spec.Template.Spec.Containers[0]
		g.Expect(ctr.Image).To(Equal("registry.example/app:2"))
		g.Expect(ctr.Ports[0].ContainerPort).To(Equal(int32(9090)))
		g.Expect(ctr.Ports[0].Name).To(Equal("http"))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "rollout") }).Should(
		ContainElement(HavePrefix("Normal DeploymentUpdated: Updated the pod template of deployment rollout")))
}

func TestServiceIsAddedAndRemoved(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "web").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "web")).To(Equal(int32(5))) }).Should(Succeed())
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
		"Normal ServiceCreated: Created service web on port 8080",
		"Normal ServiceUpdated: Updated service web to port 9090",
		"Normal ServiceDeleted: Deleted service web: spec.service.port is not set"))
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

func TestAdmissionRejectsBadSchedules(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	windows := func(ws ...[3]int32) func(*schedulev1.TDSet) {
		return func(t *schedulev1.TDSet) {
			t.Spec.SchedulingConfig = nil
			for _, w := range ws {
				t.Spec.SchedulingConfig = append(t.Spec.SchedulingConfig, schedulev1.SchedulingConfig{StartTime: w[0], EndTime: w[1], Replica: w[2]})
			}
		}
	}
	hourly := func(n int) func(*schedulev1.TDSet) {
		return func(t *schedulev1.TDSet) {
			t.Spec.SchedulingConfig = nil
			for h := range n {
				t.Spec.SchedulingConfig = append(t.Spec.SchedulingConfig, schedulev1.SchedulingConfig{StartTime: int32(h % 24), EndTime: int32((h + 1) % 24), Replica: 1})
			}
		}
	}
	for _, tc := range []struct {
		name    string
		objName string // object name, when it matters
		mutate  func(*schedulev1.TDSet)
		message string // empty: accepted
	}{
		{name: "the original's schedule", mutate: func(*schedulev1.TDSet) {}},
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
		{name: "defaultReplica 0", mutate: func(t *schedulev1.TDSet) { t.Spec.DefaultReplica = 0 },
			message: "spec.defaultReplica in body should be greater than or equal to 1"},
		{name: "port 65536", mutate: func(t *schedulev1.TDSet) { t.Spec.Container.Port = 65536 },
			message: "spec.container.port in body should be less than or equal to 65535"},
		{name: "no image", mutate: func(t *schedulev1.TDSet) { t.Spec.Container.Image = "" },
			message: "spec.container.image"},
		{name: "intervalMint over a day", mutate: func(t *schedulev1.TDSet) { t.Spec.IntervalMint = 1441 },
			message: "spec.intervalMint in body should be less than or equal to 1440"},
		{name: "service on a name that is no DNS label", objName: "9to5", mutate: func(t *schedulev1.TDSet) { t.Spec.Service = &schedulev1.ServiceSpec{Port: 80} },
			message: "the name must be a DNS label"},
		{name: "no service on a name that is no DNS label", objName: "9to5.ok", mutate: func(*schedulev1.TDSet) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			name := tc.objName
			if name == "" {
				name = strings.ReplaceAll(strings.ReplaceAll(tc.name, " ", "-"), "'", "")
			}
			tds := builders.TDSet(ns, name).Obj()
			tc.mutate(tds)
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
		windows  []schedulev1.SchedulingConfig
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
			event: "Scaled deployment tdset-hello-world from 5 to 3 (window 17-19)",
			next:  time.Date(2026, 3, 10, 19, 0, 0, 0, berlin),
		},
		{
			// 02:00 CET jumps to 03:00 CEST: window 1-3 ends at the jump.
			name:     "spring forward in Berlin",
			windows:  []schedulev1.SchedulingConfig{{StartTime: 1, EndTime: 3, Replica: 4}},
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
			r := tdset.NewWithClient(c, rec, reconciler.Options{Clock: clk})
			tds := builders.TDSet(ns, "tdset-hello-world").TimeZone("Europe/Berlin").Windows(tc.windows...).DefaultReplica(2).Obj()
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
			g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, tds.Name) }).Should(ContainElement("Normal DeploymentScaled: " + tc.event))
		})
	}
}

// TestBoundaryCrossingThroughTheManager lets controller-runtime's own requeue
// timer carry the controller across a boundary two seconds ahead: the new
// count must land within a second after it, and not before it.
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
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clk}, testenv.ManagerOptions{})
	tds := builders.TDSet(ns, "paused").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(5))) }).Should(Succeed())

	// Past 17:00 the schedule wants 3, but the TDSet is suspended.
	clk.SetTime(time.Date(2026, 3, 10, 17, 30, 0, 0, time.UTC))
	patch(g, c, tds, `{"spec":{"suspend":true}}`)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
		g.Expect(conditions.IsTrue(tds, schedulev1.ConditionSuspended)).To(BeTrue())
		g.Expect(conditions.Get(tds, schedulev1.ConditionScheduled).Reason).To(Equal(schedulev1.ReasonSuspended))
		g.Expect(tds.Status.DesiredReplicas).To(HaveValue(Equal(int32(3))), "the status still says what the schedule wants")
	}).Should(Succeed())
	// Scaled by hand while suspended: that count is kept too.
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "paused"}}, `{"spec":{"replicas":7}}`)
	g.Consistently(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(7))) }, 2*time.Second).Should(Succeed())

	patch(g, c, tds, `{"spec":{"suspend":false}}`)
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "paused")).To(Equal(int32(3))) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(conditions.Get(tds, schedulev1.ConditionSuspended).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(conditions.IsTrue(tds, schedulev1.ConditionScheduled)).To(BeTrue())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "paused") }).Should(
		ContainElement("Normal DeploymentScaled: Scaled deployment paused from 7 to 3 (window 17-19)"))
}

func TestInvalidTimeZoneLeavesTheDeploymentAlone(t *testing.T) {
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	expectInvalid := func(g Gomega, tds *schedulev1.TDSet, zone string) {
		g.Eventually(func(g Gomega) {
			fetch(g, c, tds)
			g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
			ready := conditions.Get(tds, conditions.Ready)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(schedulev1.ReasonInvalidTimeZone))
			g.Expect(ready.Message).To(ContainSubstring(zone))
			g.Expect(tds.Status.DesiredReplicas).To(BeNil())
			g.Expect(tds.Status.NextTransitionTime).To(BeNil())
		}).Should(Succeed())
		g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, tds.Name) }).Should(
			ContainElement(And(HavePrefix("Warning InvalidTimeZone: "), ContainSubstring(zone))))
	}

	t.Run("never created", func(t *testing.T) {
		g := NewWithT(t)
		tds := builders.TDSet(ns, "mars").TimeZone("Mars/Olympus_Mons").Obj()
		g.Expect(c.Create(bg, tds)).To(Succeed())
		expectInvalid(g, tds, "Mars/Olympus_Mons")
		g.Consistently(func() bool {
			return apierrors.IsNotFound(c.Get(bg, client.ObjectKey{Namespace: ns, Name: "mars"}, &appsv1.Deployment{}))
		}, 2*time.Second).Should(BeTrue())

		patch(g, c, tds, `{"spec":{"timeZone":"Asia/Kathmandu"}}`)
		// 10:00 UTC is 15:45 in Kathmandu: window 9-17.
		g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "mars")).To(Equal(int32(5))) }).Should(Succeed())
	})
	t.Run("never updated", func(t *testing.T) {
		g := NewWithT(t)
		tds := builders.TDSet(ns, "local").Obj()
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
	counted, writes := testenv.CountWrites(testenv.Get(t).Config)
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{Config: counted})
	tds := builders.TDSet(ns, "steady").ServicePort(80).TimeZone("America/St_Johns").IntervalMint(60).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	// 10:00 UTC is 07:30 in St. John's, on summer time (-2:30) since 8 March:
	// window 7-9, 3 replicas.
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
	testenv.ExpectSteadyState(g, writes, tdset.Name, func() {
		patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steady"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
		patch(g, c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steady"}}, `{"metadata":{"labels":{"test-touch":"1"}}}`)
		dep := deployment(g, c, ns, "steady")
		dep.Status.Conditions = append(dep.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"})
		g.Expect(c.Status().Update(bg, dep)).To(Succeed())
	})
}

// The offset clock must fit the Reconciler like the fake clock does.
var _ clock.PassiveClock = (*testclock.Offset)(nil)
