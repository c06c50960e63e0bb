package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// DefaultRegistryAddr is where imagebuild registry listens unless told
// otherwise: the address containerd's mirror of docker.io names.
const DefaultRegistryAddr = "127.0.0.1:5000"

// CheckLoopback tells whether addr, a host:port to listen on, is a
// loopback IP address such as 127.0.0.1:5000 or [::1]:5000. Anything else
// is an error: an empty host or 0.0.0.0 (every interface), another
// machine's address, or a host name, which could resolve to any of those.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return fmt.Errorf("address %q: port %q is not a number from 0 to 65535", addr, port)
	}
	ip := net.ParseIP(host)
	switch {
	case host == "":
		return fmt.Errorf("address %q listens on every interface: give a loopback IP address such as %s", addr, DefaultRegistryAddr)
	case ip == nil:
		return fmt.Errorf("address %q: %q is not an IP address: give a loopback one such as %s", addr, host, DefaultRegistryAddr)
	case !ip.IsLoopback():
		return fmt.Errorf("address %q is not a loopback address: give one such as %s", addr, DefaultRegistryAddr)
	}
	return nil
}

// ListenLoopback listens on addr, which must be a loopback address (see
// CheckLoopback); port 0 picks a free port.
func ListenLoopback(addr string) (net.Listener, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		_ = ln.Close()
		return nil, fmt.Errorf("listening on %q gave %s, not a loopback address", addr, ln.Addr())
	}
	return ln, nil
}

// MirrorPath is where a registry mirror is asked for the image ref, as
// containerd names it: its repository's path and its tag (latest when ref
// names none). A mirror of docker.io is asked for
// docker.io/crccheck/hello-world:latest, or crccheck/hello-world, as
// /v2/crccheck/hello-world/manifests/latest, and for Docker's official
// images, such as redis:7, under library/: /v2/library/redis/manifests/7.
// A first component with a dot or a colon, localhost, or one with capitals
// names another registry, as in Docker's names: localhost/redis:7 is redis
// on localhost, whose mirror is asked for /v2/redis/manifests/7.
func MirrorPath(ref string) (repository, tag string, err error) {
	if _, err := name.NewTag(ref); err != nil {
		return "", "", fmt.Errorf("image name %q: %w", ref, err)
	}
	rest, registryName := ref, ""
	if first, after, ok := strings.Cut(ref, "/"); ok &&
		(strings.ContainsAny(first, ".:") || first == "localhost" || first != strings.ToLower(first)) {
		registryName, rest = first, after
	}
	repository, tag = rest, "latest"
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		repository, tag = rest[:i], rest[i+1:]
	}
	switch registryName {
	case "", "docker.io", "index.docker.io":
		if !strings.Contains(repository, "/") {
			repository = "library/" + repository
		}
	}
	return repository, tag, nil
}

// RegistryImage is an image a Registry serves, at /v2/Repository/ and
// under Tag.
type RegistryImage struct {
	// Ref is the image's name where it came from, such as the tag of a
	// tarball.
	Ref string
	// Repository is the repository's path, such as crccheck/hello-world.
	Repository string
	// Tag is the tag, such as latest.
	Tag string
	// Image is the image.
	Image v1.Image
}

// TarballImages reads every tagged image of a docker-archive tarball, such
// as the ones WriteTarball writes, at the path a mirror of its registry is
// asked for it (see MirrorPath). A tarball with an image that has no tag
// is an error: the registry would have no name for it.
func TarballImages(file string) ([]RegistryImage, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(file) }
	manifest, err := tarball.LoadManifest(opener)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(manifest) == 0 {
		return nil, fmt.Errorf("%s holds no image", file)
	}
	var out []RegistryImage
	for i, desc := range manifest {
		if len(desc.RepoTags) == 0 {
			return nil, fmt.Errorf("%s: image %d (%s) has no tag", file, i+1, desc.Config)
		}
		for _, ref := range desc.RepoTags {
			tag, err := name.NewTag(ref)
			if err != nil {
				return nil, fmt.Errorf("%s: image name %q: %w", file, ref, err)
			}
			repository, tagStr, err := MirrorPath(ref)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			img, err := tarball.Image(opener, &tag)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", file, ref, err)
			}
			out = append(out, RegistryImage{Ref: ref, Repository: repository, Tag: tagStr, Image: img})
		}
	}
	return out, nil
}

// Registry is an OCI distribution registry held in memory
// (go-containerregistry's pkg/registry): Load puts images into it, Serve
// answers on a loopback listener.
type Registry struct {
	handler http.Handler
	// mu guards loaded, and makes one Load at a time.
	mu sync.Mutex
	// loaded maps repository:tag to the digest loaded there.
	loaded map[string]v1.Hash
}

// NewRegistry is an empty registry that logs every request to logger
// (nothing when it is nil).
func NewRegistry(logger *log.Logger) *Registry {
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	return &Registry{
		handler: registry.New(registry.Logger(logger)),
		loaded:  map[string]v1.Hash{},
	}
}

// Handler answers the registry's HTTP API, /v2/.
func (r *Registry) Handler() http.Handler {
	return r.handler
}

// call makes one request of the registry's API in this process, with
// body and the header contentType when it is not empty, and returns the
// error the registry answers unless the status is want.
func (r *Registry) call(ctx context.Context, method, target, contentType string, body []byte, want int) error {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		return fmt.Errorf("%s %s: %d %s", method, target, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return nil
}

// putBlob uploads blob, whose digest is digest, to repository in one
// request.
func (r *Registry) putBlob(ctx context.Context, repository string, digest v1.Hash, blob []byte) error {
	target := "/v2/" + repository + "/blobs/uploads/?digest=" + url.QueryEscape(digest.String())
	return r.call(ctx, http.MethodPost, target, "", blob, http.StatusCreated)
}

// push uploads img's layers, config and manifest to repository:tag
// through the distribution API, in this process.
func (r *Registry) push(ctx context.Context, img v1.Image, repository, tag string) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		digest, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		blob, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			return fmt.Errorf("layer %s: %w", digest, err)
		}
		if err := r.putBlob(ctx, repository, digest, blob); err != nil {
			return err
		}
	}
	configName, err := img.ConfigName()
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	if err := r.putBlob(ctx, repository, configName, config); err != nil {
		return err
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	mediaType, err := img.MediaType()
	if err != nil {
		return err
	}
	return r.call(ctx, http.MethodPut, "/v2/"+repository+"/manifests/"+tag, string(mediaType), manifest, http.StatusCreated)
}

// Load puts each image into the registry at its repository and tag,
// through the registry's own API in this process: no connection is made.
// The same digest twice at one tag is fine; two different ones are an
// error.
func (r *Registry) Load(ctx context.Context, imgs ...RegistryImage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ri := range imgs {
		digest, err := ri.Image.Digest()
		if err != nil {
			return fmt.Errorf("%s: %w", ri.Ref, err)
		}
		// The name a client would ask for: a valid repository and tag.
		if _, err := name.NewTag("registry.invalid/"+ri.Repository+":"+ri.Tag, name.StrictValidation); err != nil {
			return fmt.Errorf("%s: %w", ri.Ref, err)
		}
		key := ri.Repository + ":" + ri.Tag
		if old, ok := r.loaded[key]; ok {
			if old != digest {
				return fmt.Errorf("%s: %s already holds %s, not %s", ri.Ref, key, old, digest)
			}
			continue
		}
		if err := r.push(ctx, ri.Image, ri.Repository, ri.Tag); err != nil {
			return fmt.Errorf("loading %s as %s: %w", ri.Ref, key, err)
		}
		r.loaded[key] = digest
	}
	return nil
}

// Loaded lists what the registry holds, "repository:tag digest" a line,
// sorted.
func (r *Registry) Loaded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.loaded))
	for k, d := range r.loaded {
		out = append(out, k+" "+d.String())
	}
	sort.Strings(out)
	return out
}

// Serve answers the registry's API on ln until ctx is done, then stops
// accepting, lets the requests under way finish for up to five seconds,
// and returns nil.
func (r *Registry) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           r.handler,
		ReadHeaderTimeout: 30 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// WritePIDFile writes this process's id to file, through a temporary file
// and a rename, so a reader never sees half of it.
func WritePIDFile(file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// RemovePIDFile removes file if it still holds this process's id: a
// registry started since owns it otherwise.
func RemovePIDFile(file string) error {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		return nil
	}
	return os.Remove(file)
}
