package olm

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The bundle's directories, as its annotations and Dockerfile name them.
const (
	manifestsDir = "manifests"
	metadataDir  = "metadata"
	// BundleDockerfile is the Dockerfile of dist/bundle's image, written
	// beside it; its build context is that directory's parent. Another
	// bundle directory's is BundleDockerfileName of it.
	BundleDockerfile = "bundle.Dockerfile"
)

// BundleDockerfileName is the file name of the Dockerfile of the bundle in
// the directory dir, written beside it: <name of dir>.Dockerfile.
func BundleDockerfileName(dir string) string { return filepath.Base(dir) + ".Dockerfile" }

// csvFile is the CSV's file in the manifests of a bundle of the package pkg.
func csvFile(pkg string) string { return manifestsDir + "/" + pkg + ".clusterserviceversion.yaml" }

// bundleAnnotations are metadata/annotations.yaml and the bundle image's
// labels: the format (registry+v1), where manifests and metadata are, the
// package pkg and its channel.
func bundleAnnotations(pkg string) map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       manifestsDir + "/",
		"operators.operatorframework.io.bundle.metadata.v1":        metadataDir + "/",
		"operators.operatorframework.io.bundle.package.v1":         pkg,
		"operators.operatorframework.io.bundle.channels.v1":        ChannelName,
		"operators.operatorframework.io.bundle.channel.default.v1": ChannelName,
	}
}

// Files are the bundle's files by path relative to the bundle directory:
// manifests/ (the CSV, the CRDs as <group>_<plural>.yaml and the other
// manifests) and metadata/annotations.yaml.
func (b *Bundle) Files() (map[string][]byte, error) {
	files := map[string][]byte{}
	add := func(name string, obj any) error {
		raw, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, dup := files[name]; dup {
			return fmt.Errorf("two objects would be written to %s", name)
		}
		files[name] = raw
		return nil
	}
	pkg := cmp.Or(b.Package, PackageName)
	if err := add(csvFile(pkg), b.CSV.Object); err != nil {
		return nil, err
	}
	for _, crd := range b.CRDs {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		if err := add(manifestsDir+"/"+group+"_"+plural+".yaml", crd.Object); err != nil {
			return nil, err
		}
	}
	for _, m := range b.Manifests {
		if err := add(manifestsDir+"/"+fileName(m), m.Object); err != nil {
			return nil, err
		}
	}
	return files, add(metadataDir+"/annotations.yaml", map[string]any{"annotations": bundleAnnotations(pkg)})
}

// BundleDockerfileFor is the Dockerfile of the bundle image of the bundle
// of the package pkg in the directory named dir, built from dir's parent:
// FROM scratch, the labels of metadata/annotations.yaml, the two
// directories.
func BundleDockerfileFor(dir, pkg string) []byte {
	var b strings.Builder
	b.WriteString("# The OLM bundle image of " + pkg + " (make bundle). Build it from this\n# directory: docker build -f " + BundleDockerfileName(dir) + " -t $BUNDLE_IMG .\nFROM scratch\n\n")
	labels := bundleAnnotations(pkg)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "LABEL %s=%s\n", k, labels[k])
	}
	fmt.Fprintf(&b, "\nCOPY %s/%s /%s/\nCOPY %s/%s /%s/\n", dir, manifestsDir, manifestsDir, dir, metadataDir, metadataDir)
	return []byte(b.String())
}

// WriteBundle replaces the bundle in dir with files, a bundle of the
// package pkg, and writes its Dockerfile beside dir. Files of an older
// bundle that this one lacks are removed, so that a CRD dropped from the
// overlay leaves the bundle too.
func WriteBundle(dir, pkg string, files map[string][]byte) error {
	for _, sub := range []string{manifestsDir, metadataDir} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	files = union(files, map[string][]byte{filepath.Join("..", BundleDockerfileName(dir)): BundleDockerfileFor(filepath.Base(dir), pkg)})
	return writeFiles(dir, files)
}

// writeFiles writes files under dir, creating directories.
func writeFiles(dir string, files map[string][]byte) error {
	for name, raw := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, raw, 0o644); err != nil { //nolint:gosec // published release files
			return err
		}
	}
	return nil
}
