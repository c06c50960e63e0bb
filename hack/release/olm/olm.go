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
	// PackageName is the OLM package, the prefix of every CSV name.
	PackageName = "multi-operator"
	// ChannelName is the one channel every release goes to, and the default.
	ChannelName = "stable"
	// baseCSVFile, releasesFile and iconFile are the human-written inputs,
	// relative to the manifests directory (config/manifests).
	baseCSVFile  = "bases/multi-operator.clusterserviceversion.yaml"
	releasesFile = "releases.yaml"
	iconFile     = "icon.svg"
)

// CSVName is the name of the CSV (and of the bundle) of version.
func CSVName(version string) string { return PackageName + ".v" + version }

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
}

// DefaultSources are the sources of `make bundle` in the repository at root.
func DefaultSources(root string) Sources {
	return Sources{Root: root, Overlay: "config/default", Manifests: "config/manifests", Samples: "samples"}
}

// AutoReplaces is the replaces of Load that takes the release listed before
// version in releases.yaml.
const AutoReplaces = "auto"

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
	if replaces == AutoReplaces {
		replaces = ""
		if prev, ok := releases.Previous(v); ok {
			replaces = CSVName(prev.Version.String())
		}
	}
	in := Input{Version: v, Replaces: replaces, CreatedAt: rel.CreatedAt()}
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
	return overlay.Kustomization{Resources: []string{dir}, Image: image, Bare: true}.Build(s.Root)
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
