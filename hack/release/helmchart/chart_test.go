package helmchart_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/hack/dashboards"
	"github.com/multi-operator/multi-operator/hack/release/golden"
	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/kubeversions"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
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
	helm = reporoottest.RequireTool(t, root, helmchart.BinaryEnv, helmchart.BinaryName)
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
	for _, optional := range []string{"cert-manager", "prometheus", "network-policy", "prometheus-rules", "grafana-dashboards"} {
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
	g.Expect(renderCRDs(t, helm, dir, nil)).To(HaveLen(len(crdBases(g, root))), "every CRD of config/crd/bases")
	off, err := helmchart.Template(helm, dir, overlay.Namespace, map[string]string{"controllers.tdset.enabled": "false"})
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range off {
		g.Expect(o.GetName()).NotTo(ContainSubstring("tdset"), "tdset switched off: %s", overlay.Key(o))
		g.Expect(o.GetKind()).NotTo(Equal("ValidatingWebhookConfiguration"))
	}
}

// crdBases lists the CRDs controller-gen writes, one folder each, all of
// which the chart's defaults install: each controller's own kind and the
// kinds it reads (TDSet's calendars).
func crdBases(g *WithT, root string) []os.DirEntry {
	entries, err := os.ReadDir(filepath.Join(root, "config", "crd", "bases"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(entries).NotTo(BeEmpty())
	return entries
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
	n := len(crdBases(g, root))
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

// TestChartLints runs helm lint --strict (which also holds the values to
// values.schema.json) with the defaults and with every switch on.
func TestChartLints(t *testing.T) {
	root, dir, helm := chartDir(t)
	switches, err := helmchart.Switches(root)
	if err != nil {
		t.Fatal(err)
	}
	allOn := map[string]string{"namespace.create": "true"}
	for _, s := range switches {
		allOn[s.Value] = "true"
	}
	for name, values := range map[string]map[string]string{"defaults": nil, "every switch on": allOn} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"lint", "--strict", dir}, helmchart.SetArgs(values)...)
			out, err := exec.Command(helm, args...).CombinedOutput()
			NewWithT(t).Expect(err).NotTo(HaveOccurred(), "helm %s:\n%s", strings.Join(args, " "), out)
		})
	}
}

// valuesNamespace is where the tests of single values install the chart,
// apart from the overlays' namespace.
const valuesNamespace = "ops"

// renderWith is the chart rendered with values and more helm flags (such
// as --set-json) into valuesNamespace.
func renderWith(t *testing.T, values map[string]string, flags ...string) []*unstructured.Unstructured {
	t.Helper()
	_, dir, helm := chartDir(t)
	objs, err := helmchart.Template(helm, dir, valuesNamespace, values, flags...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// ofKind are the objects of the given kinds.
func ofKind(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

// managerPod is the manager Deployment among objs, its pod template's
// spec and its manager container.
func managerPod(t *testing.T, objs []*unstructured.Unstructured) (d *unstructured.Unstructured, pod, ctr map[string]any) {
	t.Helper()
	deployments := ofKind(objs, "Deployment")
	if len(deployments) != 1 {
		t.Fatalf("%d Deployments, want the manager's", len(deployments))
	}
	d = deployments[0]
	pod, _, _ = unstructured.NestedMap(d.Object, "spec", "template", "spec")
	containers, _ := pod["containers"].([]any)
	if len(containers) == 0 {
		t.Fatal("the manager pod has no container")
	}
	return d, pod, containers[0].(map[string]any)
}

// keys are the objects' kind/namespace/name.
func keys(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = overlay.Key(o)
	}
	return out
}

// TestValuesBeyondTheOverlays checks the values no overlay sets:
// leaderElection, replicas, resources, the release's namespace and the
// operand images; the tag defaults to v<appVersion>.
func TestValuesBeyondTheOverlays(t *testing.T) {
	g := NewWithT(t)
	_, dir, _ := chartDir(t)
	objs := renderWith(t, map[string]string{"leaderElection": "false", "replicas": "3", "resources.limits.memory": "1Gi"})
	d, _, ctr := managerPod(t, objs)
	g.Expect(ctr["args"]).NotTo(ContainElement("--leader-elect"))
	g.Expect(strings.Join(keys(objs), " ")).NotTo(ContainSubstring("leader-election"), "no leader election RBAC without leader election")
	g.Expect(d.Object["spec"].(map[string]any)["replicas"]).To(BeEquivalentTo(3))
	limit, _, _ := unstructured.NestedString(ctr, "resources", "limits", "memory")
	g.Expect(limit).To(Equal("1Gi"))
	g.Expect(d.GetNamespace()).To(Equal(valuesNamespace), "the release's namespace")
	g.Expect(strings.Join(keys(objs), " ")).NotTo(ContainSubstring("Namespace//"), "no Namespace unless namespace.create")

	d, _, _ = managerPod(t, renderWith(t, map[string]string{"controllers.tdset.enabled": "false"}))
	g.Expect(d.Object["spec"].(map[string]any)["replicas"]).To(BeEquivalentTo(1), "one replica without webhooks")
	_, _, ctr = managerPod(t, renderWith(t, map[string]string{"controllers.memcached.image": "mirror.example/memcached:1"}))
	g.Expect(ctr["env"]).To(ContainElement(map[string]any{"name": "MEMCACHED_IMAGE", "value": "mirror.example/memcached:1"}))
	_, _, ctr = managerPod(t, renderWith(t, map[string]string{"controllers.rediscluster.exporterImage": "mirror.example/redis_exporter:1"}))
	g.Expect(ctr["env"]).To(ContainElement(map[string]any{"name": "REDIS_EXPORTER_IMAGE", "value": "mirror.example/redis_exporter:1"}), "the exporter sidecar's image")
	g.Expect(ctr["env"]).To(ContainElement(HaveKeyWithValue("name", "REDIS_IMAGE")), "beside the operand's")
	g.Expect(ctr["env"]).To(ContainElement(map[string]any{"name": "REDIS_EXPORTER_SCRAPERS", "value": "metrics=enabled"}), "only namespaces labelled metrics=enabled scrape the exporters by default")
	_, _, ctr = managerPod(t, renderWith(t, map[string]string{"controllers.rediscluster.exporterScrapers": "kubernetes.io/metadata.name=monitoring"}))
	g.Expect(ctr["env"]).To(ContainElement(map[string]any{"name": "REDIS_EXPORTER_SCRAPERS", "value": "kubernetes.io/metadata.name=monitoring"}))
	g.Expect(ctr["image"]).To(Equal(valuesImageRepo(t, dir)+":v"+chartVersion(t, dir)), "the tag defaults to v<appVersion>")
	g.Expect(ctr).NotTo(HaveKey("imagePullPolicy"), "IfNotPresent, Kubernetes' default for a versioned tag, is left out as the overlays do")
}

// TestImageValues: a digest pins the image as repository:tag@digest (the
// tag kept for readers, the digest pulled); a pull policy other than IfNotPresent is rendered, and so is
// IfNotPresent for the tag latest (whose default would be Always);
// imagePullSecrets land in the pod spec.
func TestImageValues(t *testing.T) {
	g := NewWithT(t)
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	_, _, ctr := managerPod(t, renderWith(t, map[string]string{"image.repository": "mirror.example/mo", "image.tag": "v1", "image.digest": digest}))
	g.Expect(ctr["image"]).To(Equal("mirror.example/mo:v1@" + digest))
	g.Expect(ctr).NotTo(HaveKey("imagePullPolicy"))
	_, _, ctr = managerPod(t, renderWith(t, map[string]string{"image.pullPolicy": "Always"}))
	g.Expect(ctr).To(HaveKeyWithValue("imagePullPolicy", "Always"))
	_, _, ctr = managerPod(t, renderWith(t, map[string]string{"image.tag": "latest"}))
	g.Expect(ctr).To(HaveKeyWithValue("imagePullPolicy", "IfNotPresent"))
	_, pod, _ := managerPod(t, renderWith(t, nil, "--set-json", `imagePullSecrets=[{"name":"regcred"}]`))
	g.Expect(pod["imagePullSecrets"]).To(Equal([]any{map[string]any{"name": "regcred"}}))
}

// TestSelfImageFollowsTheManagerImage: the Memcached exporter's image
// (overlay.SelfImageEnvs) is the manager container's image, whichever
// image values are set (the tag's default, another repository and tag, a
// digest), never latest; controllers.memcached.exporterImage overrides it.
func TestSelfImageFollowsTheManagerImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, values := range []map[string]string{
		nil,
		{"image.repository": "mirror.example/mo", "image.tag": "v1"},
		{"image.repository": "mirror.example/mo", "image.tag": "v1", "image.digest": digest},
		{"image.digest": digest},
	} {
		g := NewWithT(t)
		_, pod, _ := managerPod(t, renderWith(t, values))
		spec := &corev1.PodTemplateSpec{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"spec": pod}, spec)).To(Succeed())
		checked, mismatches := overlay.SelfImageMismatches(spec)
		g.Expect(mismatches).To(BeEmpty(), "values %v", values)
		g.Expect(checked).To(Equal(1), "the memcached controller is on by default")
		if values["image.digest"] != "" {
			g.Expect(spec.Spec.Containers[0].Image).To(HaveSuffix("@" + digest))
		}
	}
	g := NewWithT(t)
	_, _, ctr := managerPod(t, renderWith(t, map[string]string{"controllers.memcached.exporterImage": "mirror.example/mo:v2"}))
	g.Expect(ctr["env"]).To(ContainElement(map[string]any{"name": memcached.ExporterImageEnv, "value": "mirror.example/mo:v2"}))
	_, _, ctr = managerPod(t, renderWith(t, map[string]string{"controllers.memcached.enabled": "false"}))
	g.Expect(ctr["env"]).NotTo(ContainElement(HaveKeyWithValue("name", memcached.ExporterImageEnv)), "no memcached controller, no exporter image")
}

// TestPodValues: the scheduling values land in the manager's pod spec,
// podAnnotations and podLabels in its metadata, and a podLabel named like
// a selector label leaves the selector and the pod's label as they are.
func TestPodValues(t *testing.T) {
	g := NewWithT(t)
	toleration := map[string]any{"key": "dedicated", "operator": "Equal", "value": "operators", "effect": "NoSchedule"}
	affinity := map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/os", "operator": "In", "values": []any{"linux"}}}}}}}}
	spread := map[string]any{"maxSkew": int64(1), "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
		"labelSelector": map[string]any{"matchLabels": map[string]any{"control-plane": "controller-manager"}}}
	flags := []string{}
	for name, v := range map[string]any{"tolerations": []any{toleration}, "affinity": affinity, "topologySpreadConstraints": []any{spread}} {
		flags = append(flags, "--set-json", name+"="+mustJSON(t, v))
	}
	before, _, _ := managerPod(t, renderWith(t, nil))
	d, pod, _ := managerPod(t, renderWith(t, map[string]string{
		"nodeSelector.disktype": "ssd", "priorityClassName": "system-cluster-critical",
		"podAnnotations.example\\.com/team": "platform", "podLabels.team": "platform", "podLabels.control-plane": "other",
	}, flags...))
	g.Expect(pod["nodeSelector"]).To(Equal(map[string]any{"disktype": "ssd"}))
	g.Expect(pod["tolerations"]).To(Equal([]any{toleration}))
	// Helm merges a map value into the default: the manager's own
	// anti-affinity stays beside the node affinity given.
	g.Expect(pod["affinity"]).To(HaveKeyWithValue("nodeAffinity", affinity["nodeAffinity"]))
	g.Expect(pod["affinity"]).To(HaveKey("podAntiAffinity"))
	_, replaced, _ := managerPod(t, renderWith(t, nil, "--set-json", "affinity="+mustJSON(t, affinity), "--set", "affinity.podAntiAffinity=null"))
	g.Expect(replaced["affinity"]).To(Equal(affinity), "null drops the default")
	g.Expect(pod["topologySpreadConstraints"]).To(Equal([]any{spread}))
	g.Expect(pod["priorityClassName"]).To(Equal("system-cluster-critical"))
	meta, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "metadata")
	g.Expect(meta["annotations"]).To(HaveKeyWithValue("example.com/team", "platform"))
	g.Expect(meta["annotations"]).To(HaveKeyWithValue("kubectl.kubernetes.io/default-container", "manager"), "the pod's own annotation stays")
	g.Expect(meta["labels"]).To(HaveKeyWithValue("team", "platform"))
	selector, _, _ := unstructured.NestedStringMap(d.Object, "spec", "selector", "matchLabels")
	wantSelector, _, _ := unstructured.NestedStringMap(before.Object, "spec", "selector", "matchLabels")
	g.Expect(selector).To(Equal(wantSelector), "podLabels leave the selector")
	for k, v := range selector {
		g.Expect(meta["labels"]).To(HaveKeyWithValue(k, v), "podLabels leave the selector's label %s on the pod", k)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// subjects are the ServiceAccounts (namespace/name) that the chart's
// RoleBindings and ClusterRoleBindings bind.
func subjects(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, b := range ofKind(objs, "RoleBinding", "ClusterRoleBinding") {
		list, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		for _, s := range list {
			if m := s.(map[string]any); m["kind"] == "ServiceAccount" {
				out = append(out, fmt.Sprint(m["namespace"], "/", m["name"]))
			}
		}
	}
	return out
}

// TestServiceAccountValues: by default the chart creates the ServiceAccount
// (with serviceAccount.annotations) that the Deployment runs as and every
// binding names; with serviceAccount.create=false it renders none, and the
// Deployment and every binding use serviceAccount.name.
func TestServiceAccountValues(t *testing.T) {
	g := NewWithT(t)
	objs := renderWith(t, map[string]string{"serviceAccount.annotations.example\\.com/role": "operator"})
	accounts := ofKind(objs, "ServiceAccount")
	g.Expect(accounts).To(HaveLen(1))
	g.Expect(accounts[0].GetAnnotations()).To(Equal(map[string]string{"example.com/role": "operator"}))
	_, pod, _ := managerPod(t, objs)
	g.Expect(pod["serviceAccountName"]).To(Equal(accounts[0].GetName()))
	bound := subjects(t, objs)
	g.Expect(bound).NotTo(BeEmpty())
	g.Expect(slices.Compact(slices.Sorted(slices.Values(bound)))).To(Equal([]string{valuesNamespace + "/" + accounts[0].GetName()}))

	objs = renderWith(t, map[string]string{"serviceAccount.create": "false", "serviceAccount.name": "platform-operator"})
	g.Expect(ofKind(objs, "ServiceAccount")).To(BeEmpty())
	_, pod, _ = managerPod(t, objs)
	g.Expect(pod["serviceAccountName"]).To(Equal("platform-operator"))
	g.Expect(subjects(t, objs)).To(HaveLen(len(bound)), "the same bindings")
	g.Expect(subjects(t, objs)).To(HaveEach(valuesNamespace+"/platform-operator"), "every binding names the given account")
}

// TestManagerFlagValues: unset, logLevel, logFormat and kubeAPI render no
// flag (the manager's defaults apply); set, they render the manager's zap
// and client flags; extraArgs and extraEnv follow the manager's own.
func TestManagerFlagValues(t *testing.T) {
	g := NewWithT(t)
	_, _, ctr := managerPod(t, renderWith(t, nil))
	defaultArgs, _, _ := unstructured.NestedStringSlice(ctr, "args")
	defaultEnv, _, _ := unstructured.NestedSlice(ctr, "env")
	for _, flag := range []string{"--zap-", "--kube-api-"} {
		g.Expect(defaultArgs).NotTo(ContainElement(HavePrefix(flag)))
	}
	extraEnv := map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"}
	_, _, ctr = managerPod(t, renderWith(t,
		map[string]string{"logLevel": "debug", "logFormat": "console", "kubeAPI.qps": "2.5", "kubeAPI.burst": "20", "extraArgs[0]": "--max-concurrent-reconciles=4"},
		"--set-json", "extraEnv=["+mustJSON(t, extraEnv)+"]"))
	args, _, _ := unstructured.NestedStringSlice(ctr, "args")
	g.Expect(args).To(Equal(append(slices.Clone(defaultArgs),
		"--zap-log-level=debug", "--zap-encoder=console", "--kube-api-qps=2.5", "--kube-api-burst=20", "--max-concurrent-reconciles=4")))
	env, _, _ := unstructured.NestedSlice(ctr, "env")
	g.Expect(env).To(Equal(append(slices.Clone(defaultEnv), extraEnv)))
	_, _, ctr = managerPod(t, renderWith(t, map[string]string{"kubeAPI.qps": "0"}))
	g.Expect(ctr["args"]).To(ContainElement("--kube-api-qps=0"), "0 (no client-side limit) is a value, not unset")
}

// TestPodDisruptionBudgetValues: the PodDisruptionBudget that comes with
// the tdset controller keeps minAvailable by default, takes maxUnavailable
// instead when it is set, and is left out with podDisruptionBudget.enabled=false.
func TestPodDisruptionBudgetValues(t *testing.T) {
	g := NewWithT(t)
	budget := func(values map[string]string) map[string]any {
		pdbs := ofKind(renderWith(t, values), "PodDisruptionBudget")
		g.Expect(pdbs).To(HaveLen(1), "with %v", values)
		spec, _, _ := unstructured.NestedMap(pdbs[0].Object, "spec")
		delete(spec, "selector")
		return spec
	}
	g.Expect(budget(nil)).To(Equal(map[string]any{"minAvailable": int64(1)}))
	g.Expect(budget(map[string]string{"podDisruptionBudget.minAvailable": "50%"})).To(Equal(map[string]any{"minAvailable": "50%"}))
	g.Expect(budget(map[string]string{"podDisruptionBudget.maxUnavailable": "1"})).To(Equal(map[string]any{"maxUnavailable": int64(1)}))
	g.Expect(ofKind(renderWith(t, map[string]string{"podDisruptionBudget.enabled": "false"}), "PodDisruptionBudget")).To(BeEmpty())
}

// TestServiceMonitorValues: the ServiceMonitor takes labels beside its
// own, and the scrape interval and timeout on its endpoint.
func TestServiceMonitorValues(t *testing.T) {
	g := NewWithT(t)
	plain, monitor := renderLabelled(t, g, "ServiceMonitor", "metrics.serviceMonitor",
		map[string]string{"metrics.serviceMonitor.interval": "30s", "metrics.serviceMonitor.scrapeTimeout": "10s"})
	endpoints, _, _ := unstructured.NestedSlice(plain.Object, "spec", "endpoints")
	g.Expect(endpoints[0]).NotTo(HaveKey("interval"), "Prometheus' default interval")
	endpoints, _, _ = unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	g.Expect(endpoints[0]).To(And(HaveKeyWithValue("interval", "30s"), HaveKeyWithValue("scrapeTimeout", "10s")))
}

// TestPrometheusRuleValues: the PrometheusRule takes labels beside its
// own, and its alerts' annotations keep their Prometheus templates
// ({{ $labels.name }}), which Helm would otherwise read as its own.
func TestPrometheusRuleValues(t *testing.T) {
	g := NewWithT(t)
	_, rule := renderLabelled(t, g, "PrometheusRule", "prometheusRules", nil)
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	g.Expect(groups).NotTo(BeEmpty())
	first, _, _ := unstructured.NestedSlice(groups[0].(map[string]any), "rules")
	g.Expect(first[0]).To(HaveKeyWithValue("annotations", HaveKeyWithValue("summary", ContainSubstring("{{ $labels."))))
	g.Expect(ofKind(renderWith(t, nil), "PrometheusRule")).To(BeEmpty(), "off by default")
}

// TestGrafanaDashboardValues: grafanaDashboards.enabled renders a
// ConfigMap per dashboard with the sidecar's label and the dashboard's
// JSON as hack/dashboards writes it (Grafana's {{pod}} legends untouched
// by Helm), in the release's namespace or grafanaDashboards.namespace,
// with grafanaDashboards.labels and .annotations beside its own; none
// by default.
func TestGrafanaDashboardValues(t *testing.T) {
	g := NewWithT(t)
	g.Expect(dashboardMaps(renderWith(t, nil))).To(BeEmpty(), "off by default")
	plain := dashboardMaps(renderWith(t, map[string]string{"grafanaDashboards.enabled": "true"}))
	all := dashboards.All()
	g.Expect(plain).To(HaveLen(len(all)))
	for _, d := range all {
		want, err := d.JSON()
		g.Expect(err).NotTo(HaveOccurred())
		cm := plain[overlay.NamePrefix+d.ConfigMapName()]
		g.Expect(cm).NotTo(BeNil(), d.File)
		g.Expect(cm.GetNamespace()).To(Equal(valuesNamespace))
		g.Expect(cm.GetLabels()).To(HaveKeyWithValue(dashboards.SidecarLabel, "1"))
		g.Expect(cm.GetAnnotations()).To(BeEmpty())
		data, _, _ := unstructured.NestedString(cm.Object, "data", d.File+".json")
		g.Expect(data).To(Equal(string(want)), d.File)
	}
	g.Expect(plain[overlay.NamePrefix+"grafana-dashboard-manager"].Object["data"]).To(HaveKeyWithValue("manager.json", ContainSubstring(`"legendFormat": "{{pod}}"`)))
	set := dashboardMaps(renderWith(t, map[string]string{
		"grafanaDashboards.enabled": "true", "grafanaDashboards.namespace": "monitoring",
		"grafanaDashboards.labels.team": "cache", "grafanaDashboards.labels.grafana_dashboard": "no",
		"grafanaDashboards.annotations.grafana_folder": "multi-operator",
	}))
	g.Expect(set).To(HaveLen(len(all)))
	for name, cm := range set {
		want := maps.Clone(plain[name].GetLabels())
		want["team"] = "cache"
		g.Expect(cm.GetLabels()).To(Equal(want), "the component's own labels win")
		g.Expect(cm.GetAnnotations()).To(Equal(map[string]string{"grafana_folder": "multi-operator"}))
		g.Expect(cm.GetNamespace()).To(Equal("monitoring"))
	}
}

// dashboardMaps are the ConfigMaps among objs that the Grafana sidecar
// loads, by name.
func dashboardMaps(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range ofKind(objs, "ConfigMap") {
		if _, ok := o.GetLabels()[dashboards.SidecarLabel]; ok {
			out[o.GetName()] = o
		}
	}
	return out
}

// renderLabelled renders the chart with group.enabled, the switch of the
// one object of kind, and then also with more and the label
// release=prometheus in group.labels, which the second object must carry
// beside the first's own labels (a Prometheus' selector picks it so). It
// returns the object of each render.
func renderLabelled(t *testing.T, g Gomega, kind, group string, more map[string]string) (plain, labelled *unstructured.Unstructured) {
	t.Helper()
	values := map[string]string{group + ".enabled": "true"}
	objs := ofKind(renderWith(t, values), kind)
	g.Expect(objs).To(HaveLen(1))
	plain = objs[0]
	maps.Copy(values, more)
	values[group+".labels.release"] = "prometheus"
	objs = ofKind(renderWith(t, values), kind)
	g.Expect(objs).To(HaveLen(1))
	want := maps.Clone(plain.GetLabels())
	want["release"] = "prometheus"
	g.Expect(objs[0].GetLabels()).To(Equal(want))
	return plain, objs[0]
}

// TestSchemaRefusesMistakes: values.schema.json makes helm refuse a value
// of the wrong type, one outside its enum, and one the chart does not have
// (at the top level and within a group), and admit valid ones.
func TestSchemaRefusesMistakes(t *testing.T) {
	_, dir, helm := chartDir(t)
	for _, tc := range []struct {
		set   string
		valid bool
	}{
		{"replicas=two", false},
		{"notAValue=1", false},
		{"image.tags=v1", false},
		{"image.pullPolicy=Sometimes", false},
		{"logFormat=xml", false},
		{"kubeAPI.qps=fast", false},
		{"serviceAccount.create=maybe", false},
		{"replicas=3", true},
		{"image.pullPolicy=Always", true},
		{"logFormat=console", true},
		{"kubeAPI.qps=2.5", true},
		{"podDisruptionBudget.maxUnavailable=25%", true},
	} {
		t.Run(tc.set, func(t *testing.T) {
			_, err := helmchart.Template(helm, dir, valuesNamespace, nil, "--set", tc.set)
			if tc.valid {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
			} else {
				NewWithT(t).Expect(err).To(MatchError(ContainSubstring("values don't meet the specifications of the schema")))
			}
		})
	}
}

// TestWatchNamespacesValue: the namespace-scoped mode binds each
// controller's ClusterRole with a RoleBinding in each watched namespace,
// to the same subjects, and no longer cluster-wide; the manager gets
// --watch-namespaces; a name that is no namespace's is refused.
func TestWatchNamespacesValue(t *testing.T) {
	g := NewWithT(t)
	clusterWide := map[string]*unstructured.Unstructured{}
	for _, o := range renderWith(t, nil) {
		if overlay.IsControllerRoleBinding(o) {
			clusterWide[o.GetName()] = o
		}
	}
	g.Expect(clusterWide).To(HaveLen(len(controllers.All())), "one per controller by default")

	scoped := renderWith(t, nil, "--set", "watchNamespaces={team-a,team-b}")
	perNamespace := map[string]*unstructured.Unstructured{}
	for _, o := range scoped {
		g.Expect(overlay.IsControllerRoleBinding(o)).To(BeFalse(), "%s is bound cluster-wide", o.GetName())
		if o.GetKind() == "RoleBinding" {
			perNamespace[o.GetNamespace()+"/"+o.GetName()] = o
		}
	}
	for name, crb := range clusterWide {
		for _, ns := range []string{"team-a", "team-b"} {
			rb := perNamespace[ns+"/"+name]
			g.Expect(rb).NotTo(BeNil(), "%s in %s", name, ns)
			g.Expect(rb.Object["roleRef"]).To(Equal(crb.Object["roleRef"]))
			g.Expect(rb.Object["subjects"]).To(Equal(crb.Object["subjects"]))
		}
	}
	_, _, ctr := managerPod(t, scoped)
	args, _, _ := unstructured.NestedStringSlice(ctr, "args")
	g.Expect(args).To(ContainElement("--watch-namespaces=team-a,team-b"))
	_, _, ctr = managerPod(t, renderWith(t, nil))
	args, _, _ = unstructured.NestedStringSlice(ctr, "args")
	g.Expect(args).NotTo(ContainElement(HavePrefix("--watch-namespaces")))

	_, dir, helm := chartDir(t)
	_, err := helmchart.Template(helm, dir, valuesNamespace, nil, "--set", "watchNamespaces={Team_B}")
	g.Expect(err).To(MatchError(ContainSubstring("watchNamespaces")), "not a namespace name")
}

// TestREADMEListsEveryValue: dist/chart/README.md has a row for every
// value that values.schema.json types.
func TestREADMEListsEveryValue(t *testing.T) {
	g := NewWithT(t)
	_, dir, _ := chartDir(t)
	raw, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	g.Expect(err).NotTo(HaveOccurred())
	var schema map[string]any
	g.Expect(json.Unmarshal(raw, &schema)).To(Succeed())
	var keys []string
	var walk func(prefix string, node map[string]any)
	walk = func(prefix string, node map[string]any) {
		props, ok := node["properties"].(map[string]any)
		if !ok {
			keys = append(keys, prefix)
			return
		}
		for name, child := range props {
			walk(strings.TrimPrefix(prefix+"."+name, "."), child.(map[string]any))
		}
	}
	walk("", schema)
	g.Expect(len(keys)).To(BeNumerically(">", 20))
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, k := range keys {
		g.Expect(string(readme)).To(ContainSubstring("| `"+k+"` |"), "README.md lists %s", k)
	}
}
