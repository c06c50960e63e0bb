// Package publish writes a release a user installs without building
// anything (make release): one install manifest per overlay, the Helm
// chart's package, the OLM bundle and catalog, and the images they name as
// OCI image layouts, every image named by tag and digest.
//
// The digests are those of the layouts it writes from the cached builds
// (make image's manager index, make images' operand tarballs) and of the
// bundle image it builds: `skopeo copy --all --preserve-digests
// oci:DIR docker://NAME` copies a layout's manifests byte for byte, so a
// registry serves each under exactly that digest. A docker-archive tarball
// would not do: skopeo recompresses its layers on push.
package publish

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/operator-framework/api/pkg/manifests"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/images"
	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/olm"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// The release folder's layout, relative to Options.Out.
const (
	// ImagesDir holds one OCI image layout per image, named after the
	// repository's last element (images/multi-operator, images/whalesay).
	ImagesDir = "images"
	// ImagesFile lists every image as name:tag@digest and its layout.
	ImagesFile = "images.txt"
	// SumsFile is `sha256sum` of every file outside ImagesDir, which
	// `sha256sum -c` checks from the release folder.
	SumsFile = "SHA256SUMS"
	// BundleDir, NamespacedBundleDir and CatalogDir are the OLM bundles
	// of the two packages (olm.PackageName, olm.NamespacedPackageName) and
	// the catalog of both, their Dockerfiles beside them.
	BundleDir           = "olm/bundle"
	NamespacedBundleDir = "olm/bundle-namespaced"
	CatalogDir          = "olm/catalog"
)

// InstallFile is the install manifest of the overlay named name
// (config/overlays/<name>, or default for config/default).
func InstallFile(name string) string { return "install-" + name + ".yaml" }

// ChartFile is the chart package `helm package` writes for version.
func ChartFile(version string) string { return helmchart.ChartName + "-" + version + ".tgz" }

// Operand is an operand image of ours that the manifests name: its release
// name (repository:tag) and the docker-archive tarball make images built.
type Operand struct {
	Name, Tarball string
}

// Options are a release's inputs.
type Options struct {
	// Root is the repository root.
	Root string
	// Out is the release folder, replaced as a whole.
	Out string
	// Version is the release's version (x.y.z); its images are tagged v<Version>.
	Version string
	// ManagerRepository is the manager image's repository.
	ManagerRepository string
	// ManagerLayout is the manager's multi-platform index (make image).
	ManagerLayout string
	// Operands are the operand images of ours the overlays name.
	Operands []Operand
	// BundleImage and NamespacedBundleImage are the OLM bundle images'
	// name:tag of the two packages, which the catalog names.
	BundleImage, NamespacedBundleImage string
	// Catalog is the file-based catalog (dist/catalog) the bundle is added
	// to, in a copy.
	Catalog string
	// Created is the bundle image's time: the same inputs, the same digest.
	Created time.Time
	// Helm is the helm binary that packages the chart.
	Helm string
}

// Tag is the tag of every image of the release.
func (o Options) Tag() string { return "v" + o.Version }

// Release is what Write wrote: the release name of each image and its digest.
type Release struct {
	// Images maps each image's name:tag to its digest (sha256:...).
	Images map[string]string
	// Layouts maps each image's name:tag to its layout, relative to Out.
	Layouts map[string]string
}

// Write writes the release into a temporary folder beside o.Out and then
// replaces o.Out with it, so a failed release never leaves half a folder.
func Write(o Options) (*Release, error) {
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(o.Out), "."+filepath.Base(o.Out)+".*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // gone after the rename
	w := &writer{o: o, dir: tmp, rel: &Release{Images: map[string]string{}, Layouts: map[string]string{}}}
	for _, step := range []func() error{w.images, w.installs, w.chart, w.olm, w.imageList, w.sums} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return nil, err
	}
	return w.rel, os.Rename(tmp, o.Out)
}

// writer writes one release into dir.
type writer struct {
	o   Options
	dir string
	rel *Release
}

// layout records the layout written for name and its digest.
func (w *writer) layout(name string, write func(dir string) error) error {
	repo, _ := overlay.SplitImage(name)
	rel := path.Join(ImagesDir, path.Base(repo))
	dir := filepath.Join(w.dir, rel)
	if err := write(dir); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	d, err := images.LayoutDigest(dir)
	if err != nil {
		return err
	}
	w.rel.Images[name], w.rel.Layouts[name] = d.String(), rel
	return nil
}

// images writes the manager's index and each operand's, an index of its
// one image, so that a node of another platform fails to pull it rather
// than runs it.
func (w *writer) images() error {
	if err := w.layout(w.o.ManagerRepository+":"+w.o.Tag(), func(dir string) error {
		idx, err := images.ReadLayout(w.o.ManagerLayout)
		if err != nil {
			return err
		}
		return images.WriteLayout(dir, w.o.ManagerRepository+":"+w.o.Tag(), idx)
	}); err != nil {
		return err
	}
	for _, op := range w.o.Operands {
		if err := w.layout(op.Name, func(dir string) error {
			img, err := images.ReadTarball(op.Tarball, "")
			if err != nil {
				return err
			}
			idx, err := images.Index(img)
			if err != nil {
				return err
			}
			return images.WriteLayout(dir, op.Name, idx)
		}); err != nil {
			return err
		}
	}
	return nil
}

// Overlays are the overlays a release installs, by name: config/default
// as default and each of config/overlays.
func Overlays(root string) (map[string]string, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "config", "overlays", "*"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{"default": "config/default"}
	for _, d := range dirs {
		out[filepath.Base(d)] = filepath.Join("config", "overlays", filepath.Base(d))
	}
	return out, nil
}

// installs writes each overlay's install manifest, once config/manager
// names the release's manager image, as `kubectl apply -k` of a checkout
// of the release's commit installs it.
func (w *writer) installs() error {
	manager, err := overlay.Build(filepath.Join(w.o.Root, "config", "manager"))
	if err != nil {
		return err
	}
	raw, err := Stream(manager)
	if err != nil {
		return err
	}
	if _, err := w.pin("config/manager", raw); err != nil {
		return err
	}
	want := "image: " + w.o.ManagerRepository + ":" + w.o.Tag() + "\n"
	if !bytes.Contains(raw, []byte(want)) {
		return fmt.Errorf("config/manager/kustomization.yaml does not name the manager image %s:%s: update its images entry", w.o.ManagerRepository, w.o.Tag())
	}
	overlays, err := Overlays(w.o.Root)
	if err != nil {
		return err
	}
	for name, dir := range overlays {
		objs, err := overlay.Kustomization{Resources: []string{dir}, Bare: true, Image: w.o.ManagerRepository + ":" + w.o.Tag()}.Build(w.o.Root)
		if err != nil {
			return err
		}
		raw, err := Stream(objs)
		if err != nil {
			return err
		}
		if err := w.write(InstallFile(name), raw); err != nil {
			return err
		}
	}
	return nil
}

// Stream is objs as one YAML stream, as kubectl kustomize prints it.
func Stream(objs []*unstructured.Unstructured) ([]byte, error) {
	docs := make([][]byte, len(objs))
	for i, o := range objs {
		doc, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		docs[i] = doc
	}
	return bytes.Join(docs, []byte("---\n")), nil
}

// chart packages the chart with the manager's digest as image.digest's
// default and the operand images pinned.
func (w *writer) chart() error {
	managerDigest := w.rel.Images[w.o.ManagerRepository+":"+w.o.Tag()]
	c, err := helmchart.Generate(w.o.Root, helmchart.Options{Version: w.o.Version, ImageRepository: w.o.ManagerRepository, ImageDigest: managerDigest})
	if err != nil {
		return err
	}
	files, err := c.Files()
	if err != nil {
		return err
	}
	src, err := os.MkdirTemp("", "chart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src) //nolint:errcheck // a temporary copy
	dir := filepath.Join(src, helmchart.ChartName)
	for name, text := range files {
		pinned, err := w.pin(name, []byte(text))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, name), pinned); err != nil {
			return err
		}
	}
	if out, err := exec.Command(w.o.Helm, "package", dir, "--destination", w.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("helm package: %w: %s", err, out)
	}
	return nil
}

// olm writes each package's bundle, builds its image, and adds it to a
// copy of the catalog under that image's digest.
func (w *writer) olm() error {
	catalogDir := filepath.Join(w.dir, CatalogDir)
	if err := os.CopyFS(catalogDir, os.DirFS(w.o.Catalog)); err != nil {
		return err
	}
	for _, p := range []struct {
		sources olm.Sources
		dir     string
		image   string
	}{
		{olm.DefaultSources(w.o.Root), BundleDir, w.o.BundleImage},
		{olm.NamespacedSources(w.o.Root), NamespacedBundleDir, w.o.NamespacedBundleImage},
	} {
		if err := w.bundle(p.sources, filepath.Join(w.dir, p.dir), p.image, catalogDir); err != nil {
			return fmt.Errorf("%s: %w", p.dir, err)
		}
	}
	return nil
}

// bundle writes the bundle of sources into bundleDir, builds its image as
// image, and adds it to the catalog in catalogDir.
func (w *writer) bundle(sources olm.Sources, bundleDir, image, catalogDir string) error {
	b, files, err := sources.Build(w.o.Version, w.o.ManagerRepository+":"+w.o.Tag(), olm.AutoReplaces)
	if err != nil {
		return err
	}
	for name, raw := range files {
		if files[name], err = w.pin(name, raw); err != nil {
			return err
		}
	}
	pkg := cmp.Or(b.Package, olm.PackageName)
	if err := olm.WriteBundle(bundleDir, pkg, files); err != nil {
		return err
	}
	if err := w.layout(image, func(dir string) error {
		img, err := BundleImage(bundleDir, w.o.Created)
		if err != nil {
			return err
		}
		return images.WriteImageLayout(dir, image, img)
	}); err != nil {
		return err
	}
	if err := olm.AddToCatalog(catalogDir, bundleDir, image+"@"+w.rel.Images[image]); err != nil {
		return err
	}
	// The older releases' bundles stay as they were published; this one's
	// must name its images pinned.
	doc, err := CatalogBundle(catalogDir, pkg, w.o.Version)
	if err != nil {
		return err
	}
	_, err = w.pin(CatalogDir, doc)
	return err
}

// CatalogBundle is the olm.bundle document of version of the package pkg
// in the catalog in catalogDir, as YAML.
func CatalogBundle(catalogDir, pkg, version string) ([]byte, error) {
	c, err := olm.LoadCatalog(catalogDir, pkg)
	if err != nil {
		return nil, err
	}
	name := olm.CSVNameIn(pkg, version)
	for _, b := range c.Bundles {
		if b.Name == name {
			return yaml.Marshal(b)
		}
	}
	return nil, fmt.Errorf("the catalog has no bundle %s", name)
}

// BundleImage is the OLM bundle image of the bundle in dir, as its
// Dockerfile builds it: its manifests/ and metadata/ folders, labelled
// with metadata/annotations.yaml.
func BundleImage(dir string, created time.Time) (v1.Image, error) {
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, err
	}
	spec := images.Spec{Created: created, Labels: meta.Annotations, Description: "OLM bundle " + b.Name}
	for _, sub := range []string{"manifests", "metadata"} {
		files, err := images.TreeFiles(filepath.Join(dir, sub), "/"+sub)
		if err != nil {
			return nil, err
		}
		spec.Files = append(spec.Files, files...)
	}
	return images.Build(spec)
}

// imageList writes ImagesFile: what to push, and where from.
func (w *writer) imageList() error {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(w.rel.Images)) {
		fmt.Fprintf(&b, "%s@%s %s\n", name, w.rel.Images[name], w.rel.Layouts[name])
	}
	return os.WriteFile(filepath.Join(w.dir, ImagesFile), []byte(b.String()), 0o644) //nolint:gosec // a published release file
}

// sums writes SumsFile over every file outside ImagesDir, whose blobs are
// named by their digests already.
func (w *writer) sums() error {
	var b strings.Builder
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(w.dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() && rel == ImagesDir {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(raw), filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(w.dir, SumsFile), []byte(b.String()), 0o644) //nolint:gosec // a published release file
}

// write writes a release file, its images pinned.
func (w *writer) write(name string, raw []byte) error {
	pinned, err := w.pin(name, raw)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(w.dir, name), pinned)
}

// writeFile writes raw to p, creating its folder.
func writeFile(p string, raw []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, raw, 0o644) //nolint:gosec // a published release file
}

// pin adds its digest to every reference to a release image in raw (the
// file name), and fails on a reference to one of the release's
// repositories that is not a release image (config/ naming another
// version) or on a :latest tag.
func (w *writer) pin(name string, raw []byte) ([]byte, error) {
	for ref, digest := range w.rel.Images {
		raw = pinPattern(ref).ReplaceAll(raw, []byte("${1}"+ref+"@"+digest))
	}
	if err := Check(raw, w.rel.Images); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return raw, nil
}

// pinPattern matches ref, pinned or not, as a whole reference.
func pinPattern(ref string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)(^|[^\w./-])` + regexp.QuoteMeta(ref) + `(@sha256:[0-9a-f]{64})?\b`)
}

// refPattern matches an image reference in text: name[:tag][@digest].
var refPattern = regexp.MustCompile(`[\w.-]+(?::\d+)?(?:/[\w.-]+)+(?::[\w][\w.-]*)?(?:@sha256:[0-9a-f]{64})?`)

// latestPattern matches the tag latest in an image reference.
var latestPattern = regexp.MustCompile(`[\w./-]:latest\b`)

// Check fails when raw names an image of one of images' repositories other
// than as name:tag@digest with the digest of images, or says :latest.
func Check(raw []byte, images map[string]string) error {
	if m := latestPattern.Find(raw); m != nil {
		return fmt.Errorf("names the tag latest (%q)", m)
	}
	repos := map[string]bool{}
	for ref := range images {
		repo, _ := overlay.SplitImage(ref)
		repos[repo] = true
	}
	for _, m := range refPattern.FindAll(raw, -1) {
		ref := string(m)
		named, digest, _ := strings.Cut(ref, "@")
		repo, _ := overlay.SplitImage(named)
		// A repository alone (the chart's image.repository) is no image.
		if !repos[repo] || (named == repo && digest == "") {
			continue
		}
		if want, ok := images[named]; !ok || digest != want {
			return fmt.Errorf("names %s, not one of the release's images pinned by digest %v: update config/ or VERSION", ref, images)
		}
	}
	return nil
}
