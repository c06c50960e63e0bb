package images

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
)

// sampleTDSet is the seed sample samples/tdset.yaml, which the local
// cluster applies unchanged.
func sampleTDSet(t *testing.T) *schedulev1.TDSet {
	t.Helper()
	g := NewWithT(t)
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "samples", "tdset.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	tds := &schedulev1.TDSet{}
	g.Expect(yaml.UnmarshalStrict(b, tds)).To(Succeed())
	return tds
}

// sampleTDSetV2 is the seed sample as the controller sees it, converted to v2.
func sampleTDSetV2(t *testing.T) *schedulev2.TDSet {
	t.Helper()
	hub := &schedulev2.TDSet{}
	NewWithT(t).Expect(sampleTDSet(t).ConvertTo(hub)).To(Succeed())
	return hub
}

// freeLoopbackPort is a TCP port on 127.0.0.1 that nothing listened on a
// moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	port := ln.Addr().(*net.TCPAddr).Port
	NewWithT(t).Expect(ln.Close()).To(Succeed())
	return port
}

// TestHelloWorldImage builds the image that stands in for the TDSet
// sample's crccheck/hello-world and checks it against the sample and the
// pod the TDSet controller makes of it: the name the registry serves it
// under, the user, the port and the command line. As root, the image's
// command runs in the unpacked image as its user, as process 1 of a PID
// namespace like a container's, answers GET / with the page, and stops at
// once on SIGTERM.
func TestHelloWorldImage(t *testing.T) {
	if _, err := os.Stat(Busybox); err != nil {
		missingPackage(t, "%s is missing: the image is built from Debian's busybox-static package (apt-get install busybox-static)", Busybox)
	}
	g := NewWithT(t)
	g.Expect(isStatic(t, Busybox)).To(BeTrue(), "the image holds busybox alone: it must need no library")
	build := func() (Spec, error) { return HelloWorld(Busybox) }
	spec, err := build()
	g.Expect(err).NotTo(HaveOccurred())
	img, cf := operandImage(t, spec, build, HelloWorldRef)

	// The sample names the image without a tag, so the kubelet pulls it
	// from docker.io, whose mirror is asked for what MirrorPath says.
	tds := sampleTDSet(t)
	sampleRef, err := name.ParseReference(tds.Spec.Container.Image)
	g.Expect(err).NotTo(HaveOccurred())
	ours, err := name.NewTag(HelloWorldRef)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sampleRef.Name()).To(Equal(ours.Name()), "the image stands in for the sample's %s", tds.Spec.Container.Image)
	sampleRepo, sampleTag, err := MirrorPath(tds.Spec.Container.Image)
	g.Expect(err).NotTo(HaveOccurred())
	repo, tag, err := MirrorPath(HelloWorldRef)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{repo, tag}).To(Equal([]string{sampleRepo, sampleTag}))
	g.Expect(tds.Spec.Container.Port).To(BeEquivalentTo(HelloWorldPort), "the sample's port is the one httpd serves")

	pod := tdset.DesiredDeployment(sampleTDSetV2(t), ptr.To[int32](1)).Spec.Template.Spec
	uid := podUser(t, pod)
	g.Expect(imageUser(t, cf)).To(Equal(uid), "the image's user is the pod's")
	g.Expect(uid).To(BeEquivalentTo(HelloWorldUID))
	c := pod.Containers[0]
	g.Expect(c.Command).To(BeEmpty(), "the pod runs the image's entrypoint")
	g.Expect(c.Args).To(BeEmpty(), "the pod runs the image's cmd")
	g.Expect(c.Ports).To(HaveLen(1))
	g.Expect(c.Ports[0].ContainerPort).To(BeEquivalentTo(HelloWorldPort))
	g.Expect(c.ReadinessProbe.TCPSocket.Port.StrVal).To(Equal(c.Ports[0].Name), "the probe connects to httpd's port")
	g.Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())

	g.Expect(cf.Config.Entrypoint).To(Equal([]string{Busybox, "sh", "-c", helloWorldScript, "httpd"}))
	g.Expect(cf.Config.Cmd).To(Equal([]string{"-p", strconv.Itoa(HelloWorldPort), "-h", HelloWorldRoot}))
	fs := files(t, img)
	g.Expect(fs).To(HaveKey(Busybox))
	g.Expect(fs[Busybox].hdr.Mode).To(BeEquivalentTo(0o755))
	g.Expect(string(fs["/www/index.html"].data)).To(Equal(HelloWorldPage))
	// Nothing is the user's or writable by others: httpd writes nothing,
	// so the read-only root file system of the pod changes nothing.
	for p, e := range fs {
		g.Expect(e.hdr.Uid).To(BeZero(), "%s is root's", p)
		g.Expect(e.hdr.Mode&0o022).To(BeZero(), "%s is writable by root alone", p)
	}

	needRoot(t)
	root := unpack(t, img)
	// A container's /dev has null, which the shell gives httpd as input.
	g.Expect(os.Mkdir(filepath.Join(root, "dev"), 0o755)).To(Succeed())
	g.Expect(syscall.Mknod(filepath.Join(root, "dev", "null"), syscall.S_IFCHR|0o666, 1<<8|3)).To(Succeed())
	g.Expect(os.Chmod(filepath.Join(root, "dev", "null"), 0o666)).To(Succeed())
	port := freeLoopbackPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// The image's command, with httpd on a loopback port instead of *:8000.
	argv := append(append([]string{}, cf.Config.Entrypoint...), "-p", addr, "-h", HelloWorldRoot)
	cmd := inImage(t, root, cf, uid, argv)
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	out := gbytes.NewBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", argv, err)
	}
	exited, done := make(chan error, 1), make(chan struct{})
	go func() {
		exited <- cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})

	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	get := func() (string, error) {
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close() //nolint:errcheck // read only
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", &statusError{resp.StatusCode, string(b)}
		}
		return string(b), nil
	}
	g.Eventually(get, 10*time.Second, 50*time.Millisecond).Should(ContainSubstring("Hello World"),
		"busybox httpd answers GET / as %d: %s", uid, out.Contents())
	g.Expect(get()).To(Equal(HelloWorldPage))

	// The kubelet stops a container with SIGTERM to its process 1.
	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	var exitErr error
	g.Eventually(exited, 5*time.Second).Should(Receive(&exitErr), "SIGTERM stops the container at once")
	g.Expect(exitErr).NotTo(HaveOccurred(), "it exits 0: %s", out.Contents())
	g.Eventually(func() error {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err
	}, 5*time.Second, 50*time.Millisecond).Should(HaveOccurred(), "httpd ends with the shell")
}

// statusError is an HTTP answer other than 200.
type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string {
	return "HTTP " + strconv.Itoa(e.code) + ": " + e.body
}

// TestHelloWorldTarball writes the image as make does and reads it back
// the way imagebuild registry loads it: at the path docker.io's mirror is
// asked for crccheck/hello-world.
func TestHelloWorldTarball(t *testing.T) {
	if _, err := os.Stat(Busybox); err != nil {
		missingPackage(t, "%s is missing (apt-get install busybox-static)", Busybox)
	}
	g := NewWithT(t)
	spec, err := HelloWorld(Busybox)
	g.Expect(err).NotTo(HaveOccurred())
	spec.Created = testEpoch
	img, file := writeAndRead(t, spec, HelloWorldRef, t.TempDir())
	imgs, err := TarballImages(file)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(imgs).To(HaveLen(1))
	g.Expect(imgs[0].Repository).To(Equal("crccheck/hello-world"))
	g.Expect(imgs[0].Tag).To(Equal("latest"))
	want, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	got, err := imgs[0].Image.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want))
	g.Expect(NewRegistry(nil).Load(context.Background(), imgs...)).To(Succeed())
}
