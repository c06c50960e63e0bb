package apply_test

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testapi.AddToScheme)) }

func deployment(ns string) *appsv1.Deployment {
	labels := ownership.Labels("test", "owner")
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: ownership.SelectorLabels("test", "owner")},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "example/app:1",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				}}},
			},
		},
	}
}

func setup(t *testing.T) (context.Context, client.Client, *testenv.RequestCounter, *testapi.Widget) {
	g := NewWithT(t)
	env := testenv.Get(t)
	cfg, counter := testenv.CountWrites(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	owner := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: env.Namespace(t)}, Spec: testapi.WidgetSpec{Message: "hi"}}
	g.Expect(c.Create(context.Background(), owner)).To(Succeed())
	counter.Reset()
	return context.Background(), c, counter, owner
}

// startCachingManager starts a manager whose cache holds only labelled
// Deployments, as a controller that owns Deployments has it.
func startCachingManager(t *testing.T, cfg *rest.Config) ctrl.Manager {
	d := reconciler.Descriptor{Name: "test", Managed: []client.Object{&appsv1.Deployment{}}}
	return testenv.Get(t).StartManager(t, testenv.ManagerOptions{Config: cfg, Controllers: []reconciler.Descriptor{d}}, func(ctrl.Manager) error { return nil })
}

func TestApplyCreatesOnceAndThenWritesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx, c, counter, owner := setup(t)

	res, err := apply.Apply(ctx, c, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Created))
	got := &appsv1.Deployment{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "child"}, got)).To(Succeed())
	g.Expect(metav1.IsControlledBy(got, owner)).To(BeTrue())

	// The server defaulted many fields; applying the same desired object again
	// must see no difference and send nothing.
	counter.Reset()
	for range 3 {
		desired := deployment(owner.Namespace)
		res, err = apply.Apply(ctx, c, owner, desired)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res).To(Equal(apply.Unchanged))
		g.Expect(desired.UID).To(Equal(got.UID), "desired now holds the server's object")
	}
	g.Expect(counter.Requests()).To(BeEmpty())
}

func TestApplyCorrectsDriftAndKeepsOthersLabels(t *testing.T) {
	g := NewWithT(t)
	ctx, c, _, owner := setup(t)
	_, err := apply.Apply(ctx, c, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())

	for name, drift := range map[string]func(d *appsv1.Deployment){
		"replicas": func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](7) },
		"image":    func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "evil/app:1" },
		"added container": func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "extra", Image: "x"})
		},
		"removed label": func(d *appsv1.Deployment) { delete(d.Labels, ownership.LabelPartOf) },
		"changed label": func(d *appsv1.Deployment) { d.Labels[ownership.LabelPartOf] = "someone-else" },
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			live := &appsv1.Deployment{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "child"}, live)).To(Succeed())
			drift(live)
			live.Labels["team"] = "someone-else"
			g.Expect(c.Update(ctx, live)).To(Succeed())

			res, err := apply.Apply(ctx, c, owner, deployment(owner.Namespace))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res).To(Equal(apply.Updated))
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(live), live)).To(Succeed())
			g.Expect(*live.Spec.Replicas).To(Equal(int32(2)))
			g.Expect(live.Spec.Template.Spec.Containers).To(HaveLen(1))
			g.Expect(live.Spec.Template.Spec.Containers[0].Image).To(Equal("example/app:1"))
			g.Expect(live.Labels).To(HaveKeyWithValue(ownership.LabelPartOf, ownership.ManagedBy))
			g.Expect(live.Labels).To(HaveKeyWithValue("team", "someone-else"))

			res, err = apply.Apply(ctx, c, owner, deployment(owner.Namespace))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res).To(Equal(apply.Unchanged))
		})
	}
}

// ApplyWithPrevious hands back the child as it was before its correction,
// which is what an event such as "scaled from 7 to 2" is made of.
func TestApplyWithPreviousReturnsTheCorrectedChild(t *testing.T) {
	g := NewWithT(t)
	ctx, c, _, owner := setup(t)
	var children apply.Children
	res, previous, err := children.ApplyWithPrevious(ctx, c, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Created))
	g.Expect(previous).To(BeNil())

	live := &appsv1.Deployment{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "child"}, live)).To(Succeed())
	live.Spec.Replicas = ptr.To[int32](7)
	g.Expect(c.Update(ctx, live)).To(Succeed())

	desired := deployment(owner.Namespace)
	res, previous, err = children.ApplyWithPrevious(ctx, c, owner, desired)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Updated))
	g.Expect(previous).To(BeAssignableToTypeOf(&appsv1.Deployment{}))
	g.Expect(previous.(*appsv1.Deployment).Spec.Replicas).To(HaveValue(Equal(int32(7))), "the child before the update")
	g.Expect(desired.Spec.Replicas).To(HaveValue(Equal(int32(2))), "desired holds the updated child")
	g.Expect(desired.Generation).To(BeNumerically(">", previous.GetGeneration()))

	res, previous, err = children.ApplyWithPrevious(ctx, c, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Unchanged))
	g.Expect(previous).To(BeNil())
}

func TestApplyKeepsAllocatedServiceFields(t *testing.T) {
	g := NewWithT(t)
	ctx, c, counter, owner := setup(t)
	svc := func(port int32) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: owner.Namespace, Labels: ownership.Labels("test", "owner")},
			Spec: corev1.ServiceSpec{
				Selector: ownership.SelectorLabels("test", "owner"),
				Ports:    []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromString("http")}},
			},
		}
	}
	_, err := apply.Apply(ctx, c, owner, svc(80))
	g.Expect(err).NotTo(HaveOccurred())
	counter.Reset()
	res, err := apply.Apply(ctx, c, owner, svc(80))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Unchanged))
	g.Expect(counter.Requests()).To(BeEmpty())

	res, err = apply.Apply(ctx, c, owner, svc(8080))
	g.Expect(err).NotTo(HaveOccurred(), "the allocated clusterIP survives the update")
	g.Expect(res).To(Equal(apply.Updated))
}

func TestApplyNeverTakesOverAnotherObject(t *testing.T) {
	g := NewWithT(t)
	ctx, c, _, owner := setup(t)
	foreign := deployment(owner.Namespace)
	foreign.Spec.Template.Spec.Containers[0].Image = "theirs/app:1"
	g.Expect(c.Create(ctx, foreign)).To(Succeed())

	_, err := apply.Apply(ctx, c, owner, deployment(owner.Namespace))
	g.Expect(ownership.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`Deployment "child" already exists and is not controlled by this resource`))

	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(foreign), foreign)).To(Succeed())
	g.Expect(foreign.Spec.Template.Spec.Containers[0].Image).To(Equal("theirs/app:1"))
	g.Expect(foreign.OwnerReferences).To(BeEmpty())

}

// TestApplyReportsUnlabelledObjectsAsConflicts uses the manager's cache,
// which holds only labelled children: an unlabelled object of the child's
// name is invisible there, and must still be reported as a conflict.
func TestApplyReportsUnlabelledObjectsAsConflicts(t *testing.T) {
	g := NewWithT(t)
	ctx, c, _, owner := setup(t)
	foreign := deployment(owner.Namespace)
	foreign.Labels = nil
	g.Expect(c.Create(ctx, foreign)).To(Succeed())

	mgr := startCachingManager(t, testenv.Get(t).Config)
	_, err := apply.Apply(ctx, mgr.GetClient(), owner, deployment(owner.Namespace))
	g.Expect(ownership.IsConflict(err)).To(BeTrue(), "got %v", err)
}

// TestApplyFindsItsOwnChildPastTheCache: a child this owner
// controls that the cache cannot see (here: its labels were removed; in
// production: the cache has not caught up with our own create) is not a
// conflict. Apply reads it from the API server and restores it.
func TestApplyFindsItsOwnChildPastTheCache(t *testing.T) {
	g := NewWithT(t)
	ctx, c, _, owner := setup(t)
	mgr := startCachingManager(t, testenv.Get(t).Config)

	res, err := apply.Apply(ctx, c, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Created))
	unlabelled := &appsv1.Deployment{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "child"}, unlabelled)).To(Succeed())
	unlabelled.Labels = nil
	g.Expect(c.Update(ctx, unlabelled)).To(Succeed())

	res, err = apply.Apply(ctx, mgr.GetClient(), owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Updated))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(unlabelled), unlabelled)).To(Succeed())
	g.Expect(unlabelled.Labels).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy))
}

// TestChildrenDoNotCreateTwiceWhileTheCacheLags: a child created a moment
// ago that the cache does not show (here: its labels were removed; in
// production: the cache has not caught up with the create) is read from the
// API server, not created again to be refused with AlreadyExists.
func TestChildrenDoNotCreateTwiceWhileTheCacheLags(t *testing.T) {
	g := NewWithT(t)
	ctx, c, _, owner := setup(t)
	cfg, writes := testenv.CountWrites(testenv.Get(t).Config)
	mgr := startCachingManager(t, cfg)
	children := &apply.Children{}

	res, err := children.Apply(ctx, mgr.GetClient(), owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Created))
	hidden := &appsv1.Deployment{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "child"}, hidden)).To(Succeed())
	hidden.Labels = nil
	g.Expect(c.Update(ctx, hidden)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(hidden), &appsv1.Deployment{}))
	}).Should(BeTrue(), "the cache drops the unlabelled child")

	writes.Reset()
	res, err = children.Apply(ctx, mgr.GetClient(), owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Updated))
	g.Expect(writes.Requests()).To(ConsistOf(HavePrefix("PATCH ")), "the labels are restored without a create")
}

// cacheBehind is a manager's client whose cache is behind for one object:
// its next misses reads find nothing, as right after a create whose watch
// event is still on its way.
type cacheBehind struct {
	client.Client
	key    client.ObjectKey
	misses int
}

func (c *cacheBehind) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key == c.key && c.misses > 0 {
		c.misses--
		return apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestChildrenAwaitTheCacheAfterTheirOwnCreate: a reconcile that comes
// right after the create of a child, before the cache has it, waits for
// the cache and reads nothing past it: each read is a request and a token
// of the client-side limit.
func TestChildrenAwaitTheCacheAfterTheirOwnCreate(t *testing.T) {
	g := NewWithT(t)
	ctx, _, _, owner := setup(t)
	cfg, reads := testenv.CountReads(testenv.Get(t).Config)
	mgr := startCachingManager(t, cfg)
	behind := &cacheBehind{Client: mgr.GetClient(), key: client.ObjectKey{Namespace: owner.Namespace, Name: "child"}}
	children := &apply.Children{}

	res, err := children.Apply(ctx, behind, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Created))

	g.Eventually(func() error {
		return mgr.GetClient().Get(ctx, behind.key, &appsv1.Deployment{})
	}).Should(Succeed(), "the cache has the child, but is behind for its next reads")
	behind.misses = 3
	reads.Reset()
	res, err = children.Apply(ctx, behind, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Unchanged))
	g.Expect(behind.misses).To(BeZero(), "the cache was asked again until it had the child")
	g.Expect(reads.Requests("/deployments/child")).To(BeEmpty(), "no read past the cache")
}

// TestApplyHandsOnNoMemoryOfTheCache: Apply reads the cached child without
// a copy, so what it hands on (desired, filled with the child as the API
// server has it, and the child before an update) must be copies: a caller
// that changes them must not change the manager's cache.
func TestApplyHandsOnNoMemoryOfTheCache(t *testing.T) {
	g := NewWithT(t)
	ctx, c, _, owner := setup(t)
	mgr := startCachingManager(t, testenv.Get(t).Config)
	cached := mgr.GetClient()
	var children apply.Children
	_, err := children.Apply(ctx, cached, owner, deployment(owner.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	key := client.ObjectKey{Namespace: owner.Namespace, Name: "child"}
	live := &appsv1.Deployment{}
	g.Eventually(func() error { return cached.Get(ctx, key, live) }).Should(Succeed())

	// Each caller changes all it was given, everywhere a copy could share.
	spoil := func(d *appsv1.Deployment) {
		d.Labels["spoiled"] = "yes"
		d.Spec.Selector.MatchLabels["spoiled"] = "yes"
		d.Spec.Template.Labels["spoiled"] = "yes"
		d.Spec.Template.Spec.Containers[0].Image = "spoiled"
		*d.Spec.Replicas = 99
		d.OwnerReferences[0].Name = "spoiled"
	}
	unspoiled := func() {
		t.Helper()
		got := &appsv1.Deployment{}
		g.Expect(cached.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Labels).NotTo(HaveKey("spoiled"))
		g.Expect(got.Spec.Selector.MatchLabels).NotTo(HaveKey("spoiled"))
		g.Expect(got.Spec.Template.Labels).NotTo(HaveKey("spoiled"))
		g.Expect(got.Spec.Template.Spec.Containers[0].Image).To(Equal("example/app:1"))
		g.Expect(got.OwnerReferences[0].Name).To(Equal(owner.Name))
	}

	desired := deployment(owner.Namespace)
	res, err := children.Apply(ctx, cached, owner, desired)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Unchanged))
	g.Expect(desired.UID).To(Equal(live.UID), "desired holds the child as the API server has it")
	spoil(desired)
	unspoiled()

	// The child before an update is a copy too.
	live.Spec.Replicas = ptr.To[int32](7)
	g.Expect(c.Update(ctx, live)).To(Succeed())
	g.Eventually(func() int32 {
		got := &appsv1.Deployment{}
		g.Expect(cached.Get(ctx, key, got)).To(Succeed())
		return *got.Spec.Replicas
	}).Should(Equal(int32(7)))
	desired = deployment(owner.Namespace)
	res, previous, err := children.ApplyWithPrevious(ctx, cached, owner, desired)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Updated))
	before := previous.(*appsv1.Deployment)
	g.Expect(*before.Spec.Replicas).To(Equal(int32(7)))
	spoil(before)
	spoil(desired)
	got := &appsv1.Deployment{}
	g.Expect(cached.Get(ctx, key, got)).To(Succeed())
	g.Expect(got.Labels).NotTo(HaveKey("spoiled"))
	g.Expect(got.Spec.Template.Spec.Containers[0].Image).To(Equal("example/app:1"))
}

// An unstructured child, as for kinds the scheme does not know (a
// PodMonitor), is created, corrected and then left alone like a typed one.
func TestApplyUnstructuredChild(t *testing.T) {
	g := NewWithT(t)
	ctx, c, counter, owner := setup(t)
	desired := func(value string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"key": value}}}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetName("unstructured-child")
		u.SetNamespace(owner.Namespace)
		u.SetLabels(map[string]string{ownership.LabelPartOf: ownership.ManagedBy})
		return u
	}
	res, err := apply.Apply(ctx, c, owner, desired("1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Created))

	res, err = apply.Apply(ctx, c, owner, desired("2"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Updated))
	live := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "unstructured-child"}, live)).To(Succeed())
	g.Expect(live.Data).To(Equal(map[string]string{"key": "2"}), "the change reached the server")
	g.Expect(metav1.IsControlledBy(live, owner)).To(BeTrue())

	counter.Reset()
	res, err = apply.Apply(ctx, c, owner, desired("2"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(apply.Unchanged))
	g.Expect(counter.Requests()).To(BeEmpty())
}
