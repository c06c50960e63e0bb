package reconciler_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/finalizers"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testapi.AddToScheme)) }

const finalizer = "testing.multi-operator.io/finalizer"

// phase is a scripted phase: it records that it ran, sets the Widget's
// phase to its name, and returns what it was told to.
type phase struct {
	name   string
	result reconciler.Result
	err    error
}

// flow returns a Flow over Widgets whose phases are the scripted ones; ran
// collects the names of the phases that ran.
func flow(c client.Client, ran *[]string, fin string, cleanup func() error, phases ...phase) *reconciler.Flow[*testapi.Widget, *testapi.Widget] {
	f := &reconciler.Flow[*testapi.Widget, *testapi.Widget]{
		Client:    c,
		NewObject: func() *testapi.Widget { return &testapi.Widget{} },
		NewScope:  func(w *testapi.Widget) *testapi.Widget { return w },
		Finalizer: fin,
		Cleanup:   func(context.Context, *testapi.Widget) error { return cleanup() },
	}
	for _, p := range phases {
		f.Phases = append(f.Phases, reconciler.NamedPhase[*testapi.Widget]{Name: p.name, Run: func(_ context.Context, w *testapi.Widget) (reconciler.Result, error) {
			*ran = append(*ran, p.name)
			w.Status.Phase = p.name
			conditions.MarkTrue(w, conditions.Ready, "Phase", p.name)
			return p.result, p.err
		}})
	}
	return f
}

// setup returns a client whose writes are counted and a new Widget.
func setup(t *testing.T) (*WithT, client.Client, *testenv.RequestCounter, *testapi.Widget) {
	g := NewWithT(t)
	env := testenv.Get(t)
	cfg, writes := testenv.CountWrites(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: env.Namespace(t)}}
	g.Expect(env.Client.Create(context.Background(), w)).To(Succeed())
	return g, c, writes, w
}

func request(w *testapi.Widget) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)}
}

func TestPhasesRunInOrderAndStatusIsWrittenOnceAtTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name        string
		phases      []phase
		wantRan     []string
		wantResult  ctrl.Result
		wantErr     bool
		wantStatus  string
		wantWritten bool
	}{
		{
			name:        "every phase, the soonest requeue wins",
			phases:      []phase{{name: "a", result: reconciler.Requeue(time.Hour)}, {name: "b", result: reconciler.Requeue(time.Minute)}, {name: "c"}},
			wantRan:     []string{"a", "b", "c"},
			wantResult:  ctrl.Result{RequeueAfter: time.Minute},
			wantStatus:  "c",
			wantWritten: true,
		},
		{
			name:        "stop skips the phases after it",
			phases:      []phase{{name: "a"}, {name: "b", result: reconciler.StopAndRequeue(time.Second)}, {name: "c"}},
			wantRan:     []string{"a", "b"},
			wantResult:  ctrl.Result{RequeueAfter: time.Second},
			wantStatus:  "b",
			wantWritten: true,
		},
		{
			name:       "an error stops, is returned without a requeue, and the status still shows it",
			phases:     []phase{{name: "a", result: reconciler.Requeue(time.Minute)}, {name: "b", err: errors.New("boom")}, {name: "c"}},
			wantRan:    []string{"a", "b"},
			wantErr:    true,
			wantStatus: "b", wantWritten: true,
		},
		{
			name:    "a held status is not written",
			phases:  []phase{{name: "a"}, {name: "b", result: reconciler.Result{HoldStatus: true}}},
			wantRan: []string{"a", "b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, c, writes, w := setup(t)
			var ran []string
			f := flow(c, &ran, "", nil, tc.phases...)
			result, err := f.Reconcile(context.Background(), request(w))
			g.Expect(ran).To(Equal(tc.wantRan))
			g.Expect(result).To(Equal(tc.wantResult))
			if tc.wantErr {
				g.Expect(err).To(MatchError(ContainSubstring("boom")))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(w), w)).To(Succeed())
			g.Expect(w.Status.Phase).To(Equal(tc.wantStatus))
			if tc.wantWritten {
				g.Expect(writes.Requests()).To(ConsistOf(HaveSuffix("/widgets/w/status")), "one status write")
			} else {
				g.Expect(writes.Requests()).To(BeEmpty())
			}
		})
	}
}

// What a phase announces runs once the status that records it is written:
// not when the write fails (here, the object is gone meanwhile) and not
// when the status is held, since the next reconcile repeats the phase.
func TestAfterStatusRunsOnlyOnceTheStatusIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name          string
		deleteMidway  bool
		hold          bool
		wantAnnounced []string
	}{
		{name: "written", wantAnnounced: []string{"a", "b"}},
		{name: "the write fails", deleteMidway: true},
		{name: "held", hold: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, c, _, w := setup(t)
			var ran, announced []string
			f := flow(c, &ran, "", nil)
			for _, name := range []string{"a", "b"} {
				f.Phases = append(f.Phases, reconciler.NamedPhase[*testapi.Widget]{Name: name, Run: func(ctx context.Context, w *testapi.Widget) (reconciler.Result, error) {
					w.Status.Phase = name
					if tc.deleteMidway && name == "b" {
						g.Expect(testenv.Get(t).Client.Delete(ctx, w.DeepCopy())).To(Succeed())
					}
					return reconciler.Result{HoldStatus: tc.hold, AfterStatus: []func(){func() { announced = append(announced, name) }}}, nil
				}})
			}
			_, err := f.Reconcile(context.Background(), request(w))
			if tc.deleteMidway {
				g.Expect(err).To(HaveOccurred(), "the status write failed")
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(announced).To(Equal(tc.wantAnnounced))
		})
	}
}

// A phase's error comes back with the phase's name in front, and still is
// the error the phase returned.
func TestPhaseErrorsCarryThePhaseName(t *testing.T) {
	g, c, _, w := setup(t)
	var ran []string
	boom := errors.New("boom")
	f := flow(c, &ran, "", nil, phase{name: "children"}, phase{name: "status", err: boom})
	_, err := f.Reconcile(context.Background(), request(w))
	g.Expect(err).To(MatchError("status: boom"))
	g.Expect(errors.Is(err, boom)).To(BeTrue(), "the phase's own error is still there")
}

// The Flow records the generation the status was computed from, before
// the phases run, so that none of them has to.
func TestObservedGenerationIsSetBeforeThePhases(t *testing.T) {
	g, c, _, w := setup(t)
	w.Spec.Size = 2
	g.Expect(c.Update(context.Background(), w)).To(Succeed())
	g.Expect(w.Generation).To(BeEquivalentTo(2), "a spec change bumps the generation")

	var ran []string
	f := flow(c, &ran, "", nil, phase{name: "a"})
	f.ObservedGeneration = func(w *testapi.Widget) *int64 { return &w.Status.ObservedGeneration }
	var seen int64
	f.Phases = append([]reconciler.NamedPhase[*testapi.Widget]{{Name: "peek", Run: func(_ context.Context, w *testapi.Widget) (reconciler.Result, error) {
		seen = w.Status.ObservedGeneration
		return reconciler.Result{}, nil
	}}}, f.Phases...)
	_, err := f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(seen).To(Equal(w.Generation), "the phases see it")
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(w), w)).To(Succeed())
	g.Expect(w.Status.ObservedGeneration).To(Equal(w.Generation), "and it is written")
}

func TestNothingChangedWritesNothing(t *testing.T) {
	g, c, writes, w := setup(t)
	var ran []string
	f := flow(c, &ran, "", nil, phase{name: "a"})
	_, err := f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes.Requests()).To(HaveLen(1))

	// A second reconcile computes the same status: no write. The skeleton
	// remembers its own write, so it reads a fresh object here.
	writes.Reset()
	_, err = f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ran).To(Equal([]string{"a", "a"}))
	g.Expect(writes.Requests()).To(BeEmpty())
}

func TestStaleReadIsRetriedWithoutAWrite(t *testing.T) {
	g, c, writes, w := setup(t)
	var ran []string
	f := flow(c, &ran, "", nil, phase{name: "a"})
	stale := w.DeepCopy()
	_, err := f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())

	// A reader that still returns the Widget from before our write: the
	// reconcile is put off, and nothing runs or is written.
	writes.Reset()
	f.Client = staleClient{Client: c, obj: stale}
	result, err := f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0))
	g.Expect(ran).To(Equal([]string{"a"}))
	g.Expect(writes.Requests()).To(BeEmpty())
}

// staleClient answers every Get with obj.
type staleClient struct {
	client.Client
	obj client.Object
}

func (s staleClient) Get(_ context.Context, _ client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	s.obj.(*testapi.Widget).DeepCopyInto(out.(*testapi.Widget))
	return nil
}

func TestFinalizerIsAddedAndCleanupRunsBeforeTheObjectGoes(t *testing.T) {
	g, c, _, w := setup(t)
	var ran []string
	cleanupErr := errors.New("cleanup failed")
	cleanups := 0
	f := flow(c, &ran, finalizer, func() error { cleanups++; return cleanupErr }, phase{name: "a"})
	_, err := f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(w), w)).To(Succeed())
	g.Expect(controllerutil.ContainsFinalizer(w, finalizer)).To(BeTrue())

	g.Expect(c.Delete(context.Background(), w)).To(Succeed())
	// A failing cleanup keeps the finalizer and is shown in the status.
	_, err = f.Reconcile(context.Background(), request(w))
	g.Expect(err).To(MatchError(ContainSubstring("cleanup failed")))
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(w), w)).To(Succeed())
	g.Expect(controllerutil.ContainsFinalizer(w, finalizer)).To(BeTrue())
	g.Expect(conditions.Get(w, conditions.Ready).Reason).To(Equal(conditions.ReasonCleanupFailed))
	g.Expect(ran).To(Equal([]string{"a"}), "no phase runs for an object being deleted")

	// A cleanup that waits for work it started asks to be looked at again,
	// with its reason in the status, and no error.
	cleanupErr = finalizers.Wait(time.Minute, "Draining", "draining")
	res, err := f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(time.Minute))
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(w), w)).To(Succeed())
	g.Expect(controllerutil.ContainsFinalizer(w, finalizer)).To(BeTrue())
	g.Expect(conditions.Get(w, conditions.Ready).Reason).To(Equal("Draining"))

	// Once it succeeds, the finalizer goes and so does the object.
	cleanupErr = nil
	_, err = f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cleanups).To(Equal(3))
	g.Expect(client.IgnoreNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(w), w))).To(Succeed())
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(w), w)).NotTo(Succeed(), "the Widget is gone")

	// A last reconcile of the gone object does nothing.
	_, err = f.Reconcile(context.Background(), request(w))
	g.Expect(err).NotTo(HaveOccurred())
}

// reconcilesOf starts a manager whose controller, set up by build with
// reconcilesOf's counting reconciler, counts its reconciles of objects in
// ns.
func reconcilesOf(t *testing.T, env *testenv.Env, ns string, build func(mgr ctrl.Manager) *builder.Builder) func() int {
	var mu sync.Mutex
	reconciles := 0
	env.StartManager(t, testenv.ManagerOptions{}, func(mgr ctrl.Manager) error {
		return build(mgr).Complete(reconcile.Func(func(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
			if req.Namespace == ns {
				mu.Lock()
				reconciles++
				mu.Unlock()
			}
			return ctrl.Result{}, nil
		}))
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return reconciles
	}
}

// A child's create, which the controller itself makes, reconciles nothing;
// its updates and its delete reconcile the owner.
func TestChildCreatesTriggerNoReconcile(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	count := reconcilesOf(t, env, ns, func(mgr ctrl.Manager) *builder.Builder {
		return reconciler.NewControllerBuilder(mgr, "child-events", &reconciler.Flow[*testapi.Widget, *testapi.Widget]{}, &testapi.Widget{}, nil, []client.Object{&corev1.ConfigMap{}})
	})
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, w)).To(Succeed())
	g.Eventually(count).Should(Equal(1), "the owner's create")

	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}}
	g.Expect(controllerutil.SetControllerReference(w, child, env.Scheme)).To(Succeed())
	g.Expect(env.Client.Create(ctx, child)).To(Succeed())
	g.Consistently(count, "2s").Should(Equal(1), "the child's create")

	child.Data = map[string]string{"drift": "yes"}
	g.Expect(env.Client.Update(ctx, child)).To(Succeed())
	g.Eventually(count).Should(Equal(2), "the child's update")
	g.Expect(env.Client.Delete(ctx, child)).To(Succeed())
	g.Eventually(count).Should(Equal(3), "the child's delete")
}

// A reported child's update reconciles its owner when what the owner reads
// of it changed: its report, its spec (generation), its labels; a status
// report that moves only what the owner does not read reconciles nothing.
func TestReportedChildUpdatesReconcileOnlyWhenTheReportChanged(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	available := func(d *appsv1.Deployment) int32 { return d.Status.AvailableReplicas }
	count := reconcilesOf(t, env, ns, func(mgr ctrl.Manager) *builder.Builder {
		return reconciler.NewControllerBuilder(mgr, "reported-child-events", &reconciler.Flow[*testapi.Widget, *testapi.Widget]{}, &testapi.Widget{},
			[]reconciler.Reported{reconciler.ReportOf(&appsv1.Deployment{}, available)}, nil)
	})
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, w)).To(Succeed())
	g.Eventually(count).Should(Equal(1), "the owner's create")

	labels := map[string]string{"app": "child"}
	child := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1"}}},
			},
		},
	}
	g.Expect(controllerutil.SetControllerReference(w, child, env.Scheme)).To(Succeed())
	g.Expect(env.Client.Create(ctx, child)).To(Succeed())

	// What the Deployment controller reports once a rollout is done, apart
	// from the counts: the owner does not read it.
	child.Status.ObservedGeneration = child.Generation
	child.Status.Replicas, child.Status.ReadyReplicas = 1, 1
	child.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
		LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}
	g.Expect(env.Client.Status().Update(ctx, child)).To(Succeed())
	// Then a change of what it does read.
	child.Status.AvailableReplicas = 1
	g.Expect(env.Client.Status().Update(ctx, child)).To(Succeed())
	g.Eventually(count).Should(Equal(2), "the report's change")
	g.Consistently(count, "1s").Should(Equal(2), "the child's create and the unread status change reconcile nothing")

	child.Labels = map[string]string{"drift": "yes"}
	g.Expect(env.Client.Update(ctx, child)).To(Succeed())
	g.Eventually(count).Should(Equal(3), "a label's change")
	child.Spec.Replicas = ptr.To[int32](2)
	g.Expect(env.Client.Update(ctx, child)).To(Succeed())
	g.Eventually(count).Should(Equal(4), "a spec change")
	g.Expect(env.Client.Delete(ctx, child)).To(Succeed())
	g.Eventually(count).Should(Equal(5), "the child's delete")
}
