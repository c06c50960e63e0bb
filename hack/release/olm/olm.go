// Package olm makes the project's OLM package from its kustomize overlay:
// a registry+v1 bundle (a ClusterServiceVersion, the CRDs and the plain
// manifests OLM accepts, plus metadata/annotations.yaml and a Dockerfile)
// from `kustomize build config/default`, the human-written base CSV and
// release list of config/manifests and the samples; and a file-based
// catalog with one olm.bundle per released version on channel stable, as
// `opm render` would write them.
//
// Generate and the catalog functions are pure, so that tests can hold them
// to the overlay and to broken upgrade graphs; Sources.Load reads the
// inputs from disk, and WriteBundle and WriteCatalog write the results.
// hack/release/cmd/olmgen is the command that `make bundle` and `make catalog` run.
package olm

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

const (
	// PackageName is the OLM package of every controller, the prefix of
	// its CSV names. TDSet's conversion webhook restricts it to
	// AllNamespaces, OLM's rule for a CSV with a conversion webhook.
	PackageName = "multi-operator"
	// NamespacedPackageName is the package of the controllers without
	// webhooks (Memcached, RedisCluster, WhaleSay), which installs in every
	// install mode: its controllers' rules are the CSV's permissions, which
	// OLM grants in each target namespace (and cluster-wide for
	// AllNamespaces).
	NamespacedPackageName = "multi-operator-namespaced"
	// ChannelName is the one channel every release goes to, and the default.
	ChannelName = "stable"
	// baseCSVFile, releasesFile and iconFile are the human-written inputs,
	// relative to the manifests directory (config/manifests).
	baseCSVFile  = "bases/multi-operator.clusterserviceversion.yaml"
	releasesFile = "releases.yaml"
	iconFile     = "icon.svg"
)

// CSVName is the name of the CSV (and of the bundle) of version.
func CSVName(version string) string { return CSVNameIn(PackageName, version) }

// CSVNameIn is the name of the CSV of version in the package pkg.
func CSVNameIn(pkg, version string) string { return pkg + ".v" + version }

// Input is everything a bundle is made of.
type Input struct {
	// Objects are the overlay's objects in kustomize's order, with the
	// manager image of the release.
	Objects []*unstructured.Unstructured
	// Base is the human-written CSV: descriptions, links, owned CRDs'
	// descriptors and so on.
	Base *v1alpha1.ClusterServiceVersion
	// Icon is the SVG shown in catalogs.
	Icon []byte
	// Samples become alm-examples, in order.
	Samples []*unstructured.Unstructured
	// Version is the release, without a leading v.
	Version semver.Version
	// Replaces is the CSV this one upgrades, empty for none.
	Replaces string
	// CreatedAt is the release date as the CSV's createdAt annotation
	// wants it, fixed per version so that a regeneration changes nothing.
	CreatedAt string
	// Package is the OLM package; empty means PackageName.
	Package string
	// Namespaced makes the CSV support every install mode, and keeps the
	// samples of kinds it does not own out of alm-examples.
	Namespaced bool
}

// Sources say where Load finds the inputs of a bundle. Relative paths are
// relative to Root.
type Sources struct {
	// Root is the repository root, against which kustomize resolves.
	Root string
	// Overlay is the kustomization to package, such as config/default.
	Overlay string
	// Manifests holds the base CSV, releases.yaml and icon.svg.
	Manifests string
	// Samples holds the custom resources for alm-examples.
	Samples string
	// Components, when set, are added to Overlay, which then gets the
	// overlays' namespace and name prefix (config/manager has neither).
	Components []string
	// Package is the OLM package; empty means PackageName.
	Package string
	// Since is the package's first release, whose bundle replaces none;
	// empty means the first of releases.yaml.
	Since string
	// Namespaced is Input.Namespaced.
	Namespaced bool
}

// DefaultSources are the sources of `make bundle` in the repository at root.
func DefaultSources(root string) Sources {
	return Sources{Root: root, Overlay: "config/default", Manifests: "config/manifests", Samples: "samples"}
}

// NamespacedSources are the sources of `make bundle-namespaced`: the
// controllers without webhooks, with the namespace-scoped component's
// RoleBindings, which make their rules the CSV's permissions. The
// component's --watch-namespaces is left out: OLM passes the target
// namespaces in olm.targetNamespaces, which the Deployment reads into
// WATCH_NAMESPACE.
func NamespacedSources(root string) Sources {
	s := DefaultSources(root)
	s.Overlay = "config/manager"
	for _, c := range []string{"memcached", "rediscluster", "redisclusterbackup", "redisclusterbackupschedule", "whalesay", "namespace-scoped/rolebindings"} {
		s.Components = append(s.Components, filepath.Join("config", "components", c))
	}
	s.Package, s.Since, s.Namespaced = NamespacedPackageName, "0.2.0", true
	return s
}

// AutoReplaces is the replaces of Load that takes the release listed before
// version in releases.yaml.
const AutoReplaces = "auto"

// Build loads version's inputs (see Load), generates its bundle and
// renders the bundle's files: what the bundle generator and the release
// writer both do.
func (s Sources) Build(version, image, replaces string) (*Bundle, map[string][]byte, error) {
	in, err := s.Load(version, image, replaces)
	if err != nil {
		return nil, nil, err
	}
	b, err := Generate(in)
	if err != nil {
		return nil, nil, err
	}
	files, err := b.Files()
	if err != nil {
		return nil, nil, err
	}
	return b, files, nil
}

// Load reads the inputs of version's bundle, whose Deployment runs image.
// replaces is the CSV name it upgrades, "" for none or AutoReplaces.
func (s Sources) Load(version, image, replaces string) (Input, error) {
	v, err := semver.Parse(version)
	if err != nil {
		return Input{}, fmt.Errorf("version %q: %w", version, err)
	}
	releases, err := LoadReleases(s.path(s.Manifests, releasesFile))
	if err != nil {
		return Input{}, err
	}
	rel, ok := releases.Find(v)
	if !ok {
		return Input{}, fmt.Errorf("version %s is not in %s: add it with its release date", v, s.path(s.Manifests, releasesFile))
	}
	pkg := cmp.Or(s.Package, PackageName)
	var since semver.Version
	if s.Since != "" {
		if since, err = semver.Parse(s.Since); err != nil {
			return Input{}, fmt.Errorf("since %q: %w", s.Since, err)
		}
		if v.LT(since) {
			return Input{}, fmt.Errorf("package %s starts at %s, after %s", pkg, since, v)
		}
	}
	if replaces == AutoReplaces {
		replaces = ""
		if prev, ok := releases.Previous(v); ok && prev.Version.GTE(since) {
			replaces = CSVNameIn(pkg, prev.Version.String())
		}
	}
	in := Input{Version: v, Replaces: replaces, CreatedAt: rel.CreatedAt(), Package: pkg, Namespaced: s.Namespaced}
	if in.Base, err = loadBase(s.path(s.Manifests, baseCSVFile)); err != nil {
		return Input{}, err
	}
	if in.Icon, err = os.ReadFile(s.path(s.Manifests, iconFile)); err != nil {
		return Input{}, err
	}
	if in.Samples, err = loadSamples(s.path(s.Samples)); err != nil {
		return Input{}, err
	}
	in.Objects, err = s.build(image)
	return in, err
}

// path joins elems onto Root unless the first is absolute.
func (s Sources) path(elems ...string) string {
	p := filepath.Join(elems...)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.Root, p)
}

// build runs kustomize on the overlay with the manager image replaced, as
// `make build-installer IMG=...` does.
func (s Sources) build(image string) ([]*unstructured.Unstructured, error) {
	dir, err := filepath.Rel(s.Root, s.path(s.Overlay))
	if err != nil {
		return nil, err
	}
	return overlay.Kustomization{Resources: []string{dir}, Components: s.Components, Image: image, Bare: len(s.Components) == 0}.Build(s.Root)
}

// loadBase reads the base CSV.
func loadBase(path string) (*v1alpha1.ClusterServiceVersion, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(raw, csv); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return csv, nil
}

// loadSamples reads every object of every YAML file in dir, files in name
// order, but Namespaces: a sample's namespace is what kubectl apply -f
// samples/ needs, and the examples of a CSV name none.
func loadSamples(dir string) ([]*unstructured.Unstructured, error) {
	objs, err := overlay.DecodeDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetAPIVersion() != "v1" || o.GetKind() != "Namespace" {
			out = append(out, o)
		}
	}
	return out, nil
}

// fileName is an object's file name in a bundle, as operator-sdk names
// them: <name>_<group>_<version>_<kind>.yaml.
func fileName(o *unstructured.Unstructured) string {
	gv := strings.ReplaceAll(o.GetAPIVersion(), "/", "_")
	return fmt.Sprintf("%s_%s_%s.yaml", o.GetName(), gv, strings.ToLower(o.GetKind()))
}
