package images

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// DefaultPath is the PATH of every image: the command a pod names, such as
// cowsay or redis-server, is looked up in it.
const DefaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games"

// Spec describes a single-layer image: its files and how it runs.
type Spec struct {
	// Files are the layer's entries (see Normalize).
	Files []File
	// Entrypoint and Cmd are the image's default command line.
	Entrypoint, Cmd []string
	// User is "uid:gid", numeric so that runAsNonRoot can check it.
	User string
	// Env holds NAME=value pairs; DefaultPath is added when no PATH is set.
	Env []string
	// WorkingDir is the working directory, / when empty.
	WorkingDir string
	// Created is the image's creation time and every file's modification
	// time: a fixed one (SOURCE_DATE_EPOCH, the commit's time, or zero)
	// makes the build reproducible.
	Created time.Time
	// Description goes into the image's history.
	Description string
	// Arch is the GOARCH the image's binaries are built for, its config's
	// architecture; this machine's when empty.
	Arch string
	// Labels are the config's labels, which an OLM bundle image, for one,
	// is recognised by.
	Labels map[string]string
}

// Build assembles the image of spec on an empty base, for spec.Arch (this
// machine's architecture when empty).
func Build(spec Spec) (v1.Image, error) {
	created := spec.Created.UTC().Truncate(time.Second)
	layer, err := NewLayer(spec.Files, created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "multi-operator hack/images/cmd/imagebuild",
			Comment:   spec.Description,
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	cf.OS = "linux"
	cf.Architecture = cmp.Or(spec.Arch, runtime.GOARCH)
	env := spec.Env
	if !hasVar(env, "PATH") {
		env = append([]string{DefaultPath}, env...)
	}
	workdir := spec.WorkingDir
	if workdir == "" {
		workdir = "/"
	}
	cf.Config = v1.Config{
		Entrypoint: spec.Entrypoint,
		Cmd:        spec.Cmd,
		User:       spec.User,
		Env:        env,
		WorkingDir: workdir,
		Labels:     spec.Labels,
	}
	return mutate.ConfigFile(img, cf)
}

// hasVar tells whether env sets the variable key.
func hasVar(env []string, key string) bool {
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)+1] == key+"=" {
			return true
		}
	}
	return false
}

// WriteTarball writes img, tagged ref (such as localhost/redis:7.0.15), to
// file as a docker-archive tarball, which `ctr images import` and `docker
// load` read. It writes a temporary file beside file and renames it, so an
// interrupted build never leaves a truncated tarball behind.
func WriteTarball(file, ref string, img v1.Image) error {
	tag, err := parseTag(ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if err := tarball.Write(tag, img, tmp); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// ReadTarball reads the image tagged ref from a tarball WriteTarball wrote;
// with ref empty, the tarball's only image, whatever its name.
func ReadTarball(file, ref string) (v1.Image, error) {
	if ref == "" {
		return tarball.ImageFromPath(file, nil)
	}
	tag, err := parseTag(ref)
	if err != nil {
		return nil, err
	}
	return tarball.ImageFromPath(file, &tag)
}

// parseTag parses an image name with an explicit tag, such as
// localhost/redis:7.0.15. The tarball keeps the name as written, which
// containerd reads the Docker way: localhost/redis stays on localhost.
func parseTag(ref string) (name.Tag, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image name %q: %w", ref, err)
	}
	if !strings.HasSuffix(ref, ":"+tag.TagStr()) {
		return name.Tag{}, fmt.Errorf("image name %q has no tag", ref)
	}
	return tag, nil
}

// ParseEpoch reads SOURCE_DATE_EPOCH's format, whole seconds since 1970,
// as the time of a reproducible build; empty is the epoch itself.
func ParseEpoch(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("epoch %q is not a number of seconds since 1970", s)
	}
	return time.Unix(n, 0).UTC(), nil
}
