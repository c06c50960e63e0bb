package helmchart_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/release/golden"
	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/kubeversions"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// The chart is compared with overlays built with this image.
const (
	testImageRepo = "registry.example/multi-operator"
	testImageTag  = "v9.9.9"
)

// chartDir is dist/chart, and the helm binary; the test fails under CI
// when helm is missing, and is skipped elsewhere.
func chartDir(t *testing.T) (root, dir, helm string) {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	helm = helmchart.Binary(root)
	if helm == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no helm under bin/: CI runs `make tools` first")
		}
		t.Skip("no helm under bin/; `make tools` builds it")
	}
	return root, filepath.Join(root, "dist", "chart"), helm
}

func TestCheckedInChartIsGenerated(t *testing.T) {
	g := NewWithT(t)
	root, dir, _ := chartDir(t)
	chart, err := helmchart.Generate(root, helmchart.Options{Version: chartVersion(t, dir), ImageRepository: valuesImageRepo(t, dir)})
	g.Expect(err).NotTo(HaveOccurred())
	tmp := t.TempDir()
	g.Expect(chart.Write(tmp)).To(Succeed())
	golden.ExpectTree(g, dir, tmp, "make helm")
}

func chartVersion(t *testing.T, dir string) string {
	var c struct{ Version string }
	readYAML(t, filepath.Join(dir, "Chart.yaml"), &c)
	return c.Version
}

func valuesImageRepo(t *testing.T, dir string) string {
	var v struct{ Image struct{ Repository string } }
	readYAML(t, filepath.Join(dir, "values.yaml"), &v)
	return v.Image.Repository
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestChartLints(t *testing.T) {
	_, dir, helm := chartDir(t)
	out, err := exec.Command(helm, "lint", "--strict", dir).CombinedOutput()
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), "helm lint --strict:\n%s", out)
}

// rendering is one case of the chart held to a kustomization: the
// kustomization's components and the switches that match them.
type rendering struct {
	name       string
	components []string
	// dir is the overlay itself, when the case is one.
	dir string
}

// renderings are every overlay, and config/default with each optional
// component added the way the README shows.
func renderings(t *testing.T, root string) []rendering {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "config", "overlays", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays: %v", err)
	}
	dirs = append(dirs, filepath.Join(root, "config", "default"))
	var out []rendering
	for _, d := range dirs {
		out = append(out, rendering{name: filepath.Base(d), dir: d, components: overlayComponents(t, d)})
	}
	all := overlayComponents(t, filepath.Join(root, "config", "default"))
	for _, optional := range []string{"cert-manager", "prometheus", "network-policy"} {
		out = append(out, rendering{name: "default+" + optional, components: append(append([]string{}, all...), optional)})
	}
	return out
}

// overlayComponents are the components an overlay's kustomization lists.
func overlayComponents(t *testing.T, dir string) []string {
	t.Helper()
	names, err := overlay.Components(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// build is the case's kustomize output with the test image.
func (r rendering) build(t *testing.T, root string) []*unstructured.Unstructured {
	t.Helper()
	k := overlay.Kustomization{Image: testImageRepo + ":" + testImageTag}
	if r.dir != "" {
		rel, _ := filepath.Rel(root, r.dir)
		k.Resources, k.Bare = []string{rel}, true
	} else {
		k.Resources = []string{"config/manager"}
		for _, c := range r.components {
			k.Components = append(k.Components, filepath.Join("config", "components", c))
		}
	}
	objs, err := k.Build(root)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// values are the --set values of the case's switches and the test image.
func (r rendering) values(t *testing.T, root string) map[string]string {
	t.Helper()
	switches, err := helmchart.Switches(root)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{
		"image.repository": testImageRepo,
		"image.tag":        testImageTag,
		"namespace.create": "true",
	}
	for k, on := range helmchart.SwitchesFor(switches, r.components) {
		values[k] = strconv.FormatBool(on)
	}
	return values
}

// byKey indexes objects by kind, namespace and name. The chart says Helm
// manages what it renders where the overlays say kustomize does, and keeps
// its CRDs (TestCRDsAreKept), which kubectl never deletes unasked.
func byKey(objs []*unstructured.Unstructured) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, o := range objs {
		labels := o.GetLabels()
		if labels["app.kubernetes.io/managed-by"] == "Helm" {
			labels["app.kubernetes.io/managed-by"] = "kustomize"
			o.SetLabels(labels)
		}
		if anns := o.GetAnnotations(); o.GetKind() == "CustomResourceDefinition" && anns[resourcePolicy] == "keep" {
			delete(anns, resourcePolicy)
			o.SetAnnotations(anns)
		}
		m[overlay.Key(o)] = o.Object
	}
	return m
}

// TestTemplateEqualsEachOverlay renders the chart once per overlay (and
// per optional component): what it renders is what kustomize builds, and
// every pod it renders passes the restricted Pod Security Standard.
func TestTemplateEqualsEachOverlay(t *testing.T) {
	root, dir, helm := chartDir(t)
	for _, r := range renderings(t, root) {
		t.Run(r.name, func(t *testing.T) {
			g := NewWithT(t)
			rendered, err := helmchart.Template(helm, dir, overlay.Namespace, r.values(t, root))
			g.Expect(err).NotTo(HaveOccurred())
			pods := 0
			for _, o := range rendered {
				pod, err := overlay.PodTemplate(o.Object)
				g.Expect(err).NotTo(HaveOccurred())
				if pod == nil {
					continue
				}
				pods++
				g.Expect(overlay.RestrictedViolations(pod)).To(BeEmpty(), "restricted Pod Security: %s", overlay.Key(o))
			}
			g.Expect(pods).To(BeNumerically(">", 0), "the chart renders the manager")
			want, have := byKey(r.build(t, root)), byKey(rendered)
			g.Expect(sets.KeySet(have).UnsortedList()).To(ConsistOf(sets.KeySet(want).UnsortedList()), "the same objects")
			for key, obj := range want {
				g.Expect(cmp.Diff(obj, have[key])).To(BeEmpty(), "%s: kustomize (-) vs helm (+)", key)
			}
		})
	}
}

// TestNetworkPolicyAdmitsWebhooksAndMetrics renders every case with
// networkPolicy on: some NetworkPolicy admits the API server's calls to the
// webhook port from any source, and the metrics port is admitted only from
// namespaces labelled metrics=enabled (overlay.ManagerIngressViolations).
func TestNetworkPolicyAdmitsWebhooksAndMetrics(t *testing.T) {
	root, dir, helm := chartDir(t)
	seen := map[string]bool{}
	for _, r := range renderings(t, root) {
		if !slices.Contains(r.components, "network-policy") {
			r = rendering{name: r.name + "+network-policy", components: append(slices.Clone(r.components), "network-policy")}
		}
		key := strings.Join(r.components, ",")
		if seen[key] {
			continue
		}
		seen[key] = true
		t.Run(r.name, func(t *testing.T) {
			g := NewWithT(t)
			rendered, err := helmchart.Template(helm, dir, overlay.Namespace, r.values(t, root))
			g.Expect(err).NotTo(HaveOccurred())
			checked, violations, err := overlay.ManagerIngressViolations(rendered)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(violations).To(BeEmpty())
			g.Expect(checked).To(ContainElement(HavePrefix("metrics ")))
			if slices.Contains(r.components, "tdset") {
				g.Expect(checked).To(ContainElement(HavePrefix("webhook ")), "the webhook server's port is checked")
			}
		})
	}
}

// TestCRDsAreTemplates: helm installs a chart's crds/ folder once and never
// upgrades it, so the CRDs are templates (kubebuilder's helm/v2-alpha
// choice) and a controller switched off no longer renders its CRD (which
// crds.keep leaves in the cluster: TestCRDsAreKept).
func TestCRDsAreTemplates(t *testing.T) {
	g := NewWithT(t)
	root, dir, helm := chartDir(t)
	g.Expect(filepath.Join(dir, "crds")).NotTo(BeADirectory())
	controllers, err := helmchart.DefaultControllers(root)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(renderCRDs(t, helm, dir, nil)).To(HaveLen(len(controllers)), "one CRD per controller")
	off, err := helmchart.Template(helm, dir, overlay.Namespace, map[string]string{"controllers.tdset.enabled": "false"})
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range off {
		g.Expect(o.GetName()).NotTo(ContainSubstring("tdset"), "tdset switched off: %s", overlay.Key(o))
		g.Expect(o.GetKind()).NotTo(Equal("ValidatingWebhookConfiguration"))
	}
}

// resourcePolicy is the annotation whose value keep stops Helm from
// deleting a resource on uninstall, or when an upgrade or rollback no
// longer renders it.
const resourcePolicy = "helm.sh/resource-policy"

// TestCRDsAreKept: deleting a CRD deletes every custom resource of its
// kind, so by default every CRD carries helm.sh/resource-policy: keep (also
// beside cert-manager's annotation on the TDSet CRD); crds.keep=false drops
// the annotation and crds.install=false renders no CRD.
func TestCRDsAreKept(t *testing.T) {
	g := NewWithT(t)
	root, dir, helm := chartDir(t)
	controllers, err := helmchart.DefaultControllers(root)
	g.Expect(err).NotTo(HaveOccurred())
	n := len(controllers)
	for _, values := range []map[string]string{nil, {"webhook.certManager": "true"}} {
		crds := renderCRDs(t, helm, dir, values)
		g.Expect(crds).To(HaveLen(n))
		for _, crd := range crds {
			g.Expect(crd.GetAnnotations()).To(HaveKeyWithValue(resourcePolicy, "keep"), "%s with %v", crd.GetName(), values)
		}
	}
	crds := renderCRDs(t, helm, dir, map[string]string{"crds.keep": "false"})
	g.Expect(crds).To(HaveLen(n), "crds.keep=false still installs the CRDs")
	for _, crd := range crds {
		g.Expect(crd.GetAnnotations()).NotTo(HaveKey(resourcePolicy), "crds.keep=false: %s", crd.GetName())
	}
	g.Expect(renderCRDs(t, helm, dir, map[string]string{"crds.install": "false"})).To(BeEmpty(), "crds.install=false")
}

// renderCRDs are the CRDs the chart renders with values.
func renderCRDs(t *testing.T, helm, dir string, values map[string]string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := helmchart.Template(helm, dir, overlay.Namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	var crds []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		}
	}
	return crds
}

// TestValuesBeyondTheOverlays checks the values no overlay sets.
func TestValuesBeyondTheOverlays(t *testing.T) {
	g := NewWithT(t)
	_, dir, helm := chartDir(t)
	manager := func(values map[string]string) (*unstructured.Unstructured, []string) {
		objs, err := helmchart.Template(helm, dir, "ops", values)
		g.Expect(err).NotTo(HaveOccurred())
		var keys []string
		var d *unstructured.Unstructured
		for _, o := range objs {
			keys = append(keys, overlay.Key(o))
			if o.GetKind() == "Deployment" {
				d = o
			}
		}
		g.Expect(d).NotTo(BeNil())
		return d, keys
	}
	d, keys := manager(map[string]string{"leaderElection": "false", "replicas": "3", "resources.limits.memory": "1Gi"})
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	g.Expect(args).NotTo(ContainElement("--leader-elect"))
	g.Expect(strings.Join(keys, " ")).NotTo(ContainSubstring("leader-election"), "no leader election RBAC without leader election")
	g.Expect(d.Object["spec"].(map[string]any)["replicas"]).To(BeEquivalentTo(3))
	limit, _, _ := unstructured.NestedString(containers[0].(map[string]any), "resources", "limits", "memory")
	g.Expect(limit).To(Equal("1Gi"))
	g.Expect(d.GetNamespace()).To(Equal("ops"), "the release's namespace")
	g.Expect(strings.Join(keys, " ")).NotTo(ContainSubstring("Namespace//"), "no Namespace unless namespace.create")

	d, _ = manager(map[string]string{"controllers.tdset.enabled": "false"})
	g.Expect(d.Object["spec"].(map[string]any)["replicas"]).To(BeEquivalentTo(1), "one replica without webhooks")
	d, _ = manager(map[string]string{"controllers.memcached.image": "mirror.example/memcached:1"})
	containers, _, _ = unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	g.Expect(containers[0].(map[string]any)["env"]).To(ContainElement(map[string]any{"name": "MEMCACHED_IMAGE", "value": "mirror.example/memcached:1"}))
	g.Expect(containers[0].(map[string]any)["image"]).To(Equal(valuesImageRepo(t, dir)+":v"+chartVersion(t, dir)), "the tag defaults to v<appVersion>")
}

// TestKindsServedAfterTheOldestReleaseFollowTheCluster renders the chart
// for the oldest and the newest supported release: the Memcached
// admission policy, served from 1.36, is left out on the oldest (the
// controller adds the finalizer there), and Chart.yaml's kubeVersion
// admits exactly the supported releases.
func TestKindsServedAfterTheOldestReleaseFollowTheCluster(t *testing.T) {
	g := NewWithT(t)
	root, dir, helm := chartDir(t)
	supported, err := kubeversions.Read(root)
	g.Expect(err).NotTo(HaveOccurred())
	policies := func(kubeVersion string) []string {
		objs, err := helmchart.Template(helm, dir, overlay.Namespace, nil, "--kube-version", kubeVersion+".0")
		g.Expect(err).NotTo(HaveOccurred(), "Kubernetes %s", kubeVersion)
		var kinds []string
		for _, o := range objs {
			if strings.HasPrefix(o.GetKind(), "MutatingAdmissionPolicy") {
				kinds = append(kinds, o.GetKind())
			}
		}
		return kinds
	}
	g.Expect(policies(supported.Newest)).To(ConsistOf("MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"))
	g.Expect(policies(supported.Oldest)).To(BeEmpty())
	older := fmt.Sprintf("1.%d.0", kubeversions.Minor(supported.Oldest)-1)
	_, err = helmchart.Template(helm, dir, overlay.Namespace, nil, "--kube-version", older)
	g.Expect(err).To(MatchError(ContainSubstring("incompatible with Kubernetes")), "Kubernetes %s is refused", older)
}
