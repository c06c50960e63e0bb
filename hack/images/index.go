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
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: tag.TagStr()})); err != nil {
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

// ReadLayout reads the image index WriteLayout wrote to dir.
func ReadLayout(dir string) (v1.ImageIndex, error) {
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s: %d entries in index.json, want the one index WriteLayout writes", dir, len(m.Manifests))
	}
	return top.ImageIndex(m.Manifests[0].Digest)
}
