package olm

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/multi-operator/multi-operator/controllers"
)

// Bundle is a generated registry+v1 bundle.
type Bundle struct {
	// CSV is the ClusterServiceVersion as written.
	CSV *unstructured.Unstructured
	// CRDs are the overlay's CRDs, as kustomize built them.
	CRDs []*unstructured.Unstructured
	// Manifests are the other objects, without a namespace.
	Manifests []*unstructured.Unstructured
	// Placements say what became of every overlay object.
	Placements []Placement
	// Package is the OLM package the bundle belongs to.
	Package string
}

// managerContainer is the name of the manager's container, whose image is
// the CSV's containerImage.
const managerContainer = "manager"

// Generate makes the bundle of in.
func Generate(in Input) (*Bundle, error) {
	s, err := splitOverlay(in.Objects)
	if err != nil {
		return nil, err
	}
	pkg := cmp.Or(in.Package, PackageName)
	csv := in.Base.DeepCopy()
	csv.Name = CSVNameIn(pkg, in.Version.String())
	csv.Spec.Version = version.OperatorVersion{Version: in.Version}
	csv.Spec.Replaces = in.Replaces
	csv.Spec.Icon = []v1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString(in.Icon), MediaType: "image/svg+xml"}}
	if csv.Spec.CustomResourceDefinitions.Owned, err = ownedCRDs(s.crds, in.Base.Spec.CustomResourceDefinitions.Owned); err != nil {
		return nil, err
	}
	if csv.Spec.WebhookDefinitions, err = s.webhookDefinitions(in.Objects); err != nil {
		return nil, err
	}
	samples := in.Samples
	if in.Namespaced {
		namespaced(csv)
		samples = slices.DeleteFunc(slices.Clone(samples), func(s *unstructured.Unstructured) bool {
			gvk := s.GroupVersionKind()
			return !ownsKind(csv.Spec.CustomResourceDefinitions.Owned, gvk.Group, gvk.Version, gvk.Kind)
		})
	}
	if err := conversionNeedsAllNamespacesOnly(csv); err != nil {
		return nil, err
	}
	examples, err := almExamples(samples, csv.Spec.CustomResourceDefinitions.Owned)
	if err != nil {
		return nil, err
	}
	images, err := relatedImages(s.deployments)
	if err != nil {
		return nil, err
	}
	csv.Spec.RelatedImages = images
	csv.Annotations = union(csv.Annotations, map[string]string{
		"alm-examples":   examples,
		"createdAt":      in.CreatedAt,
		"containerImage": managerImage(images),
	})
	csv.Spec.InstallStrategy = v1alpha1.NamedInstallStrategy{
		StrategyName: v1alpha1.InstallStrategyNameDeployment,
		StrategySpec: v1alpha1.StrategyDetailsDeployment{Permissions: s.permissions, ClusterPermissions: s.clusterPermissions},
	}
	u, err := csvObject(csv, s.deployments)
	if err != nil {
		return nil, err
	}
	return &Bundle{CSV: u, CRDs: s.crds, Manifests: s.manifests, Placements: s.placements, Package: pkg}, nil
}

// namespaced makes csv the CSV of NamespacedPackageName: every install
// mode, and a name and description that say which controllers it holds.
func namespaced(csv *v1alpha1.ClusterServiceVersion) {
	csv.Spec.InstallModes = nil
	for _, m := range []v1alpha1.InstallModeType{v1alpha1.InstallModeTypeOwnNamespace, v1alpha1.InstallModeTypeSingleNamespace, v1alpha1.InstallModeTypeMultiNamespace, v1alpha1.InstallModeTypeAllNamespaces} {
		csv.Spec.InstallModes = append(csv.Spec.InstallModes, v1alpha1.InstallMode{Type: m, Supported: true})
	}
	csv.Spec.DisplayName += " (namespace-scoped)"
	const about = "Memcached, Redis Cluster and WhaleSay, the controllers without webhooks, in the namespaces an OperatorGroup targets: " +
		"their permissions are Roles in those namespaces alone (cluster-wide with AllNamespaces). TDSet, whose conversion webhook " +
		"needs all namespaces, is in the package " + PackageName + "; install one package or the other, not both."
	csv.Annotations = union(csv.Annotations, map[string]string{"description": about})
	csv.Spec.Description = about + "\n\n" + csv.Spec.Description
}

// conversionNeedsAllNamespacesOnly is OLM's rule: a CSV with a conversion
// webhook must support AllNamespaces and no other install mode (the CRD,
// and so its conversion, is cluster-wide).
func conversionNeedsAllNamespacesOnly(csv *v1alpha1.ClusterServiceVersion) error {
	if !slices.ContainsFunc(csv.Spec.WebhookDefinitions, func(w v1alpha1.WebhookDescription) bool { return w.Type == v1alpha1.ConversionWebhook }) {
		return nil
	}
	for _, m := range csv.Spec.InstallModes {
		if m.Supported != (m.Type == v1alpha1.InstallModeTypeAllNamespaces) {
			return fmt.Errorf("%s has a conversion webhook, so it must support AllNamespaces only, not %s=%t", csv.Name, m.Type, m.Supported)
		}
	}
	return nil
}

// ownedCRDs describes every served version of every CRD, with the display
// name, description and descriptors of the base CSV's entry for it.
func ownedCRDs(crds []*unstructured.Unstructured, base []v1alpha1.CRDDescription) ([]v1alpha1.CRDDescription, error) {
	var out []v1alpha1.CRDDescription
	for _, o := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd); err != nil {
			return nil, err
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			d, err := describedIn(base, crd.Name, v.Name, crd.Spec.Names.Kind)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// describedIn is the base CSV's description of a CRD version.
func describedIn(base []v1alpha1.CRDDescription, name, version, kind string) (v1alpha1.CRDDescription, error) {
	for _, d := range base {
		if d.Name != name || d.Version != version {
			continue
		}
		if d.Kind != kind {
			return d, fmt.Errorf("the base CSV calls %s %s kind %s, not %s", name, version, d.Kind, kind)
		}
		return d, nil
	}
	return v1alpha1.CRDDescription{}, fmt.Errorf("CRD %s version %s has no entry in the base CSV (%s): describe it there", name, version, baseCSVFile)
}

// almExamples is the alm-examples annotation: every sample, without a
// namespace (the console creates it where the user is), as a JSON array.
// A sample of a kind the CSV does not own fails.
func almExamples(samples []*unstructured.Unstructured, owned []v1alpha1.CRDDescription) (string, error) {
	examples := make([]map[string]any, 0, len(samples))
	for _, s := range samples {
		if !ownsKind(owned, s.GroupVersionKind().Group, s.GroupVersionKind().Version, s.GetKind()) {
			return "", fmt.Errorf("sample %s %s/%s is of no kind the CSV owns", s.GetAPIVersion(), s.GetKind(), s.GetName())
		}
		examples = append(examples, withoutNamespace(s).Object)
	}
	raw, err := json.MarshalIndent(examples, "", "  ")
	return string(raw), err
}

// ownsKind tells whether owned lists the kind in group and version.
func ownsKind(owned []v1alpha1.CRDDescription, group, version, kind string) bool {
	for _, d := range owned {
		if d.Kind == kind && d.Version == version && strings.HasSuffix(d.Name, "."+group) {
			return true
		}
	}
	return false
}

// relatedImages are the images the bundle runs, for mirroring in
// disconnected clusters: every container's image and every controller's
// operand and exporter image variable (its Descriptor's ImageEnv,
// <NAME>_IMAGE, and ExporterImageEnv) of the Deployments, by name
// (memcached, memcached-exporter). The Memcached exporter's is the
// manager's own image, listed under both names.
func relatedImages(deployments []*unstructured.Unstructured) ([]v1alpha1.RelatedImage, error) {
	operandEnvs := map[string]bool{}
	for _, d := range controllers.All() {
		for _, env := range []string{d.ImageEnv, d.ExporterImageEnv} {
			if env != "" {
				operandEnvs[env] = true
			}
		}
	}
	seen := map[string]string{}
	for _, o := range deployments {
		dep := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, dep); err != nil {
			return nil, err
		}
		for _, c := range dep.Spec.Template.Spec.Containers {
			seen[c.Name] = c.Image
			for _, e := range c.Env {
				if operandEnvs[e.Name] && e.Value != "" {
					seen[strings.ReplaceAll(strings.ToLower(strings.TrimSuffix(e.Name, "_IMAGE")), "_", "-")] = e.Value
				}
			}
		}
	}
	out := make([]v1alpha1.RelatedImage, 0, len(seen))
	for name, image := range seen {
		out = append(out, v1alpha1.RelatedImage{Name: name, Image: image})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// managerImage is the manager container's image among images.
func managerImage(images []v1alpha1.RelatedImage) string {
	for _, i := range images {
		if i.Name == managerContainer {
			return i.Image
		}
	}
	return ""
}

// union is a copy of base with add on top.
func union[V any](base, add map[string]V) map[string]V {
	out := make(map[string]V, len(base)+len(add))
	maps.Copy(out, base)
	maps.Copy(out, add)
	return out
}

// csvObject is csv as an object to write, with the Deployments' specs as
// kustomize wrote them: the typed DeploymentSpec would add empty fields
// (strategy: {}, creationTimestamp: null) that the overlay does not have.
func csvObject(csv *v1alpha1.ClusterServiceVersion, deployments []*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	csv.APIVersion = v1alpha1.SchemeGroupVersion.String()
	csv.Kind = v1alpha1.ClusterServiceVersionKind
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(csv)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	// The typed CSV writes these even when unset; a CSV without them means
	// the same and reads as operator-sdk writes it.
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if len(csv.Spec.APIServiceDefinitions.Owned)+len(csv.Spec.APIServiceDefinitions.Required) == 0 {
		unstructured.RemoveNestedField(u.Object, "spec", "apiservicedefinitions")
	}
	if !csv.Spec.Cleanup.Enabled {
		unstructured.RemoveNestedField(u.Object, "spec", "cleanup")
	}
	specs := make([]any, 0, len(deployments))
	for _, d := range deployments {
		spec := map[string]any{"name": d.GetName(), "spec": d.Object["spec"]}
		if l, _, _ := unstructured.NestedMap(d.Object, "metadata", "labels"); len(l) > 0 {
			spec["label"] = l
		}
		specs = append(specs, spec)
	}
	return u, unstructured.SetNestedSlice(u.Object, specs, "spec", "install", "spec", "deployments")
}
