package images

import (
	"context"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/gomega"
)

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		// refused is a substring of the error, empty when addr is accepted.
		refused string
	}{
		{addr: "127.0.0.1:5000"},
		{addr: "127.0.0.1:0"},
		{addr: "127.1.2.3:5000"},
		{addr: "[::1]:5000"},
		{addr: "0.0.0.0:5000", refused: "not a loopback address"},
		{addr: ":5000", refused: "every interface"},
		{addr: "[::]:5000", refused: "not a loopback address"},
		{addr: "10.87.0.1:5000", refused: "not a loopback address"},
		{addr: "192.168.1.10:5000", refused: "not a loopback address"},
		{addr: "localhost:5000", refused: "not an IP address"},
		{addr: "registry.example:5000", refused: "not an IP address"},
		{addr: "127.0.0.1", refused: "missing port"},
		{addr: "127.0.0.1:http", refused: "not a number"},
		{addr: "127.0.0.1:70000", refused: "not a number"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckLoopback(tc.addr)
			if tc.refused == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.refused)))
		})
	}
}

func TestListenLoopbackRefusesOtherAddresses(t *testing.T) {
	g := NewWithT(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		ln, err := ListenLoopback(addr)
		g.Expect(err).To(HaveOccurred(), "%s listens beyond this machine", addr)
		g.Expect(ln).To(BeNil())
	}
	ln, err := ListenLoopback("127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ln.Addr().(*net.TCPAddr).IP.IsLoopback()).To(BeTrue())
	g.Expect(ln.Close()).To(Succeed())
}

func TestMirrorPath(t *testing.T) {
	for _, tc := range []struct {
		ref, repository, tag string
	}{
		// What the TDSet sample names, and what a containerd mirror of
		// docker.io is asked for it.
		{ref: "crccheck/hello-world", repository: "crccheck/hello-world", tag: "latest"},
		{ref: HelloWorldRef, repository: "crccheck/hello-world", tag: "latest"},
		{ref: "index.docker.io/crccheck/hello-world:v2", repository: "crccheck/hello-world", tag: "v2"},
		// Docker's official images live under library/.
		{ref: "redis:7.4-alpine", repository: "library/redis", tag: "7.4-alpine"},
		{ref: "docker.io/library/memcached:1.6.45-alpine", repository: "library/memcached", tag: "1.6.45-alpine"},
		{ref: "docker/whalesay:latest", repository: "docker/whalesay", tag: "latest"},
		// Another registry's image: the path its mirror would be asked.
		{ref: "localhost/redis:7.0.15-1_deb12u10", repository: "redis", tag: "7.0.15-1_deb12u10"},
		{ref: "localhost/whalesay", repository: "whalesay", tag: "latest"},
		{ref: "127.0.0.1:5000/team/app:1", repository: "team/app", tag: "1"},
		{ref: "quay.io/name", repository: "name", tag: "latest"},
		{ref: "docker.io/crccheck/hello-world", repository: "crccheck/hello-world", tag: "latest"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			g := NewWithT(t)
			repository, tag, err := MirrorPath(tc.ref)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(repository).To(Equal(tc.repository))
			g.Expect(tag).To(Equal(tc.tag))
		})
	}
	for _, bad := range []string{"Not A Name", "redis@sha256:" + strings.Repeat("0", 64), ""} {
		_, _, err := MirrorPath(bad)
		NewWithT(t).Expect(err).To(HaveOccurred(), "%q", bad)
	}
}

// tinyImage is a small image whose only file holds text, so that two of
// them differ.
func tinyImage(t *testing.T, text string) v1.Image {
	t.Helper()
	img, err := Build(Spec{
		Files:      []File{Content("/hello.txt", 0o644, []byte(text))},
		Entrypoint: []string{"/nothing"},
		User:       userSpec(HelloWorldUID),
		Created:    testEpoch,
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return img
}

// startRegistry serves reg on an ephemeral loopback port until the test
// ends and returns its host:port.
func startRegistry(t *testing.T, reg *Registry) string {
	t.Helper()
	g := NewWithT(t)
	ln, err := ListenLoopback("127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- reg.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		NewWithT(t).Expect(<-served).To(Succeed(), "the registry stops cleanly")
	})
	return ln.Addr().String()
}

// testLogger logs the registry's requests to the test's log.
func testLogger(t *testing.T) *log.Logger {
	return log.New(logWriter{t}, "registry: ", 0)
}

// logWriter writes to a test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestRegistryServesTarballs writes tarballs as make images does, loads
// them into a registry on a loopback port, and pulls them back with
// go-containerregistry's client at the paths a containerd mirror of
// docker.io asks for: the same digests.
func TestRegistryServesTarballs(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	hello, redis := tinyImage(t, "hello world\n"), tinyImage(t, "redis\n")
	helloTar, redisTar := filepath.Join(dir, "hello.tar"), filepath.Join(dir, "redis.tar")
	g.Expect(WriteTarball(helloTar, HelloWorldRef, hello)).To(Succeed())
	g.Expect(WriteTarball(redisTar, "redis:7", redis)).To(Succeed())

	reg := NewRegistry(testLogger(t))
	for _, file := range []string{helloTar, redisTar} {
		imgs, err := TarballImages(file)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(imgs).To(HaveLen(1))
		g.Expect(reg.Load(context.Background(), imgs...)).To(Succeed())
	}
	helloDigest, err := hello.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	redisDigest, err := redis.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reg.Loaded()).To(Equal([]string{
		"crccheck/hello-world:latest " + helloDigest.String(),
		"library/redis:7 " + redisDigest.String(),
	}))

	addr := startRegistry(t, reg)
	for _, tc := range []struct {
		path string
		want v1.Image
	}{
		{path: "crccheck/hello-world:latest", want: hello},
		{path: "library/redis:7", want: redis},
	} {
		ref, err := name.NewTag(addr+"/"+tc.path, name.Insecure)
		g.Expect(err).NotTo(HaveOccurred())
		pulled, err := remote.Image(ref)
		g.Expect(err).NotTo(HaveOccurred(), "pulling %s", ref)
		want, err := tc.want.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		got, err := pulled.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), "%s is the image of the tarball", ref)
		// The layers and the config come back too, checked against their
		// digests.
		g.Expect(files(t, pulled)).To(HaveKey("/hello.txt"))
		g.Expect(configOf(t, pulled).Config.User).To(Equal(userSpec(HelloWorldUID)))
	}

	// What containerd asks a mirror: HEAD, then GET, with ?ns=docker.io.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodHead, "http://"+addr+"/v2/crccheck/hello-world/manifests/latest?ns=docker.io", nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := client.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Body.Close()).To(Succeed())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(resp.Header.Get("Docker-Content-Digest")).To(Equal(helloDigest.String()))
	resp, err = client.Get("http://" + addr + "/v2/crccheck/not-there/manifests/latest?ns=docker.io")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Body.Close()).To(Succeed())
	g.Expect(resp.StatusCode).To(Equal(http.StatusNotFound))
}

func TestRegistryLoad(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	a, b := tinyImage(t, "a"), tinyImage(t, "b")
	reg := NewRegistry(nil)
	g.Expect(reg.Load(ctx, RegistryImage{Ref: "x/a:1", Repository: "x/a", Tag: "1", Image: a})).To(Succeed())
	g.Expect(reg.Load(ctx, RegistryImage{Ref: "x/a:1", Repository: "x/a", Tag: "1", Image: a})).To(Succeed(), "the same image again is fine")
	g.Expect(reg.Load(ctx, RegistryImage{Ref: "y/a:1", Repository: "x/a", Tag: "1", Image: b})).
		To(MatchError(ContainSubstring("already holds")), "another image at the same tag is refused")
	g.Expect(reg.Load(ctx, RegistryImage{Ref: "bad", Repository: "Not Valid", Tag: "1", Image: b})).To(HaveOccurred())
	g.Expect(reg.Loaded()).To(HaveLen(1))
}

func TestTarballImagesErrors(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	_, err := TarballImages(filepath.Join(dir, "missing.tar"))
	g.Expect(err).To(HaveOccurred())

	// An image saved by digest has no tag: the registry has no name for it.
	img := tinyImage(t, "untagged")
	digest, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	ref, err := name.NewDigest("example.com/untagged@" + digest.String())
	g.Expect(err).NotTo(HaveOccurred())
	file := filepath.Join(dir, "untagged.tar")
	f, err := os.Create(file)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tarball.MultiRefWrite(map[name.Reference]v1.Image{ref: img}, f)).To(Succeed())
	g.Expect(f.Close()).To(Succeed())
	_, err = TarballImages(file)
	g.Expect(err).To(MatchError(ContainSubstring("has no tag")))
}
