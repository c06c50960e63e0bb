// Package deploy tests the kustomize overlays users deploy: what each one
// installs, and that its RBAC is enough for its controllers and no more.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/pkg/manager"
)

const (
	namespace     = overlay.Namespace
	prefix        = overlay.NamePrefix
	serviceAcount = prefix + "controller-manager"
)

// Overlay is one built kustomization, decoded into the parts the tests check.
type Overlay struct {
	Dir        string
	Objects    []map[string]any
	Manager    *appsv1.Deployment
	CRDs       []string
	Roles      map[string]*rbacv1.ClusterRole
	Bindings   []rbacv1.ClusterRoleBinding
	Components []string
	YAML       []byte
}

// overlayDirs lists config/default and every folder under config/overlays,
// so a new overlay is covered without editing the tests.
func overlayDirs(t *testing.T) []string {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "config", "overlays", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays under config/overlays: %v", err)
	}
	return append(dirs, filepath.Join(root, "config", "default"))
}

func build(t *testing.T, dir string) *Overlay {
	t.Helper()
	g := NewWithT(t)
	objs, err := overlay.Build(dir)
	g.Expect(err).NotTo(HaveOccurred())
	return decode(t, dir, objs)
}

// decode sorts the objects of a build into the parts the tests check.
func decode(t *testing.T, dir string, objs []*unstructured.Unstructured) *Overlay {
	t.Helper()
	g := NewWithT(t)
	o := &Overlay{Dir: dir, Roles: map[string]*rbacv1.ClusterRole{}, YAML: stream(t, objs)}
	for _, res := range objs {
		o.Objects = append(o.Objects, res.Object)
		raw, err := yaml.Marshal(res.Object)
		g.Expect(err).NotTo(HaveOccurred())
		switch res.GetKind() {
		case "Deployment":
			g.Expect(o.Manager).To(BeNil(), "one manager Deployment")
			o.Manager = &appsv1.Deployment{}
			g.Expect(yaml.UnmarshalStrict(raw, o.Manager)).To(Succeed())
		case "CustomResourceDefinition":
			o.CRDs = append(o.CRDs, res.GetName())
		case "ClusterRole":
			role := &rbacv1.ClusterRole{}
			g.Expect(yaml.UnmarshalStrict(raw, role)).To(Succeed())
			o.Roles[role.Name] = role
		case "ClusterRoleBinding":
			b := rbacv1.ClusterRoleBinding{}
			g.Expect(yaml.UnmarshalStrict(raw, &b)).To(Succeed())
			o.Bindings = append(o.Bindings, b)
		}
	}
	g.Expect(o.Manager).NotTo(BeNil(), "%s has the manager Deployment", dir)
	for _, arg := range o.Manager.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(arg, "--controllers="); ok {
			o.Components = append(o.Components, strings.Split(v, ",")...)
		}
	}
	return o
}

// managerRules are the rules granted to the manager's ServiceAccount by
// ClusterRoleBindings, by role.
func (o *Overlay) boundRoles() []string {
	var names []string
	for _, b := range o.Bindings {
		for _, s := range b.Subjects {
			if s.Kind == "ServiceAccount" && s.Name == serviceAcount && s.Namespace == namespace {
				names = append(names, b.RoleRef.Name)
			}
		}
	}
	return names
}

func (o *Overlay) grants(group, resource string) bool {
	for _, name := range o.boundRoles() {
		role := o.Roles[name]
		if role == nil {
			continue
		}
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && (slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) {
				return true
			}
		}
	}
	return false
}

func TestOverlaysInstallExactlyTheirControllers(t *testing.T) {
	registry := controllers.All()
	scheme := runtime.NewScheme()
	for _, d := range registry {
		NewWithT(t).Expect(d.AddToScheme(scheme)).To(Succeed())
	}
	for _, dir := range overlayDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g := NewWithT(t)
			o := build(t, dir)
			g.Expect(o.Components).NotTo(BeEmpty(), "the overlay enables controllers with --controllers")
			enabled, _, err := manager.Select(registry, o.Components)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(manager.Names(enabled)).To(ConsistOf(o.Components), "each flag names one controller")

			var wantCRDs, wantRoles []string
			for _, d := range enabled {
				// The controller's own kind and the kinds it reads.
				for _, obj := range append([]client.Object{d.For}, d.Read...) {
					name, err := manager.CRDName(obj, scheme)
					g.Expect(err).NotTo(HaveOccurred())
					wantCRDs = append(wantCRDs, name)
				}
				wantRoles = append(wantRoles, prefix+d.Name+"-manager-role")
			}
			// A controller with webhooks brings the webhook server, whose
			// certificate needs its own role.
			if len(manager.WithWebhooks(enabled)) > 0 {
				wantRoles = append(wantRoles, prefix+"webhook-cert-role")
			}
			g.Expect(o.CRDs).To(ConsistOf(wantCRDs))
			g.Expect(o.boundRoles()).To(ConsistOf(append(wantRoles, prefix+"metrics-auth-role")))
			for _, role := range o.boundRoles() {
				g.Expect(o.Roles).To(HaveKey(role), "every bound role is in the overlay")
			}
			// Each CRD comes with a viewer and an editor role, aggregated into
			// the built-in view, edit and admin roles.
			for _, d := range enabled {
				viewer, editor := o.Roles[prefix+d.Name+"-viewer-role"], o.Roles[prefix+d.Name+"-editor-role"]
				g.Expect(viewer).NotTo(BeNil(), "%s viewer role", d.Name)
				g.Expect(editor).NotTo(BeNil(), "%s editor role", d.Name)
				g.Expect(viewer.Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-view", "true"))
				g.Expect(editor.Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-edit", "true"))
				g.Expect(editor.Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-admin", "true"))
				crd, _ := manager.CRDName(d.For, scheme)
				plural := strings.SplitN(crd, ".", 2)[0]
				g.Expect(viewer.Rules[0].Resources).To(ContainElement(plural))
				g.Expect(viewer.Rules[0].Verbs).NotTo(ContainElement("create"))
				g.Expect(editor.Rules[0].Resources).To(ContainElement(plural))
				g.Expect(editor.Rules[0].Verbs).To(ContainElements("create", "update", "delete"))
			}
			if filepath.Base(dir) == "default" {
				g.Expect(manager.Names(enabled)).To(ConsistOf(manager.Names(registry)), "config/default enables every controller")
			}
		})
	}
}

func TestOverlaysGrantLeastPrivilege(t *testing.T) {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	for overlay, denied := range map[string][][2]string{
		"whalesay": {{"apps", "deployments"}, {"apps", "statefulsets"}, {"", "services"}},
		// TDSet may scale StatefulSets (spec.scaleTargetRef), not run them.
		"tdset": {{"batch", "jobs"}, {"apps", "replicasets"}},
	} {
		t.Run(overlay, func(t *testing.T) {
			o := build(t, filepath.Join(root, "config", "overlays", overlay))
			for _, gr := range denied {
				NewWithT(t).Expect(o.grants(gr[0], gr[1])).To(BeFalse(), "%s grants %v", overlay, gr)
			}
		})
	}
}

func TestOverlaysPlaceObjectsAndPassRestrictedPodSecurity(t *testing.T) {
	clusterScoped := map[string]bool{"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true, "ValidatingWebhookConfiguration": true}
	for _, dir := range overlayDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g := NewWithT(t)
			o := build(t, dir)
			for _, obj := range o.Objects {
				kind := obj["kind"].(string)
				meta := obj["metadata"].(map[string]any)
				if admissionKinds[kind] {
					// Cluster-scoped, but kustomize does not know it and sets
					// the namespace, which the API server drops.
					continue
				}
				if clusterScoped[kind] {
					g.Expect(meta).NotTo(HaveKey("namespace"), "%s %s", kind, meta["name"])
					continue
				}
				g.Expect(meta).To(HaveKeyWithValue("namespace", namespace), "%s %s", kind, meta["name"])
			}
			pod := o.Manager.Spec.Template
			g.Expect(overlay.RestrictedViolations(&pod)).To(BeEmpty(), "restricted Pod Security")
			ctr := pod.Spec.Containers[0]
			g.Expect(ctr.Resources.Requests).To(HaveKey(corev1.ResourceMemory))
			g.Expect(ctr.Resources.Limits).To(HaveKey(corev1.ResourceMemory))
			g.Expect(ctr.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
			g.Expect(ctr.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
			g.Expect(ctr.Args).To(ContainElement("--leader-elect"))
			g.Expect(pod.Spec.ServiceAccountName).To(Equal(serviceAcount))
		})
	}
}

// stream is objects as one multi-document YAML stream.
func stream(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	docs := make([]string, len(objs))
	for i, o := range objs {
		doc, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = string(doc)
	}
	return []byte(strings.Join(docs, "---\n"))
}

// documents decodes a multi-document YAML stream into canonical YAML
// documents, sorted for comparison.
func documents(t *testing.T, stream []byte) []string {
	objs, err := overlay.Decode(stream)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]string, len(objs))
	for i, o := range objs {
		canonical, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = string(canonical)
	}
	slices.Sort(docs)
	return docs
}

// TestOverlaysBuildWithKubectl builds every overlay with kubectl's own
// kustomize too, the way users run `kubectl apply -k`.
func TestOverlaysBuildWithKubectl(t *testing.T) {
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		root, _ := reporoot.Find()
		found, _ := filepath.Glob(filepath.Join(root, "bin", "k8s-v*", "kubectl"))
		if len(found) == 0 {
			t.Skip("no kubectl: `make test` builds one into bin/")
		}
		kubectl = found[len(found)-1]
	}
	for _, dir := range overlayDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g := NewWithT(t)
			out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), string(out))
			g.Expect(documents(t, out)).To(Equal(documents(t, build(t, dir).YAML)))
		})
	}
}

// TestOptionalComponentsCompose adds the optional components to an overlay,
// the way the README shows, and checks they target the manager.
func TestOptionalComponentsCompose(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := overlay.Kustomization{
		Resources:  []string{"config/manager"},
		Components: []string{"config/components/whalesay", "config/components/prometheus", "config/components/network-policy"},
	}.Build(root)
	g.Expect(err).NotTo(HaveOccurred())
	o := decode(t, "config/manager with optional components", objs)
	kinds := map[string]map[string]any{}
	for _, obj := range o.Objects {
		kinds[obj["kind"].(string)] = obj
	}
	g.Expect(kinds).To(HaveKey("ServiceMonitor"))
	g.Expect(kinds).To(HaveKey("NetworkPolicy"))
	podLabels := o.Manager.Spec.Template.Labels
	policySelector := kinds["NetworkPolicy"]["spec"].(map[string]any)["podSelector"].(map[string]any)["matchLabels"].(map[string]any)
	for k, v := range policySelector {
		g.Expect(podLabels).To(HaveKeyWithValue(k, v), "the policy selects the manager pod")
	}
	svc := kinds["Service"]
	monitorSelector := kinds["ServiceMonitor"]["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	for k, v := range monitorSelector {
		g.Expect(svc["metadata"].(map[string]any)["labels"]).To(HaveKeyWithValue(k, v), "the monitor selects the metrics Service")
	}
}

// TestNetworkPolicyAdmitsWebhooksAndMetrics adds the network-policy
// component to every overlay: the manager's pods, isolated for ingress,
// still take the API server's webhook calls (whose failurePolicy Fail
// would otherwise fail every TDSet read and write) from any source, and
// the metrics port only from namespaces labelled metrics=enabled. The
// ports are read from the build, so that a moved port is caught.
func TestNetworkPolicyAdmitsWebhooksAndMetrics(t *testing.T) {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	registry := controllers.All()
	for _, dir := range overlayDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g := NewWithT(t)
			names, err := overlay.Components(dir)
			g.Expect(err).NotTo(HaveOccurred())
			k := overlay.Kustomization{Resources: []string{"config/manager"}}
			for _, c := range append(names, "network-policy") {
				k.Components = append(k.Components, filepath.Join("config", "components", c))
			}
			objs, err := k.Build(root)
			g.Expect(err).NotTo(HaveOccurred())
			checked, violations, err := overlay.ManagerIngressViolations(objs)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(violations).To(BeEmpty())
			g.Expect(checked).To(ContainElement(HavePrefix("metrics ")))
			enabled, _, err := manager.Select(registry, decode(t, dir, objs).Components)
			g.Expect(err).NotTo(HaveOccurred())
			if len(manager.WithWebhooks(enabled)) > 0 {
				g.Expect(checked).To(ContainElement(HavePrefix("webhook ")), "the webhook server's port is checked")
			}
		})
	}
}
