package olm

import (
	"encoding/json"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/multi-operator/multi-operator/hack/release/golden"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// checkedIn is dist/bundle as loaded by operator-framework/api.
func checkedIn(t *testing.T) *manifests.Bundle { return checkedInDir(t, "bundle") }

// checkedInNamespaced is dist/bundle-namespaced, the package
// multi-operator-namespaced.
func checkedInNamespaced(t *testing.T) *manifests.Bundle { return checkedInDir(t, "bundle-namespaced") }

// bundleDirs are the bundles under dist/ and their sources.
var bundleDirs = map[string]func(root string) Sources{"bundle": DefaultSources, "bundle-namespaced": NamespacedSources}

// checkedInDir is the bundle dist/<dir> as loaded by operator-framework/api.
func checkedInDir(t *testing.T, dir string) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot(t), "dist", dir))
	if err != nil || b.CSV == nil {
		t.Fatalf("loading dist/%s: %v", dir, err)
	}
	return b
}

// released is `kustomize build config/default` with the release image, as
// make bundle builds it.
func released(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	vars := makeVars(t)
	objs, err := overlay.Kustomization{Resources: []string{"config/default"}, Image: vars["RELEASE_IMAGE_REPO"] + ":v" + vars["VERSION"], Bare: true}.Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// releasedNamespaced is the kustomization of NamespacedSources with the
// release image, as make bundle builds it.
func releasedNamespaced(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	vars := makeVars(t)
	src := NamespacedSources(repoRoot(t))
	objs, err := overlay.Kustomization{Resources: []string{src.Overlay}, Components: src.Components, Image: vars["RELEASE_IMAGE_REPO"] + ":v" + vars["VERSION"]}.Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// ofKind are the objects of a kind, converted to T.
func ofKind[T any](g *WithT, objs []*unstructured.Unstructured, kind string) map[string]*T {
	out := map[string]*T{}
	for _, o := range objs {
		if o.GetKind() == kind {
			t := new(T)
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, t)).To(Succeed())
			out[o.GetName()] = t
		}
	}
	return out
}

// TestCSVInstallsTheOverlay holds the checked-in CSV to the overlay: its
// Deployment is the overlay's, field for field; its clusterPermissions are
// the rules of the ClusterRoles bound to the manager's ServiceAccount and
// its permissions those of the bound Roles; and the bundle's CRDs are the
// overlay's, each served version owned by the CSV.
func TestCSVInstallsTheOverlay(t *testing.T) {
	g := NewWithT(t)
	objs := released(t)
	b := checkedIn(t)
	strategy := b.CSV.Spec.InstallStrategy.StrategySpec

	deployments := ofKind[appsv1.Deployment](g, objs, "Deployment")
	g.Expect(strategy.DeploymentSpecs).To(HaveLen(len(deployments)))
	for _, d := range strategy.DeploymentSpecs {
		want := deployments[d.Name]
		g.Expect(want).NotTo(BeNil(), "Deployment %s is the overlay's", d.Name)
		g.Expect(equality.Semantic.DeepEqual(d.Spec, want.Spec)).To(BeTrue(), "the spec of %s is the overlay's", d.Name)
		g.Expect(map[string]string(d.Label)).To(Equal(want.Labels))
	}
	sa := deployments[strategy.DeploymentSpecs[0].Name].Spec.Template.Spec.ServiceAccountName
	g.Expect(strategy.ClusterPermissions).To(ConsistOf(v1alpha1.StrategyDeploymentPermissions{
		ServiceAccountName: sa, Rules: boundRules(g, objs, "ClusterRoleBinding", "ClusterRole", sa),
	}))
	g.Expect(strategy.Permissions).To(ConsistOf(v1alpha1.StrategyDeploymentPermissions{
		ServiceAccountName: sa, Rules: boundRules(g, objs, "RoleBinding", "Role", sa),
	}))

	crds := ofKind[apiextensionsv1.CustomResourceDefinition](g, objs, "CustomResourceDefinition")
	g.Expect(b.V1CRDs).To(HaveLen(len(crds)))
	var served []string
	for _, crd := range b.V1CRDs {
		g.Expect(equality.Semantic.DeepEqual(crd.Spec, crds[crd.Name].Spec)).To(BeTrue(), "CRD %s is the overlay's", crd.Name)
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served = append(served, crd.Name+"/"+v.Name+"/"+crd.Spec.Names.Kind)
			}
		}
	}
	var owned []string
	for _, d := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		owned = append(owned, d.Name+"/"+d.Version+"/"+d.Kind)
		g.Expect(d.DisplayName).NotTo(BeEmpty(), "%s %s has a display name", d.Name, d.Version)
		g.Expect(d.SpecDescriptors).NotTo(BeEmpty(), "%s %s has spec descriptors", d.Name, d.Version)
		// A kind without a status (Calendar) has nothing to describe there.
		if hasStatus(crds[d.Name], d.Version) {
			g.Expect(d.StatusDescriptors).NotTo(BeEmpty(), "%s %s has status descriptors", d.Name, d.Version)
		} else {
			g.Expect(d.StatusDescriptors).To(BeEmpty(), "%s %s has no status to describe", d.Name, d.Version)
		}
	}
	g.Expect(owned).To(ConsistOf(served))
}

// hasStatus reports whether version of crd has a status in its schema.
func hasStatus(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			_, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
			return ok
		}
	}
	return false
}

// boundRules are the rules of the roles of kind roleKind that bindings of
// bindingKind grant the ServiceAccount sa, in the overlay's order of roles.
func boundRules(g *WithT, objs []*unstructured.Unstructured, bindingKind, roleKind, sa string) []rbacv1.PolicyRule {
	granted := map[string]bool{}
	for _, b := range ofKind[rbacv1.RoleBinding](g, objs, bindingKind) {
		g.Expect(b.Subjects).To(ConsistOf(HaveField("Name", sa)), "binding %s binds the manager alone", b.Name)
		granted[b.RoleRef.Name] = true
	}
	var rules []rbacv1.PolicyRule
	for _, o := range objs {
		if o.GetKind() == roleKind && granted[o.GetName()] {
			role := &rbacv1.Role{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role)).To(Succeed())
			rules = append(rules, role.Rules...)
		}
	}
	g.Expect(rules).NotTo(BeEmpty())
	return rules
}

// TestEveryOverlayObjectIsPlaced: each object of the overlay is in the CSV,
// a CRD, a plain manifest, or left out for a stated reason, and the left
// out ones are exactly those OLM provides or cannot install.
func TestEveryOverlayObjectIsPlaced(t *testing.T) {
	g := NewWithT(t)
	objs := released(t)
	s, err := splitOverlay(objs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.placements).To(HaveLen(len(objs)))
	omitted := map[string]bool{}
	for _, p := range s.placements {
		if p.Fate == Omitted {
			g.Expect(p.Why).NotTo(BeEmpty())
			omitted[p.Key] = true
		}
	}
	ns, pre := overlay.Namespace, overlay.NamePrefix
	g.Expect(omitted).To(Equal(map[string]bool{
		"Namespace//" + ns: true,
		"ServiceAccount/" + ns + "/" + pre + "controller-manager":                  true,
		"Service/" + ns + "/" + pre + "webhook-service":                            true,
		"Secret/" + ns + "/" + pre + "webhook-server-cert":                         true,
		"MutatingAdmissionPolicy/" + ns + "/" + pre + "memcached-finalizer":        true,
		"MutatingAdmissionPolicyBinding/" + ns + "/" + pre + "memcached-finalizer": true,
	}))
	b := checkedIn(t)
	var kinds []string
	for _, o := range b.Objects {
		g.Expect(o.GetNamespace()).To(BeEmpty(), "OLM picks the namespace of %s", overlay.Key(o))
		kinds = append(kinds, o.GetKind())
	}
	g.Expect(kinds).To(ContainElements("Service", "PodDisruptionBudget", "ClusterRole"), "the metrics Service, the PDB and the unbound ClusterRoles")
}

// TestWebhookDefinitionsFollowTheOverlay: the validating webhook of
// config/webhook and the conversion of tdsets.schedule.rs, served by the
// manager's Deployment on its webhook port at the overlay's paths.
func TestWebhookDefinitionsFollowTheOverlay(t *testing.T) {
	g := NewWithT(t)
	csv := checkedIn(t).CSV
	deployment := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Name
	g.Expect(csv.Spec.WebhookDefinitions).To(ConsistOf(
		And(HaveField("Type", v1alpha1.ValidatingAdmissionWebhook), HaveField("GenerateName", "vtdset-v2.schedule.rs"),
			HaveField("WebhookPath", HaveValue(Equal("/validate-schedule-rs-v2-tdset"))), HaveField("Rules", HaveLen(1))),
		And(HaveField("Type", v1alpha1.ConversionWebhook), HaveField("ConversionCRDs", Equal([]string{"tdsets.schedule.rs"})),
			HaveField("WebhookPath", HaveValue(Equal("/convert")))),
	))
	for _, d := range csv.Spec.WebhookDefinitions {
		g.Expect(d.DeploymentName).To(Equal(deployment))
		g.Expect(d.ContainerPort).To(BeEquivalentTo(9443))
		g.Expect(d.TargetPort.IntValue()).To(Equal(9443))
	}
	for _, m := range csv.Spec.InstallModes {
		g.Expect(m.Supported).To(Equal(m.Type == v1alpha1.InstallModeTypeAllNamespaces), "a conversion webhook needs AllNamespaces only")
	}
}

// TestALMExamplesAreTheSamples: alm-examples parse, name only kinds the
// CSV owns, and hold every sample file's objects.
func TestALMExamplesAreTheSamples(t *testing.T) {
	g := NewWithT(t)
	csv := checkedIn(t).CSV
	var examples []unstructured.Unstructured
	g.Expect(json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples)).To(Succeed())
	samples, err := loadSamples(filepath.Join(repoRoot(t), "samples"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(examples).To(HaveLen(len(samples)))
	for i, e := range examples {
		gvk := e.GroupVersionKind()
		g.Expect(ownsKind(csv.Spec.CustomResourceDefinitions.Owned, gvk.Group, gvk.Version, gvk.Kind)).To(BeTrue(), "%s is owned", gvk)
		g.Expect(e.GetName()).To(Equal(samples[i].GetName()))
	}
}

// TestGeneratingGivesTheCheckedInBundle regenerates the bundle the way
// `make bundle` does into a temporary directory: any difference from
// dist/bundle means the package is stale.
func TestGeneratingGivesTheCheckedInBundle(t *testing.T) {
	root := repoRoot(t)
	vars := makeVars(t)
	for dir, sources := range bundleDirs {
		t.Run(dir, func(t *testing.T) {
			g := NewWithT(t)
			in, err := sources(root).Load(vars["VERSION"], vars["RELEASE_IMAGE_REPO"]+":v"+vars["VERSION"], AutoReplaces)
			g.Expect(err).NotTo(HaveOccurred())
			b, err := Generate(in)
			g.Expect(err).NotTo(HaveOccurred())
			files, err := b.Files()
			g.Expect(err).NotTo(HaveOccurred())
			out := filepath.Join(t.TempDir(), dir)
			g.Expect(WriteBundle(out, b.Package, files)).To(Succeed())
			golden.ExpectTree(g, filepath.Join(root, "dist", dir), out, "make bundle")
			golden.ExpectFile(g, filepath.Join(root, "dist", BundleDockerfileName(dir)), filepath.Join(filepath.Dir(out), BundleDockerfileName(dir)), "make bundle")
		})
	}
}

// TestNamespacedBundleSupportsEveryInstallMode holds dist/bundle-namespaced
// to its kustomization: every install mode, no webhook, the CRDs of
// Memcached, RedisCluster and WhaleSay, the Deployment's spec field for
// field (WATCH_NAMESPACE from OLM's olm.targetNamespaces, no
// --watch-namespaces), the controllers' rules and leader election's as
// permissions (which OLM grants in each target namespace), and only the
// metrics endpoint's reviews as clusterPermissions.
func TestNamespacedBundleSupportsEveryInstallMode(t *testing.T) {
	g := NewWithT(t)
	objs := releasedNamespaced(t)
	b := checkedInNamespaced(t)
	g.Expect(b.Package).To(Equal(NamespacedPackageName))
	g.Expect(b.CSV.Name).To(HavePrefix(NamespacedPackageName + ".v"))
	g.Expect(b.CSV.Spec.InstallModes).To(ConsistOf(
		v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true},
		v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: true},
		v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: true},
		v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true},
	))
	g.Expect(b.CSV.Spec.WebhookDefinitions).To(BeEmpty())
	var crds []string
	for _, crd := range b.V1CRDs {
		crds = append(crds, crd.Name)
	}
	g.Expect(crds).To(ConsistOf("memcacheds.cache.example.com", "redisclusters.cache.example.com", "redisclusterbackups.cache.example.com", "redisclusterbackupschedules.cache.example.com", "whalesays.devsectim.io"))

	strategy := b.CSV.Spec.InstallStrategy.StrategySpec
	deployments := ofKind[appsv1.Deployment](g, objs, "Deployment")
	g.Expect(strategy.DeploymentSpecs).To(HaveLen(1))
	want := deployments[strategy.DeploymentSpecs[0].Name]
	g.Expect(want).NotTo(BeNil())
	g.Expect(equality.Semantic.DeepEqual(strategy.DeploymentSpecs[0].Spec, want.Spec)).To(BeTrue(), "the Deployment is the kustomization's")
	manager := want.Spec.Template.Spec.Containers[0]
	g.Expect(manager.Args).NotTo(ContainElement(HavePrefix("--watch-namespaces")), "OLM's target namespaces decide")
	g.Expect(manager.Env).To(ContainElement(And(HaveField("Name", "WATCH_NAMESPACE"),
		HaveField("ValueFrom.FieldRef.FieldPath", "metadata.annotations['olm.targetNamespaces']"))))

	sa := want.Spec.Template.Spec.ServiceAccountName
	g.Expect(strategy.Permissions).To(ConsistOf(HaveField("ServiceAccountName", sa)))
	g.Expect(strategy.Permissions[0].Rules).To(ConsistOf(append(
		boundRules(g, objs, "RoleBinding", "Role", sa), boundRules(g, objs, "RoleBinding", "ClusterRole", sa)...)))
	g.Expect(strategy.ClusterPermissions).To(ConsistOf(v1alpha1.StrategyDeploymentPermissions{
		ServiceAccountName: sa, Rules: boundRules(g, objs, "ClusterRoleBinding", "ClusterRole", sa),
	}))
	for _, r := range strategy.ClusterPermissions[0].Rules {
		g.Expect(r.APIGroups).To(ConsistOf(BeElementOf("authentication.k8s.io", "authorization.k8s.io")), "only the metrics endpoint's reviews are cluster-wide")
	}
}

// TestNoConversionWebhookOutsideAllNamespaces is OLM's rule, on every
// bundle under dist/: a CSV with a conversion webhook supports
// AllNamespaces and no other install mode.
func TestNoConversionWebhookOutsideAllNamespaces(t *testing.T) {
	conversions := 0
	for dir := range bundleDirs {
		csv := checkedInDir(t, dir).CSV
		for _, w := range csv.Spec.WebhookDefinitions {
			if w.Type != v1alpha1.ConversionWebhook {
				continue
			}
			conversions++
			for _, m := range csv.Spec.InstallModes {
				NewWithT(t).Expect(m.Supported).To(Equal(m.Type == v1alpha1.InstallModeTypeAllNamespaces), "%s: a conversion webhook needs AllNamespaces only", dir)
			}
		}
	}
	NewWithT(t).Expect(conversions).To(Equal(1), "TDSet's, in dist/bundle")
}

// TestSelfImageIsTheManagerImage: in every bundle, checked in and
// generated for another manager image, the Memcached exporter's image
// (overlay.SelfImageEnvs) is the manager container's, and relatedImages
// lists it for mirroring.
func TestSelfImageIsTheManagerImage(t *testing.T) {
	root := repoRoot(t)
	vars := makeVars(t)
	for dir, sources := range bundleDirs {
		t.Run(dir, func(t *testing.T) {
			g := NewWithT(t)
			checkSelfImage(g, checkedInDir(t, dir).CSV, vars["RELEASE_IMAGE_REPO"]+":v"+vars["VERSION"])
			const image = "mirror.example/mo:v9.9.9"
			b, _, err := sources(root).Build(vars["VERSION"], image, AutoReplaces)
			g.Expect(err).NotTo(HaveOccurred())
			csv := &v1alpha1.ClusterServiceVersion{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(b.CSV.Object, csv)).To(Succeed())
			checkSelfImage(g, csv, image)
		})
	}
}

// checkSelfImage holds csv's Deployments and relatedImages to the manager
// image.
func checkSelfImage(g *WithT, csv *v1alpha1.ClusterServiceVersion, image string) {
	checked := 0
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		n, mismatches := overlay.SelfImageMismatches(&d.Spec.Template)
		g.Expect(mismatches).To(BeEmpty(), csv.Name)
		checked += n
	}
	g.Expect(checked).To(Equal(1), "%s runs the memcached controller", csv.Name)
	g.Expect(csv.Spec.RelatedImages).To(ContainElements(
		v1alpha1.RelatedImage{Name: "manager", Image: image},
		v1alpha1.RelatedImage{Name: "memcached-exporter", Image: image},
	), csv.Name)
}
