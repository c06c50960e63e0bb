package deploy

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) {
	var adds []func(*runtime.Scheme) error
	for _, d := range controllers.All() {
		adds = append(adds, d.AddToScheme)
	}
	// OwnerReferencesPermissionEnforcement (OpenShift runs it) refuses a
	// child whose owner reference blocks the owner's deletion unless the
	// controller may update the owner's finalizers: the generated roles must
	// say so.
	os.Exit(testenv.RunWith(m, testenv.RunOptions{AdmissionPlugins: []string{"OwnerReferencesPermissionEnforcement"}}, adds...))
}

// rbacKinds are the objects of an overlay that make up its identity and permissions.
var rbacKinds = map[string]bool{"Namespace": true, "ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true}

// applyRBAC creates the overlay's identity and permissions in the cluster.
func applyRBAC(t *testing.T, env *testenv.Env, o *Overlay) {
	for _, obj := range o.Objects {
		if !rbacKinds[obj["kind"].(string)] {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		err := env.Client.Create(context.Background(), u)
		if apierrors.IsAlreadyExists(err) {
			existing := &unstructured.Unstructured{}
			existing.SetGroupVersionKind(u.GroupVersionKind())
			NewWithT(t).Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), existing)).To(Succeed())
			u.SetResourceVersion(existing.GetResourceVersion())
			err = env.Client.Update(context.Background(), u)
		}
		NewWithT(t).Expect(err).NotTo(HaveOccurred(), "applying %s %s", u.GetKind(), u.GetName())
		if u.GetKind() != "Namespace" {
			// Overlays share the ServiceAccount's name: one overlay's grants
			// must not leak into the next one's test.
			t.Cleanup(func() {
				if err := env.Client.Delete(context.Background(), u); client.IgnoreNotFound(err) != nil {
					t.Errorf("removing %s %s: %v", u.GetKind(), u.GetName(), err)
				}
			})
		}
	}
}

// asManager is the admin config impersonating the manager's ServiceAccount.
func asManager(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + namespace + ":" + serviceAcount}
	return c
}

// samplesFor returns the samples whose kind one of the controllers reconciles.
func samplesFor(t *testing.T, scheme *runtime.Scheme, enabled []reconciler.Descriptor) []*unstructured.Unstructured {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	files, err := filepath.Glob(filepath.Join(root, "samples", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var out []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal(raw, &u.Object)).To(Succeed(), f)
		for _, d := range enabled {
			gvk, err := apiutil.GVKForObject(d.For, scheme)
			g.Expect(err).NotTo(HaveOccurred())
			if gvk == u.GroupVersionKind() {
				out = append(out, u)
			}
		}
	}
	return out
}

// TestOverlayRBACIsSufficientAndMinimal runs each overlay's controllers as
// the overlay's ServiceAccount: they reconcile their samples without a
// single Forbidden answer, and they may not touch what they do not need.
func TestOverlayRBACIsSufficientAndMinimal(t *testing.T) {
	env := testenv.Get(t)
	for _, dir := range overlayDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g := NewWithT(t)
			o := build(t, dir)
			applyRBAC(t, env, o)
			enabled, _, err := manager.Select(controllers.All(), o.Components)
			g.Expect(err).NotTo(HaveOccurred())

			cfg, forbidden := testenv.CountForbidden(asManager(env.Config))
			env.StartManager(t, testenv.ManagerOptions{Config: cfg, Controllers: enabled}, func(mgr ctrl.Manager) error {
				for _, d := range enabled {
					if err := d.Setup(mgr, manager.OptionsFromEnv(d)); err != nil {
						return err
					}
				}
				return nil
			})

			ns := env.Namespace(t)
			samples := samplesFor(t, env.Scheme, enabled)
			g.Expect(samples).NotTo(BeEmpty(), "every controller has a sample")
			for _, s := range samples {
				s.SetNamespace(ns)
				g.Expect(env.Client.Create(context.Background(), s)).To(Succeed(), "sample %s", s.GetName())
			}
			for _, s := range samples {
				g.Eventually(func(g Gomega) { expectReconciled(g, env.Client, s) }).Should(Succeed())
			}
			g.Expect(forbidden.Requests()).To(BeEmpty(), "requests the overlay's RBAC forbade")

			if filepath.Base(dir) == "whalesay" {
				c, err := client.New(asManager(env.Config), client.Options{Scheme: env.Scheme})
				g.Expect(err).NotTo(HaveOccurred())
				err = c.List(context.Background(), &appsv1.DeploymentList{})
				g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the whalesay identity lists deployments: %v", err)
				g.Expect(strings.ToLower(err.Error())).To(ContainSubstring("deployments"))
			}
		})
	}
}

// expectReconciled checks that the controller reconciled s, the sample
// as created: its status observed its generation and has a Ready
// condition that no failed write set.
func expectReconciled(g Gomega, c client.Client, s *unstructured.Unstructured) {
	observeDeployments(g, c, s.GetNamespace())
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(s.GroupVersionKind())
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(s), got)).To(Succeed())
	observed, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
	g.Expect(observed).To(Equal(got.GetGeneration()), "%s %s reconciled", got.GetKind(), got.GetName())
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	var ready map[string]any
	for _, c := range conds {
		if c.(map[string]any)["type"] == "Ready" {
			ready = c.(map[string]any)
		}
	}
	g.Expect(ready).NotTo(BeNil(), "%s %s has a Ready condition", got.GetKind(), got.GetName())
	g.Expect(ready["reason"]).NotTo(BeElementOf("ApplyFailed", "ResourceConflict"), "%v", ready["message"])
}

// observeDeployments plays the Deployment controller, which envtest does
// not run, for every Deployment in ns that it has not seen yet.
func observeDeployments(g Gomega, c client.Client, ns string) {
	list := &appsv1.DeploymentList{}
	g.Expect(c.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		if d := &list.Items[i]; d.Status.ObservedGeneration < d.Generation {
			testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(d), 0)
		}
	}
}

// asUser is the admin config impersonating user.
func asUser(cfg *rest.Config, user string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	return c
}

// TestEditorAndViewerRolesServeANamespaceTeam binds each kind's editor and
// viewer roles in one namespace, as the built-in edit and view roles
// aggregate them, and acts as those users: the editor creates the sample
// and, where the kind has a scale subresource, runs what kubectl scale
// does; the viewer reads both and changes neither.
func TestEditorAndViewerRolesServeANamespaceTeam(t *testing.T) {
	env := testenv.Get(t)
	g := NewWithT(t)
	o := buildDefault(t)
	applyRBAC(t, env, o)
	ctx := context.Background()
	ns := env.Namespace(t)
	const editorUser, viewerUser = "team-editor", "team-viewer"
	for _, d := range controllers.All() {
		for user, role := range map[string]string{editorUser: "-editor-role", viewerUser: "-viewer-role"} {
			rb := &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: d.Name + role + "-" + user},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: prefix + d.Name + role},
				Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
			}
			g.Expect(env.Client.Create(ctx, rb)).To(Succeed())
		}
	}
	editor, err := client.New(asUser(env.Config, editorUser), client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	viewer, err := client.New(asUser(env.Config, viewerUser), client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	samples := samplesFor(t, env.Scheme, controllers.All())
	g.Expect(samples).NotTo(BeEmpty())
	scaled := 0
	for _, s := range samples {
		s.SetNamespace(ns)
		t.Run(s.GetKind(), func(t *testing.T) {
			g := NewWithT(t)
			err := viewer.Create(ctx, s.DeepCopy())
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the viewer may not create: %v", err)
			g.Expect(editor.Create(ctx, s)).To(Succeed())
			g.Expect(viewer.Get(ctx, client.ObjectKeyFromObject(s), s.DeepCopy())).To(Succeed())
			if !hasScale(g, env.Client, s) {
				return
			}
			scaled++
			newScale := func() *unstructured.Unstructured {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
				return u
			}
			for _, c := range []client.Client{editor, viewer} {
				g.Expect(c.SubResource("scale").Get(ctx, s, newScale())).To(Succeed(), "kubectl get --subresource=scale")
			}
			scale := newScale()
			g.Expect(editor.SubResource("scale").Get(ctx, s, scale)).To(Succeed())
			g.Expect(unstructured.SetNestedField(scale.Object, int64(2), "spec", "replicas")).To(Succeed())
			err = viewer.SubResource("scale").Update(ctx, s, client.WithSubResourceBody(scale.DeepCopy()))
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the viewer may not scale: %v", err)
			g.Expect(editor.SubResource("scale").Update(ctx, s, client.WithSubResourceBody(scale))).To(Succeed(), "kubectl scale --replicas=2")
			got := s.DeepCopy()
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
			size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
			g.Expect(size).To(Equal(int64(2)))
		})
	}
	g.Expect(scaled).To(BeNumerically(">", 0), "some kind has a scale subresource")
}

// hasScale reports whether the CRD of obj serves a scale subresource in
// obj's version.
func hasScale(g Gomega, c client.Client, obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList"))
	g.Expect(c.List(context.Background(), list)).To(Succeed())
	for _, u := range list.Items {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd)).To(Succeed())
		if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gvk.Version {
				return v.Subresources != nil && v.Subresources.Scale != nil
			}
		}
	}
	return false
}

// TestNamespaceScopedModeNeedsOnlyRoles installs the chart's identity and
// roles with watchNamespaces (its controller roles bound only in the
// watched namespaces, with RoleBindings) and runs every controller as
// its ServiceAccount with the chart's --watch-namespaces: the samples
// there are reconciled, one elsewhere is never touched, and no request is
// Forbidden.
func TestNamespaceScopedModeNeedsOnlyRoles(t *testing.T) {
	env := testenv.Get(t)
	watched := []string{env.Namespace(t), env.Namespace(t)}
	o := chartWatching(t, watched)
	applyRBAC(t, env, o)
	NewWithT(t).Expect(managerWatchNamespaces(o.Manager)).To(Equal(watched), "the chart's manager watches the namespaces it binds its roles in")
	expectWatchesOnly(t, env, controllers.All(), watched, env.Namespace(t))
}

// TestNamespaceScopedComponentNeedsOnlyRoles builds every controller's
// component with config/components/namespace-scoped, installs its identity
// and bindings and runs the controllers as its ServiceAccount with the
// flag it renders: the manager's own namespace is reconciled, another is
// never touched, and no request is Forbidden.
func TestNamespaceScopedComponentNeedsOnlyRoles(t *testing.T) {
	env := testenv.Get(t)
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	k := overlay.Kustomization{Resources: []string{"config/manager"}}
	for _, d := range controllers.All() {
		k.Components = append(k.Components, filepath.Join("config", "components", d.Name))
	}
	k.Components = append(k.Components, filepath.Join("config", "components", "namespace-scoped"))
	objs, err := k.Build(root)
	g.Expect(err).NotTo(HaveOccurred())
	o := decode(t, filepath.Join(root, "config", "components", "namespace-scoped"), objs)
	applyRBAC(t, env, o)
	g.Expect(managerWatchNamespaces(o.Manager)).To(Equal([]string{namespace}), "the manager watches its own namespace")
	expectWatchesOnly(t, env, controllers.All(), []string{namespace}, env.Namespace(t))
}

// managerWatchNamespaces is what the manager container of d watches, as
// cmd/manager reads it: the last --watch-namespaces, else
// $WATCH_NAMESPACE, with $(VAR) in arguments and the downward API resolved
// as the kubelet resolves them for a pod of d.
func managerWatchNamespaces(d *appsv1.Deployment) []string {
	c := d.Spec.Template.Spec.Containers[0]
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil:
			path := e.ValueFrom.FieldRef.FieldPath
			if path == "metadata.namespace" {
				vars[e.Name] = d.Namespace
			} else if key, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
				// An absent annotation is an empty variable.
				vars[e.Name] = d.Spec.Template.Annotations[strings.TrimSuffix(key, "']")]
			}
		}
	}
	list, flagged := "", false
	for _, arg := range c.Args {
		if v, ok := strings.CutPrefix(arg, "--watch-namespaces="); ok {
			list, flagged = kubeletVar.ReplaceAllStringFunc(v, func(ref string) string {
				if v, ok := vars[ref[2:len(ref)-1]]; ok {
					return v
				}
				return ref
			}), true
		}
	}
	if !flagged {
		list = vars[manager.WatchNamespaceEnv]
	}
	return manager.SplitNamespaces(list)
}

// kubeletVar is a $(VAR) reference in a container's arguments.
var kubeletVar = regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_]*\)`)

// expectWatchesOnly runs the enabled controllers as the manager's
// ServiceAccount, under the RBAC the test applied, watching watched: their
// samples there are reconciled, those in elsewhere are never touched,
// the identity may not even list Deployments in elsewhere (its roles are
// bound there by no binding), and no request is Forbidden.
func expectWatchesOnly(t *testing.T, env *testenv.Env, enabled []reconciler.Descriptor, watched []string, elsewhere string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	cfg, forbidden := testenv.CountForbidden(asManager(env.Config))
	env.StartManager(t, testenv.ManagerOptions{Config: cfg, Controllers: enabled, WatchNamespaces: watched}, func(mgr ctrl.Manager) error {
		for _, d := range enabled {
			// The controllers with caches of their own (TDSet's scale
			// targets) watch the manager cache's namespaces.
			if err := d.Setup(mgr, manager.OptionsFromEnv(d)); err != nil {
				return err
			}
		}
		return nil
	})
	var reconciled, ignored []*unstructured.Unstructured
	for _, ns := range append(slices.Clone(watched), elsewhere) {
		for _, s := range samplesFor(t, env.Scheme, enabled) {
			s.SetNamespace(ns)
			g.Expect(env.Client.Create(ctx, s)).To(Succeed(), "sample %s in %s", s.GetName(), ns)
			if ns == elsewhere {
				ignored = append(ignored, s)
			} else {
				reconciled = append(reconciled, s)
			}
		}
	}
	// Before the manager stops, which removes their finalizers: a watched
	// namespace may be the manager's own, which the next test shares.
	t.Cleanup(func() {
		g := NewWithT(t)
		for _, s := range reconciled {
			g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, s))).To(Succeed())
		}
		for _, s := range reconciled {
			g.Eventually(func() error {
				return env.Client.Get(ctx, client.ObjectKeyFromObject(s), s.DeepCopy())
			}).Should(Satisfy(apierrors.IsNotFound), "%s %s deleted", s.GetKind(), s.GetName())
		}
	})
	for _, s := range reconciled {
		g.Eventually(func(g Gomega) { expectReconciled(g, env.Client, s) }).Should(Succeed())
	}
	g.Consistently(func(g Gomega) {
		for _, s := range ignored {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(s.GroupVersionKind())
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
			g.Expect(got.Object["status"]).To(BeNil(), "%s %s outside the watched namespaces has no status", got.GetKind(), got.GetName())
			g.Expect(got.GetFinalizers()).To(BeEmpty())
		}
		children := &appsv1.DeploymentList{}
		g.Expect(env.Client.List(ctx, children, client.InNamespace(elsewhere))).To(Succeed())
		g.Expect(children.Items).To(BeEmpty(), "no child outside the watched namespaces")
	}, 3*time.Second).Should(Succeed())
	g.Expect(forbidden.Requests()).To(BeEmpty(), "requests the Roles forbade")

	c, err := client.New(asManager(env.Config), client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	err = c.List(ctx, &appsv1.DeploymentList{}, client.InNamespace(elsewhere))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the manager's identity lists Deployments outside its namespaces: %v", err)
}

// chartWatching renders dist/chart, with its Namespace, in the
// namespace-scoped mode for namespaces.
func chartWatching(t *testing.T, namespaces []string) *Overlay {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	helm := reporoottest.RequireTool(t, root, helmchart.BinaryEnv, helmchart.BinaryName)
	dir := filepath.Join(root, "dist", "chart")
	objs, err := helmchart.Template(helm, dir, namespace, map[string]string{"namespace.create": "true"},
		"--set", "watchNamespaces={"+strings.Join(namespaces, ",")+"}")
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, dir, objs)
}

// buildDefault builds config/default, the overlay with every controller.
func buildDefault(t *testing.T) *Overlay {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	return build(t, filepath.Join(root, "config", "default"))
}
