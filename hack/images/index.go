package images

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// elfArchs maps an ELF machine to its GOARCH, for the platforms the
// manager's image is built for.
var elfArchs = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
}

// ELFArch is the GOARCH an ELF binary was built for, read from its header,
// so that an image never claims another platform than its binary's.
func ELFArch(binary string) (string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return "", err
	}
	defer f.Close() //nolint:errcheck // read only
	arch, ok := elfArchs[f.Machine]
	if !ok {
		return "", fmt.Errorf("%s: an ELF binary for %s, which no image here is built for", binary, f.Machine)
	}
	return arch, nil
}

// Index is the multi-platform image index (a Docker manifest list, as the
// images are Docker schema 2) of imgs, each entry with the platform of its
// image's config. A registry, Docker or containerd picks the image of the
// node's platform from it.
func Index(imgs ...v1.Image) (v1.ImageIndex, error) {
	if len(imgs) == 0 {
		return nil, errors.New("an index needs at least one image")
	}
	idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
	seen := map[string]bool{}
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		platform := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
		if seen[platform.String()] {
			return nil, fmt.Errorf("two images for %s", platform.String())
		}
		seen[platform.String()] = true
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	return idx, nil
}

// refNameAnnotation names an image in an OCI layout's index.json, as
// skopeo and crane write and read it.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes idx, named ref, to dir as an OCI image layout (the
// form `skopeo copy oci:DIR` and `crane push` read). It writes a temporary
// folder beside dir and renames it, replacing what was there, so an
// interrupted build never leaves half a layout behind.
func WriteLayout(dir, ref string, idx v1.ImageIndex) error {
	return writeLayout(dir, ref, func(p layout.Path, opt layout.Option) error { return p.AppendIndex(idx, opt) })
}

// WriteImageLayout is WriteLayout for a single image rather than an index,
// for images that are not tied to a platform, such as an OLM bundle.
func WriteImageLayout(dir, ref string, img v1.Image) error {
	return writeLayout(dir, ref, func(p layout.Path, opt layout.Option) error { return p.AppendImage(img, opt) })
}

// writeLayout writes dir as an OCI image layout whose index.json holds the
// one entry add appends, named ref.
func writeLayout(dir, ref string, add func(layout.Path, layout.Option) error) error {
	tag, err := parseTag(ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // gone after the rename
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := add(p, layout.WithAnnotations(map[string]string{refNameAnnotation: tag.TagStr()})); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// LayoutDigest is the digest of the one index or image in the OCI layout
// dir (WriteLayout's or WriteImageLayout's): the digest a registry serves
// for it after `skopeo copy --all --preserve-digests oci:DIR docker://NAME`,
// which copies the manifests' bytes unchanged.
func LayoutDigest(dir string) (v1.Hash, error) {
	_, d, err := layoutEntry(dir)
	return d, err
}

// layoutEntry is the OCI layout dir's top index and the digest of its one
// entry.
func layoutEntry(dir string) (v1.ImageIndex, v1.Hash, error) {
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	if len(m.Manifests) != 1 {
		return nil, v1.Hash{}, fmt.Errorf("%s: %d entries in index.json, want the one WriteLayout writes", dir, len(m.Manifests))
	}
	return top, m.Manifests[0].Digest, nil
}

// ReadLayout reads the image index WriteLayout wrote to dir.
func ReadLayout(dir string) (v1.ImageIndex, error) {
	top, d, err := layoutEntry(dir)
	if err != nil {
		return nil, err
	}
	return top.ImageIndex(d)
}
