package olm

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/multi-operator/multi-operator/hack/release/golden"
)

// checkedInCatalog is the package pkg of dist/catalog.
func checkedInCatalog(t *testing.T, pkg string) Catalog {
	t.Helper()
	c, err := LoadCatalog(filepath.Join(repoRoot(t), "dist", "catalog"), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCatalogUpgradesFromEveryReleaseToVERSION: the checked-in catalog is
// valid, lists every release of config/manifests/releases.yaml, and
// channel stable leads from the first to the head, whose CSV is VERSION
// and is dist/bundle's.
func TestCatalogUpgradesFromEveryReleaseToVERSION(t *testing.T) {
	g := NewWithT(t)
	c := checkedInCatalog(t, PackageName)
	g.Expect(CheckCatalog(c)).To(Succeed())
	g.Expect(c.Package.DefaultChannel).To(Equal(ChannelName))
	g.Expect(c.Package.Icon).NotTo(BeNil())
	g.Expect(c.Channels).To(HaveLen(1))
	releases, err := LoadReleases(filepath.Join(repoRoot(t), "config", "manifests", releasesFile))
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, r := range releases.Releases {
		names = append(names, CSVName(r.Version.String()))
	}
	g.Expect(len(names)).To(BeNumerically(">=", 2), "an upgrade path needs two releases")
	path, err := UpgradePath(c.Channels[0], names[0])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(path).To(Equal(names), "every release upgrades to the next")

	vars := makeVars(t)
	head := c.Bundles[len(c.Bundles)-1]
	g.Expect(head.Name).To(Equal(path[len(path)-1]))
	csv, err := CSVOf(head)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(csv.Spec.Version.String()).To(Equal(vars["VERSION"]))
	g.Expect(head.Image).To(Equal(vars["BUNDLE_IMG"]))
	g.Expect(csv.Spec).To(Equal(checkedIn(t).CSV.Spec), "the head is dist/bundle")
	for _, b := range c.Bundles {
		g.Expect(b.Properties).To(ContainElement(HaveField("Type", propertyGVK)))
		g.Expect(b.Properties).To(ContainElement(HaveField("Type", propertyPkg)))
	}
}

// TestNamespacedPackageHasItsOwnChannel: the package multi-operator-namespaced
// of the checked-in catalog is valid, with its own channel stable, whose
// head is dist/bundle-namespaced from its first release on.
func TestNamespacedPackageHasItsOwnChannel(t *testing.T) {
	g := NewWithT(t)
	c := checkedInCatalog(t, NamespacedPackageName)
	g.Expect(CheckCatalog(c)).To(Succeed())
	g.Expect(c.Package.DefaultChannel).To(Equal(ChannelName))
	g.Expect(c.Channels).To(ConsistOf(HaveField("Package", NamespacedPackageName)))
	vars := makeVars(t)
	head := c.Bundles[len(c.Bundles)-1]
	g.Expect(head.Image).To(Equal(vars["BUNDLE_NAMESPACED_IMG"]))
	csv, err := CSVOf(head)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(csv.Spec).To(Equal(checkedInNamespaced(t).CSV.Spec), "the head is dist/bundle-namespaced")
}

// TestGeneratingGivesTheCheckedInCatalog adds dist/bundle and
// dist/bundle-namespaced to a copy of dist/catalog, as `make catalog`
// does: the result must be the checked-in catalog (a stale one fails), and
// adding them again changes nothing.
func TestGeneratingGivesTheCheckedInCatalog(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	out := filepath.Join(t.TempDir(), "catalog")
	for _, pkg := range []string{PackageName, NamespacedPackageName} {
		raw, err := os.ReadFile(catalogFile(filepath.Join(root, "dist", "catalog"), pkg))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(writeFiles(out, map[string][]byte{filepath.Join(pkg, "catalog.yaml"): raw})).To(Succeed())
	}
	for range 2 {
		g.Expect(AddToCatalog(out, filepath.Join(root, "dist", "bundle"), makeVars(t)["BUNDLE_IMG"])).To(Succeed())
		g.Expect(AddToCatalog(out, filepath.Join(root, "dist", "bundle-namespaced"), makeVars(t)["BUNDLE_NAMESPACED_IMG"])).To(Succeed())
		golden.ExpectTree(g, filepath.Join(root, "dist", "catalog"), out, "make catalog")
		golden.ExpectFile(g, filepath.Join(root, "dist", CatalogDockerfile), filepath.Join(filepath.Dir(out), CatalogDockerfile), "make catalog")
	}
}

// TestWithBundleKeepsOtherVersions: adding a bundle keeps the others, a
// bundle of the same name is replaced, and the channel follows the CSVs'
// replaces in version order.
func TestWithBundleKeepsOtherVersions(t *testing.T) {
	g := NewWithT(t)
	var c Catalog
	var err error
	for _, b := range []CatalogBundle{
		fakeBundle(g, "0.2.0", "multi-operator.v0.1.0", "old-image"),
		fakeBundle(g, "0.1.0", "", "first"),
		fakeBundle(g, "0.2.0", "multi-operator.v0.1.0", "new-image"),
	} {
		c, err = c.WithBundle(b)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(CheckCatalog(c)).To(Succeed())
	g.Expect(c.Bundles).To(HaveLen(2))
	g.Expect(c.Bundles[1].Image).To(Equal("new-image"), "the bundle of the same version is replaced")
	g.Expect(c.Channels[0].Entries).To(Equal([]ChannelEntry{
		{Name: "multi-operator.v0.1.0"}, {Name: "multi-operator.v0.2.0", Replaces: "multi-operator.v0.1.0"},
	}))
	raw, err := c.Marshal()
	g.Expect(err).NotTo(HaveOccurred())
	parsed, err := ParseCatalog(raw)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(parsed).To(Equal(c), "the file reads back")
}

// fakeBundle is a catalog bundle whose CSV has version and replaces.
func fakeBundle(g *WithT, v, replaces, image string) CatalogBundle {
	csv := &v1alpha1.ClusterServiceVersion{}
	csv.APIVersion, csv.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.ClusterServiceVersionKind
	csv.Name = CSVName(v)
	csv.Spec.Replaces = replaces
	csv.Spec.Version = version.OperatorVersion{Version: semver.MustParse(v)}
	raw, err := json.Marshal(csv)
	g.Expect(err).NotTo(HaveOccurred())
	return CatalogBundle{Schema: schemaBundle, Name: csv.Name, Package: PackageName, Image: image, Properties: []Property{
		property(propertyPkg, map[string]string{"packageName": PackageName, "version": v}),
		property(propertyObject, map[string]string{"data": base64.StdEncoding.EncodeToString(raw)}),
	}}
}
