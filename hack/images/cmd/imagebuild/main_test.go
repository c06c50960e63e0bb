package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/images"
)

// runMainEnv makes the test binary run main instead of the tests, so that
// a test can start imagebuild as its own process and signal it.
const runMainEnv = "IMAGEBUILD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// imagebuild is the command imagebuild args, run by the test binary.
func imagebuild(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

// readyLine matches the line registry prints once it answers.
var readyLine = regexp.MustCompile(`^registry ready on http://(127\.0\.0\.1:\d+) `)

// TestRegistryCommand starts imagebuild registry on an ephemeral loopback
// port with a tarball, as make registry-up does, asks it for the image as
// containerd's mirror of docker.io would, and stops it with SIGTERM.
func TestRegistryCommand(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	img, err := images.Build(images.Spec{
		Files:      []images.File{images.Content("/www/index.html", 0o644, []byte("hello world\n"))},
		Entrypoint: []string{"/bin/busybox"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	tarball := filepath.Join(dir, "hello-world.tar")
	g.Expect(images.WriteTarball(tarball, images.HelloWorldRef, img)).To(Succeed())
	digest, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	pidFile := filepath.Join(dir, "run", "registry.pid")

	cmd := imagebuild(t, "registry", "-addr", "127.0.0.1:0", "-pidfile", pidFile, tarball)
	stdout, err := cmd.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	g.Expect(cmd.Start()).To(Succeed())
	exited, done := make(chan error, 1), make(chan struct{})
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})

	var ready string
	g.Eventually(lines, 10*time.Second).Should(Receive(&ready), "the ready line: %s", &stderr)
	m := readyLine.FindStringSubmatch(ready)
	g.Expect(m).NotTo(BeNil(), "%q", ready)
	g.Expect(ready).To(ContainSubstring("crccheck/hello-world:latest " + digest.String()))
	pid, err := os.ReadFile(pidFile)
	g.Expect(err).NotTo(HaveOccurred(), "the pid file is there once it is ready")
	g.Expect(strings.TrimSpace(string(pid))).To(Equal(strconv.Itoa(cmd.Process.Pid)))

	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	req, err := http.NewRequest(http.MethodHead, "http://"+m[1]+"/v2/crccheck/hello-world/manifests/latest?ns=docker.io", nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := client.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Body.Close()).To(Succeed())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(resp.Header.Get("Docker-Content-Digest")).To(Equal(digest.String()))

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	g.Eventually(lines, 5*time.Second).Should(Receive(HavePrefix("registry on http://" + m[1] + " stopped")))
	var waitErr error
	g.Eventually(exited, 5*time.Second).Should(Receive(&waitErr))
	g.Expect(waitErr).NotTo(HaveOccurred(), "it exits 0 on SIGTERM: %s", &stderr)
	g.Expect(pidFile).NotTo(BeAnExistingFile(), "it removes its pid file")
}

func TestRegistryCommandRefusesOtherAddresses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:5000", ":5000", "[::]:5000", "10.87.0.1:5000", "localhost:5000"} {
		t.Run(addr, func(t *testing.T) {
			g := NewWithT(t)
			err := run(context.Background(), []string{"registry", "-addr", addr}, io.Discard)
			g.Expect(err).To(MatchError(ContainSubstring(addr)))
			g.Expect(err).To(MatchError(ContainSubstring("127.0.0.1:5000")), "the error says what to give")
		})
	}
	// As a process: one line on stderr, exit status 1, nothing listening.
	g := NewWithT(t)
	out, err := imagebuild(t, "registry", "-addr", "0.0.0.0:0").CombinedOutput()
	var exitErr *exec.ExitError
	g.Expect(err).To(BeAssignableToTypeOf(exitErr))
	g.Expect(string(out)).To(Equal("imagebuild: registry: address \"0.0.0.0:0\" is not a loopback address: give one such as 127.0.0.1:5000\n"))
}
