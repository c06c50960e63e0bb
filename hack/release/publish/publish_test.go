package publish_test

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/multi-operator/multi-operator/hack/images"
	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/olm"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/release/publish"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
)

// The release the tests write: config/'s version and image names.
const (
	version     = "0.2.0"
	managerRepo = "ghcr.io/multi-operator/multi-operator"
	whalesay    = "ghcr.io/multi-operator/whalesay:v" + version
	bundleImage = "ghcr.io/multi-operator/multi-operator-bundle:v" + version
	// namespacedBundleImage is the bundle image of the namespaced package.
	namespacedBundleImage = "ghcr.io/multi-operator/multi-operator-namespaced-bundle:v" + version
	managerImage          = managerRepo + ":v" + version
)

// fixture is a release's inputs: small stand-ins for the manager's index
// (two platforms) and the whalesay tarball, built as make image and make
// images build theirs, and their digests computed from the images.
type fixture struct {
	opts    publish.Options
	digests map[string]string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	helm := reporoottest.RequireTool(t, root, helmchart.BinaryEnv, helmchart.BinaryName)
	dir := t.TempDir()
	created := time.Unix(1700000000, 0)
	build := func(arch, what string) v1.Image {
		img, err := images.Build(images.Spec{Files: []images.File{images.Content("/"+what, 0o644, []byte(what+" "+arch))}, Arch: arch, Created: created})
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	idx, err := images.Index(build("amd64", "manager"), build("arm64", "manager"))
	if err != nil {
		t.Fatal(err)
	}
	layout := filepath.Join(dir, "manager-index")
	if err := images.WriteLayout(layout, "localhost/multi-operator:abc1234", idx); err != nil {
		t.Fatal(err)
	}
	cowsay := build("amd64", "cowsay")
	tarball := filepath.Join(dir, "whalesay.tar")
	if err := images.WriteTarball(tarball, "localhost/whalesay:3.03", cowsay); err != nil {
		t.Fatal(err)
	}
	cowsayIdx, err := images.Index(cowsay)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{
		opts: publish.Options{
			Root: root, Out: filepath.Join(dir, "release-v"+version), Version: version,
			ManagerRepository: managerRepo, ManagerLayout: layout,
			Operands:    []publish.Operand{{Name: whalesay, Tarball: tarball}},
			BundleImage: bundleImage, NamespacedBundleImage: namespacedBundleImage, Catalog: filepath.Join(root, "dist", "catalog"),
			Created: created, Helm: helm,
		},
		digests: map[string]string{managerImage: digest(t, idx.Digest), whalesay: digest(t, cowsayIdx.Digest)},
	}
}

func digest(t *testing.T, f func() (v1.Hash, error)) string {
	t.Helper()
	h, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// ourRef matches a reference to an image of ours, with its tag and digest
// when it has them.
var ourRef = regexp.MustCompile(`ghcr\.io/multi-operator/[a-z-]+(:[\w.-]+)?(@sha256:[0-9a-f]{64})?`)

// expectPinned fails unless every reference to an image of ours in text
// (a repository alone aside) is name:v<version>@digest with the digest of
// the image it names, and text never says :latest.
func expectPinned(g Gomega, name string, text string, digests map[string]string) {
	g.Expect(text).NotTo(MatchRegexp(`[\w./-]:latest\b`), "%s says :latest", name)
	for _, m := range ourRef.FindAllStringSubmatch(text, -1) {
		if m[1] == "" && m[2] == "" {
			continue
		}
		named := strings.TrimSuffix(m[0], m[2])
		g.Expect(digests).To(HaveKey(named), "%s names %s, not an image of the release", name, m[0])
		g.Expect(m[2]).To(Equal("@"+digests[named]), "%s names %s without its digest", name, m[0])
	}
}

// TestWriteNamesEveryImageByTagAndDigest writes a release from the
// fixture with the real generators, kustomize and helm, and holds every
// file to the images' digests: the install manifests, the chart package
// (its files and what helm renders), the bundle's CSV and the catalog.
func TestWriteNamesEveryImageByTagAndDigest(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t)
	rel, err := publish.Write(f.opts)
	g.Expect(err).NotTo(HaveOccurred())
	out := f.opts.Out

	// The layouts hold the images given, under the digests computed from
	// them, and the bundle image is the one the catalog names.
	for name, want := range f.digests {
		g.Expect(rel.Images).To(HaveKeyWithValue(name, want), "the digest of %s is its image's", name)
	}
	g.Expect(rel.Images).To(HaveLen(4), "the manager, whalesay and the two bundles")
	for name, d := range rel.Images {
		dir := filepath.Join(out, rel.Layouts[name])
		got, err := images.LayoutDigest(dir)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.String()).To(Equal(d))
		blob, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", got.Hex))
		g.Expect(err).NotTo(HaveOccurred(), "the layout of %s holds its manifest", name)
		g.Expect(fmt.Sprintf("sha256:%x", sha256.Sum256(blob))).To(Equal(d), "the manifest's bytes are the digest's")
	}
	digests := rel.Images

	// Every written file outside the layouts.
	files, catalogs := 0, 0
	g.Expect(filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		g.Expect(err).NotTo(HaveOccurred())
		rel, _ := filepath.Rel(out, p)
		if d.IsDir() && rel == publish.ImagesDir {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(p, ".tgz") {
			return nil
		}
		raw, err := os.ReadFile(p)
		g.Expect(err).NotTo(HaveOccurred())
		for pkg, image := range map[string]string{olm.PackageName: bundleImage, olm.NamespacedPackageName: namespacedBundleImage} {
			if rel == filepath.Join(publish.CatalogDir, pkg, "catalog.yaml") {
				// Older releases' bundles stay as they were published.
				doc, err := publish.CatalogBundle(filepath.Join(out, publish.CatalogDir), pkg, version)
				g.Expect(err).NotTo(HaveOccurred(), "the catalog holds the release's bundle of %s", pkg)
				g.Expect(string(doc)).To(ContainSubstring("image: " + image + "@" + digests[image]))
				raw = doc
				catalogs++
			}
		}
		files++
		// The Dockerfiles too: the catalog's starts FROM a release of opm.
		expectPinned(g, rel, string(raw), digests)
		return nil
	})).To(Succeed())
	g.Expect(files).To(BeNumerically(">", 10))
	g.Expect(catalogs).To(Equal(2), "a catalog.yaml per package")

	// Each install manifest is its overlay's objects, the manager and the
	// whalesay operand pinned.
	overlays, err := publish.Overlays(f.opts.Root)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(overlays).To(HaveKey("default"))
	for name := range overlays {
		raw, err := os.ReadFile(filepath.Join(out, publish.InstallFile(name)))
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := overlay.Decode(raw)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(objs).NotTo(BeEmpty())
		for _, o := range objs {
			g.Expect(o.GetAPIVersion()).NotTo(BeEmpty(), "install-%s.yaml: %v", name, o.Object)
			g.Expect(o.GetKind()).NotTo(BeEmpty())
			g.Expect(o.GetName()).NotTo(BeEmpty())
		}
		g.Expect(containerImages(objs)).To(ContainElement(managerImage+"@"+digests[managerImage]), "install-%s.yaml runs the pinned manager", name)
	}
	raw, err := os.ReadFile(filepath.Join(out, publish.InstallFile("default")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(raw)).To(ContainSubstring("value: " + whalesay + "@" + digests[whalesay]))

	// The chart package lints and renders the pinned images; its files say so too.
	chart := filepath.Join(out, publish.ChartFile(version))
	lint, err := exec.Command(f.opts.Helm, "lint", "--strict", chart).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "helm lint --strict: %s", lint)
	for name, text := range tgzFiles(t, chart) {
		expectPinned(g, name, text, digests)
	}
	objs, err := helmchart.Template(f.opts.Helm, chart, overlay.Namespace, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(containerImages(objs)).To(ContainElement(managerImage + "@" + digests[managerImage]))
	rendered, err := publish.Stream(objs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(rendered)).To(ContainSubstring(whalesay + "@" + digests[whalesay]))
	expectPinned(g, "helm template", string(rendered), digests)

	// Each package's CSV lists the pinned images as relatedImages.
	for _, bundle := range []string{publish.BundleDir, publish.NamespacedBundleDir} {
		csvs, err := filepath.Glob(filepath.Join(out, bundle, "manifests", "*.clusterserviceversion.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(csvs).To(HaveLen(1), bundle)
		raw, err = os.ReadFile(csvs[0])
		g.Expect(err).NotTo(HaveOccurred())
		csv, err := overlay.Decode(raw)
		g.Expect(err).NotTo(HaveOccurred())
		related, _, _ := unstructured.NestedSlice(csv[0].Object, "spec", "relatedImages")
		var relatedImages []string
		for _, r := range related {
			relatedImages = append(relatedImages, r.(map[string]any)["image"].(string))
		}
		g.Expect(relatedImages).To(ContainElements(managerImage+"@"+digests[managerImage], whalesay+"@"+digests[whalesay]), bundle)
	}

	// SHA256SUMS checks with sha256sum itself.
	sum := exec.Command("sha256sum", "--check", "--strict", publish.SumsFile)
	sum.Dir = out
	log, err := sum.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "sha256sum --check: %s", log)
	g.Expect(string(log)).To(ContainSubstring(publish.ChartFile(version) + ": OK"))
	list, err := os.ReadFile(filepath.Join(out, publish.ImagesFile))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Split(strings.TrimSpace(string(list)), "\n")).To(HaveLen(len(rel.Images)), "a line per image")
}

// TestInstallManifestsApply applies every install manifest of a release,
// server-side with strict field validation, to a kube-apiserver (envtest,
// KUBEBUILDER_ASSETS): each is a list of objects the API server takes as
// they are, the pinned images included.
func TestInstallManifestsApply(t *testing.T) {
	g := NewWithT(t)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		if os.Getenv("CI") == "true" || os.Getenv("REQUIRE_TEST_DEPS") == "1" {
			t.Fatal("KUBEBUILDER_ASSETS is not set: make test sets it")
		}
		t.Skip("KUBEBUILDER_ASSETS is not set; make test sets it")
	}
	f := newFixture(t)
	_, err := publish.Write(f.opts)
	g.Expect(err).NotTo(HaveOccurred())

	te := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := te.Start()
	g.Expect(err).NotTo(HaveOccurred(), "starting kube-apiserver and etcd")
	t.Cleanup(func() {
		if err := te.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	c = client.WithFieldValidation(c, metav1.FieldValidationStrict)

	overlays, err := publish.Overlays(f.opts.Root)
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range slices.Sorted(maps.Keys(overlays)) {
		raw, err := os.ReadFile(filepath.Join(f.opts.Out, publish.InstallFile(name)))
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := overlay.Decode(raw)
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			g.Expect(c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("release-test"), client.ForceOwnership)).
				To(Succeed(), "install-%s.yaml: %s", name, overlay.Key(o))
		}
	}
	deployment := &unstructured.Unstructured{}
	deployment.SetAPIVersion("apps/v1")
	deployment.SetKind("Deployment")
	g.Expect(c.Get(t.Context(), client.ObjectKey{Namespace: overlay.Namespace, Name: overlay.NamePrefix + "controller-manager"}, deployment)).To(Succeed())
	g.Expect(containerImages([]*unstructured.Unstructured{deployment})).To(ConsistOf(managerImage + "@" + f.digests[managerImage]))
}

// TestWriteRefusesAnotherVersion: config/ names v<VERSION>'s images, so a
// release of another version fails, and leaves no folder behind, until
// config/ is updated.
func TestWriteRefusesAnotherVersion(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t)
	f.opts.Version = "9.9.9"
	_, err := publish.Write(f.opts)
	g.Expect(err).To(MatchError(ContainSubstring("v9.9.9")))
	g.Expect(f.opts.Out).NotTo(BeADirectory())
}

// containerImages are the images of every container of objs' pod templates.
func containerImages(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		ctrs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range ctrs {
			if img, ok := c.(map[string]any)["image"].(string); ok {
				out = append(out, img)
			}
		}
	}
	return out
}

// tgzFiles are the text files of a chart package by name.
func tgzFiles(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			out[h.Name] = string(raw)
		}
	}
}
