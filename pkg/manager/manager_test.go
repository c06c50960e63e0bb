package manager_test

import (
	"context"
	"os"
	"reflect"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testapi.AddToScheme)) }

func TestCheckCRDsNamesTheMissingCRD(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	installed := reconciler.Descriptor{Name: "widget", For: &testapi.Widget{}}
	g.Expect(manager.CheckCRDs(mgr.GetRESTMapper(), env.Scheme, []reconciler.Descriptor{installed})).To(Succeed())

	gadget := &unstructured.Unstructured{}
	gadget.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"})
	missing := reconciler.Descriptor{Name: "gadget", For: gadget}
	err = manager.CheckCRDs(mgr.GetRESTMapper(), env.Scheme, []reconciler.Descriptor{installed, missing})
	g.Expect(err).To(MatchError("CRD gadgets.example.com is not installed: apply config/crd or disable the controller with --controllers=-gadget"))

	served, err := manager.Serves(mgr, gadget)
	g.Expect(err).NotTo(HaveOccurred(), "a kind the API server does not know is an answer")
	g.Expect(served).To(BeFalse())
	served, err = manager.Serves(mgr, &testapi.Widget{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(served).To(BeTrue())
}

// TestCacheHoldsOnlyManagedChildren proves that the manager's cache of a
// child kind ignores objects this project does not manage, and keeps no
// managedFields of those it does.
func TestCacheHoldsOnlyManagedChildren(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	deploy := func(name string, labels map[string]string) *appsv1.Deployment {
		sel := map[string]string{"app": name}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: sel},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
				},
			},
		}
	}
	g.Expect(env.Client.Create(ctx, deploy("ours", map[string]string{ownership.LabelManagedBy: ownership.ManagedBy}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, deploy("foreign", map[string]string{"app.kubernetes.io/managed-by": "helm"}))).To(Succeed())

	secret := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
	}
	g.Expect(env.Client.Create(ctx, secret("referenced", map[string]string{ownership.LabelWatch: ownership.WatchValue}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, secret("unlabelled", nil))).To(Succeed())
	g.Expect(env.Client.Create(ctx, secret("managed-only", map[string]string{ownership.LabelManagedBy: ownership.ManagedBy}))).To(Succeed())

	d := reconciler.Descriptor{Name: "test", Managed: []client.Object{&appsv1.Deployment{}}, Referenced: []client.Object{&corev1.Secret{}}}
	mgr := env.StartManager(t, testenv.ManagerOptions{Controllers: []reconciler.Descriptor{d}}, func(ctrl.Manager) error { return nil })
	g.Eventually(func(g Gomega) {
		list := &appsv1.DeploymentList{}
		g.Expect(mgr.GetCache().List(ctx, list, client.InNamespace(ns))).To(Succeed())
		names := []string{}
		for _, item := range list.Items {
			names = append(names, item.Name)
		}
		g.Expect(names).To(ConsistOf("ours"))
		secrets := &corev1.SecretList{}
		g.Expect(mgr.GetCache().List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
		names = []string{}
		for _, item := range secrets.Items {
			names = append(names, item.Name)
		}
		g.Expect(names).To(ConsistOf("referenced"), "a referenced kind is cached only when labelled for watching")
	}).Should(Succeed())

	// Nothing reads managedFields, so the cache does not keep them.
	key := client.ObjectKey{Namespace: ns, Name: "ours"}
	live, cached := &appsv1.Deployment{}, &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, live)).To(Succeed())
	g.Expect(live.ManagedFields).NotTo(BeEmpty(), "the API server has them")
	g.Expect(mgr.GetCache().Get(ctx, key, cached)).To(Succeed())
	g.Expect(cached.ManagedFields).To(BeEmpty())
}

// The cache holds equal pod specs and label maps of managed workloads once:
// what its informer stores for two Deployments of one spec shares the
// containers, and their equal labels are one map.
func TestCacheSharesEqualPodSpecsAndLabels(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	for _, name := range []string{"first", "second"} {
		sel := map[string]string{"app": name}
		g.Expect(env.Client.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{ownership.LabelManagedBy: ownership.ManagedBy}},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: sel},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1", Args: []string{"-v"}}}},
				},
			},
		})).To(Succeed())
	}
	d := reconciler.Descriptor{Name: "test", Managed: []client.Object{&appsv1.Deployment{}}}
	mgr := env.StartManager(t, testenv.ManagerOptions{Controllers: []reconciler.Descriptor{d}}, func(ctrl.Manager) error { return nil })
	informer, err := mgr.GetCache().GetInformer(ctx, &appsv1.Deployment{})
	g.Expect(err).NotTo(HaveOccurred())
	var mu sync.Mutex
	stored := map[string]*appsv1.Deployment{}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if dep, ok := obj.(*appsv1.Deployment); ok && dep.Namespace == ns {
			mu.Lock()
			defer mu.Unlock()
			stored[dep.Name] = dep
		}
	}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(stored)
	}).Should(Equal(2))
	first, second := stored["first"].Spec.Template.Spec, stored["second"].Spec.Template.Spec
	g.Expect(&first.Containers[0] == &second.Containers[0]).To(BeTrue(), "one copy of the containers")
	g.Expect(second.Containers[0].Image).To(Equal("example.com/c:1"))
	sameMap := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	g.Expect(sameMap(stored["first"].Labels, stored["second"].Labels)).To(BeTrue(), "one map of the equal labels")
	g.Expect(stored["second"].Labels).To(Equal(map[string]string{ownership.LabelManagedBy: ownership.ManagedBy}))
	g.Expect(sameMap(stored["first"].Spec.Selector.MatchLabels, stored["first"].Spec.Template.Labels)).To(BeTrue(), "the selector is the pods' labels")
}

// A kind a controller only reads is cached whole, but without the
// metadata no controller reads. It has no entry of its own in the cache
// options, so a manager starts where its CRD is not installed (the default
// transform trims it by its type).
func TestCacheKeepsOfAReadKindOnlyWhatIsRead(t *testing.T) {
	g := NewWithT(t)
	opts := manager.CacheOptions([]reconciler.Descriptor{{Read: []client.Object{&corev1.ConfigMap{}}}}, nil)
	for obj := range opts.ByObject {
		_, isConfigMap := obj.(*corev1.ConfigMap)
		g.Expect(isConfigMap).To(BeFalse(), "users' objects carry none of our labels: all are cached, and the kind is mapped only once watched")
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "holidays", Generation: 3,
			Labels:        map[string]string{"team": "shop"},
			Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Finalizers:    []string{"example.com/keep"},
		},
		Data: map[string]string{"dates": "2026-12-25"},
	}
	out, err := opts.DefaultTransform(cm)
	g.Expect(err).NotTo(HaveOccurred())
	got := out.(*corev1.ConfigMap)
	g.Expect(got.Labels).To(BeNil())
	g.Expect(got.Annotations).To(BeNil())
	g.Expect(got.ManagedFields).To(BeNil())
	g.Expect(got.Finalizers).To(BeNil())
	g.Expect(got.Name).To(Equal("holidays"))
	g.Expect(got.Generation).To(Equal(int64(3)))
	g.Expect(got.Data).To(Equal(map[string]string{"dates": "2026-12-25"}))
}

// A Referenced kind is cached only when labelled, and without kubectl's
// last-applied annotation, as large as the data; the rest is kept.
func TestCacheOfAReferencedKindDropsTheLastAppliedAnnotation(t *testing.T) {
	g := NewWithT(t)
	opts := manager.CacheOptions([]reconciler.Descriptor{{Referenced: []client.Object{&corev1.ConfigMap{}}}}, nil)
	var entry cache.ByObject
	for obj, e := range opts.ByObject {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			entry = e
		}
	}
	g.Expect(entry.Label.String()).To(Equal(ownership.LabelWatch + "=" + ownership.WatchValue))
	g.Expect(entry.Transform).NotTo(BeNil())
	annotations := map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"holidays.ics":"..."}}`, "team": "shop"}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "holidays",
			Labels:        map[string]string{ownership.LabelWatch: ownership.WatchValue},
			Annotations:   annotations,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Data: map[string]string{"holidays.ics": "BEGIN:VCALENDAR"},
	}
	out, err := entry.Transform(cm)
	g.Expect(err).NotTo(HaveOccurred())
	got := out.(*corev1.ConfigMap)
	g.Expect(got.Annotations).To(Equal(map[string]string{"team": "shop"}))
	g.Expect(annotations).To(HaveKey(corev1.LastAppliedConfigAnnotation), "the map it came with is not changed: it may be shared")
	g.Expect(got.Labels).To(Equal(map[string]string{ownership.LabelWatch: ownership.WatchValue}))
	g.Expect(got.ManagedFields).To(BeNil())
	g.Expect(got.Data).To(Equal(map[string]string{"holidays.ics": "BEGIN:VCALENDAR"}))
}

// TestOwnCacheWatchesTheManagersNamespaces: a controller's cache of its
// own (TDSet's scale targets) watches the namespaces of the manager's
// cache, which NewCache remembers from the cache options, and none else;
// without NewCache there is no such cache rather than one of every
// namespace.
func TestOwnCacheWatchesTheManagersNamespaces(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	watched, other := env.Namespace(t), env.Namespace(t)
	ctx := context.Background()
	for _, ns := range []string{watched, other} {
		g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}})).To(Succeed())
	}
	mgr := env.StartManager(t, testenv.ManagerOptions{WatchNamespaces: []string{watched}}, func(ctrl.Manager) error { return nil })
	opts, err := manager.OwnCacheOptions(mgr, cache.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts.DefaultNamespaces).To(HaveLen(1))
	g.Expect(opts.DefaultNamespaces).To(HaveKey(watched))
	own, err := cache.New(mgr.GetConfig(), opts)
	g.Expect(err).NotTo(HaveOccurred())
	cctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go func() { _ = own.Start(cctx) }()
	g.Eventually(func(g Gomega) []string {
		list := &corev1.ConfigMapList{}
		g.Expect(own.List(ctx, list)).To(Succeed())
		var namespaces []string
		for _, cm := range list.Items {
			if cm.Name == "settings" {
				namespaces = append(namespaces, cm.Namespace)
			}
		}
		return namespaces
	}).Should(ConsistOf(watched))

	all := env.StartManager(t, testenv.ManagerOptions{}, func(ctrl.Manager) error { return nil })
	opts, err = manager.OwnCacheOptions(all, cache.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts.DefaultNamespaces).To(BeEmpty(), "every namespace, as the manager's cache")
	g.Expect(manager.WatchesAllNamespaces(all)).To(BeTrue())
	g.Expect(manager.WatchesAllNamespaces(mgr)).To(BeFalse(), "only %s", watched)

	plain, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Cache: manager.CacheOptions(nil, []string{watched})})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = manager.OwnCacheOptions(plain, cache.Options{})
	g.Expect(err).To(MatchError(ContainSubstring("manager.NewCache")))
}
