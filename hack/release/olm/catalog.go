package olm

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// The file-based catalog's schemas and property types, as opm writes them.
const (
	schemaPackage  = "olm.package"
	schemaChannel  = "olm.channel"
	schemaBundle   = "olm.bundle"
	propertyPkg    = "olm.package"
	propertyGVK    = "olm.gvk"
	propertyObject = "olm.bundle.object"
	// CatalogDockerfile is the catalog image's Dockerfile, beside the
	// catalog directory.
	CatalogDockerfile = "catalog.Dockerfile"
	// opmImage is the base of the catalog image, which serves it: a
	// release of opm, not :latest, so that a rebuilt catalog image serves
	// the same way.
	opmImage = "quay.io/operator-framework/opm:v1.59.0"
)

// Package is the olm.package blob.
type Package struct {
	Schema         string `json:"schema"`
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Icon           *Icon  `json:"icon,omitempty"`
}

// Icon is a package's icon.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// Channel is an olm.channel blob: its upgrade graph.
type Channel struct {
	Schema  string         `json:"schema"`
	Name    string         `json:"name"`
	Package string         `json:"package"`
	Entries []ChannelEntry `json:"entries"`
}

// ChannelEntry is a bundle in a channel and the one it upgrades.
type ChannelEntry struct {
	Name     string `json:"name"`
	Replaces string `json:"replaces,omitempty"`
}

// CatalogBundle is an olm.bundle blob.
type CatalogBundle struct {
	Schema        string                  `json:"schema"`
	Name          string                  `json:"name"`
	Package       string                  `json:"package"`
	Image         string                  `json:"image"`
	Properties    []Property              `json:"properties"`
	RelatedImages []v1alpha1.RelatedImage `json:"relatedImages,omitempty"`
}

// Property is a bundle property: a type and its value.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// Catalog is the package's file-based catalog.
type Catalog struct {
	Package  Package
	Channels []Channel
	Bundles  []CatalogBundle
}

// catalogFile is the file of the package pkg under the catalog directory.
func catalogFile(dir, pkg string) string { return filepath.Join(dir, pkg, "catalog.yaml") }

// RenderBundle is the olm.bundle of the bundle b whose image is image, as
// `opm render` makes it: the package and version, a GVK per served CRD
// version, the CSV and CRDs as olm.bundle.object, and the related images.
func RenderBundle(b *manifests.Bundle, image string) (CatalogBundle, error) {
	if b.CSV == nil {
		return CatalogBundle{}, errors.New("the bundle has no CSV")
	}
	pkg := cmp.Or(b.Package, PackageName)
	out := CatalogBundle{Schema: schemaBundle, Name: b.CSV.Name, Package: pkg, Image: image}
	var gvks []map[string]string
	for _, crd := range b.V1CRDs {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				gvks = append(gvks, map[string]string{"group": crd.Spec.Group, "kind": crd.Spec.Names.Kind, "version": v.Name})
			}
		}
	}
	sort.Slice(gvks, func(i, j int) bool { return fmt.Sprint(gvks[i]) < fmt.Sprint(gvks[j]) })
	for _, g := range gvks {
		out.Properties = append(out.Properties, property(propertyGVK, g))
	}
	out.Properties = append(out.Properties, property(propertyPkg, map[string]string{"packageName": pkg, "version": b.CSV.Spec.Version.String()}))
	for _, o := range b.Objects {
		if o.GetKind() != v1alpha1.ClusterServiceVersionKind && o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return CatalogBundle{}, err
		}
		out.Properties = append(out.Properties, property(propertyObject, map[string]string{"data": base64.StdEncoding.EncodeToString(raw)}))
	}
	out.RelatedImages = append([]v1alpha1.RelatedImage{{Image: image}}, b.CSV.Spec.RelatedImages...)
	return out, nil
}

// property encodes a property value; the values here always encode.
func property(typ string, value any) Property {
	raw, _ := json.Marshal(value)
	return Property{Type: typ, Value: raw}
}

// CSVOf decodes the CSV carried by a catalog bundle.
func CSVOf(b CatalogBundle) (*v1alpha1.ClusterServiceVersion, error) {
	for _, p := range b.Properties {
		if p.Type != propertyObject {
			continue
		}
		var v struct {
			Data []byte `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return nil, err
		}
		csv := &v1alpha1.ClusterServiceVersion{}
		if err := json.Unmarshal(v.Data, csv); err != nil {
			return nil, err
		}
		if csv.Kind == v1alpha1.ClusterServiceVersionKind {
			return csv, nil
		}
	}
	return nil, fmt.Errorf("bundle %s carries no CSV", b.Name)
}

// WithBundle is c with b added, or in place of the bundle of the same name,
// the bundles in version order, and the package and channel derived from
// them: channel stable lists every bundle with the CSV's replaces, and the
// package's icon is the newest bundle's.
func (c Catalog) WithBundle(b CatalogBundle) (Catalog, error) {
	bundles := []CatalogBundle{b}
	for _, old := range c.Bundles {
		if old.Name != b.Name {
			bundles = append(bundles, old)
		}
	}
	csvs := map[string]*v1alpha1.ClusterServiceVersion{}
	for _, cb := range bundles {
		csv, err := CSVOf(cb)
		if err != nil {
			return Catalog{}, err
		}
		csvs[cb.Name] = csv
	}
	sort.Slice(bundles, func(i, j int) bool {
		return csvs[bundles[i].Name].Spec.Version.LT(csvs[bundles[j].Name].Spec.Version.Version)
	})
	ch := Channel{Schema: schemaChannel, Name: ChannelName, Package: b.Package}
	for _, cb := range bundles {
		ch.Entries = append(ch.Entries, ChannelEntry{Name: cb.Name, Replaces: csvs[cb.Name].Spec.Replaces})
	}
	pkg := Package{Schema: schemaPackage, Name: b.Package, DefaultChannel: ChannelName}
	if icons := csvs[bundles[len(bundles)-1].Name].Spec.Icon; len(icons) > 0 {
		pkg.Icon = &Icon{Data: icons[0].Data, MediaType: icons[0].MediaType}
	}
	return Catalog{Package: pkg, Channels: []Channel{ch}, Bundles: bundles}, nil
}

// Marshal is the catalog file: the package, its channels and its bundles,
// one YAML document each.
func (c Catalog) Marshal() ([]byte, error) {
	docs := []any{c.Package}
	for _, ch := range c.Channels {
		docs = append(docs, ch)
	}
	for _, b := range c.Bundles {
		docs = append(docs, b)
	}
	var buf bytes.Buffer
	for _, d := range docs {
		raw, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(raw)
	}
	return buf.Bytes(), nil
}

// ParseCatalog reads a catalog file Marshal wrote (or opm, for this one
// package).
func ParseCatalog(raw []byte) (Catalog, error) {
	objs, err := overlay.Decode(raw)
	if err != nil {
		return Catalog{}, err
	}
	var c Catalog
	for _, o := range objs {
		if err := c.add(o); err != nil {
			return Catalog{}, err
		}
	}
	return c, nil
}

// add files one blob of a catalog file by its schema.
func (c *Catalog) add(o *unstructured.Unstructured) error {
	raw, err := json.Marshal(o.Object)
	if err != nil {
		return err
	}
	schema, _, _ := unstructured.NestedString(o.Object, "schema")
	switch schema {
	case schemaPackage:
		return json.Unmarshal(raw, &c.Package)
	case schemaChannel:
		var ch Channel
		err = json.Unmarshal(raw, &ch)
		c.Channels = append(c.Channels, ch)
		return err
	case schemaBundle:
		var b CatalogBundle
		err = json.Unmarshal(raw, &b)
		c.Bundles = append(c.Bundles, b)
		return err
	}
	return fmt.Errorf("unknown catalog schema %q", schema)
}

// LoadCatalog reads the package pkg of the catalog in dir; an empty one
// when there is none.
func LoadCatalog(dir, pkg string) (Catalog, error) {
	raw, err := os.ReadFile(catalogFile(dir, pkg))
	if errors.Is(err, os.ErrNotExist) {
		return Catalog{}, nil
	}
	if err != nil {
		return Catalog{}, err
	}
	return ParseCatalog(raw)
}

// CatalogDockerfileFor is the Dockerfile of the catalog image of the
// catalog directory named dir, built from dir's parent as `opm generate
// dockerfile` writes it: opm serves the catalog, its cache built at build
// time.
func CatalogDockerfileFor(dir string) []byte {
	return fmt.Appendf(nil, `# The file-based catalog of %[1]s (make catalog), served by opm. Build it
# from this directory: docker build -f %[2]s -t $CATALOG_IMG .
FROM %[3]s
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
ADD %[4]s /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]
LABEL operators.operatorframework.io.index.configs.v1=/configs
`, PackageName, CatalogDockerfile, opmImage, dir)
}

// AddToCatalog renders the bundle in bundleDir as image and adds it to the
// catalog in dir, keeping the other versions' bundles, and writes the
// catalog's Dockerfile beside dir. The result must pass CheckCatalog.
func AddToCatalog(dir, bundleDir, image string) error {
	b, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		return fmt.Errorf("loading the bundle in %s: %w", bundleDir, err)
	}
	rendered, err := RenderBundle(b, image)
	if err != nil {
		return err
	}
	c, err := LoadCatalog(dir, rendered.Package)
	if err != nil {
		return err
	}
	if c, err = c.WithBundle(rendered); err != nil {
		return err
	}
	if err := CheckCatalog(c); err != nil {
		return fmt.Errorf("the catalog with %s: %w", rendered.Name, err)
	}
	raw, err := c.Marshal()
	if err != nil {
		return err
	}
	return writeFiles(dir, map[string][]byte{
		filepath.Join(rendered.Package, "catalog.yaml"): raw,
		filepath.Join("..", CatalogDockerfile):          CatalogDockerfileFor(filepath.Base(dir)),
	})
}

// bundleVersion is the version of a catalog bundle's olm.package property.
func bundleVersion(b CatalogBundle) (semver.Version, error) {
	for _, p := range b.Properties {
		if p.Type != propertyPkg {
			continue
		}
		var v struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return semver.Version{}, err
		}
		return semver.Parse(v.Version)
	}
	return semver.Version{}, fmt.Errorf("bundle %s has no %s property", b.Name, propertyPkg)
}
