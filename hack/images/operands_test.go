package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/controllers/whalesay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// requireHostFile skips an operand's test when the Debian package its image
// is built from is not installed.
func requireHostFile(t *testing.T, file, pkg string) {
	t.Helper()
	if _, err := os.Stat(file); err != nil {
		missingPackage(t, "%s is missing: the image is built from Debian's %s package (apt-get install %s)", file, pkg, pkg)
	}
	if _, err := exec.LookPath("ldd"); err != nil {
		missingPackage(t, "ldd is missing (Debian's libc-bin): it lists the libraries of the image")
	}
}

// operandImage builds spec as ref, checks that a second build gives the
// same digest, and returns the image read back from its tarball.
func operandImage(t *testing.T, spec Spec, again func() (Spec, error), ref string) (v1.Image, *v1.ConfigFile) {
	t.Helper()
	g := NewWithT(t)
	spec.Created = testEpoch
	img, _ := writeAndRead(t, spec, ref, t.TempDir())
	second, err := again()
	g.Expect(err).NotTo(HaveOccurred())
	second.Created = testEpoch
	img2, err := Build(second)
	g.Expect(err).NotTo(HaveOccurred())
	d1, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	d2, err := img2.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d2).To(Equal(d1), "the same files give the same digest")
	cf := configOf(t, img)
	g.Expect(cf.Created.Time.Equal(testEpoch)).To(BeTrue())
	return img, cf
}

// podUser is the uid a controller's pod runs as, which the image's User
// must match for runAsNonRoot.
func podUser(t *testing.T, pod corev1.PodSpec) int64 {
	t.Helper()
	g := NewWithT(t)
	g.Expect(pod.SecurityContext).NotTo(BeNil())
	g.Expect(pod.SecurityContext.RunAsUser).NotTo(BeNil())
	return *pod.SecurityContext.RunAsUser
}

// expand substitutes $(NAME) in args as the kubelet does with the
// container's environment.
func expand(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		out[i] = a
	}
	return out
}

// startIsolated starts cmd in a network namespace of its own, so that the
// server it runs listens on no address of this machine.
func startIsolated(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("cannot make a network namespace to run %s in: %v", cmd.Path, err)
		}
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}

// mountSecrets writes the items of the secrets that container c of pod
// mounts under root, as the kubelet would: owned by root and the pod's
// fsGroup, with the volume's default mode. Mounts of other Secrets are left
// out.
func mountSecrets(t *testing.T, root string, pod corev1.PodSpec, c corev1.Container, secrets ...*corev1.Secret) {
	t.Helper()
	g := NewWithT(t)
	gid := 0
	if pod.SecurityContext != nil && pod.SecurityContext.FSGroup != nil {
		gid = int(*pod.SecurityContext.FSGroup)
	}
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			for _, s := range secrets {
				if s.Name != v.Secret.SecretName {
					continue
				}
				dir := filepath.Join(root, m.MountPath)
				g.Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
				for _, item := range v.Secret.Items {
					mode := os.FileMode(0o644)
					if v.Secret.DefaultMode != nil {
						mode = os.FileMode(*v.Secret.DefaultMode)
					}
					if item.Mode != nil {
						mode = os.FileMode(*item.Mode)
					}
					data, ok := s.Data[item.Key]
					g.Expect(ok).To(BeTrue(), "Secret %s has the key %s", s.Name, item.Key)
					file := filepath.Join(dir, item.Path)
					g.Expect(os.WriteFile(file, data, 0o600)).To(Succeed())
					g.Expect(os.Chown(file, 0, gid)).To(Succeed())
					g.Expect(os.Chmod(file, mode)).To(Succeed())
				}
			}
		}
	}
}

func TestRedisImage(t *testing.T) {
	requireHostFile(t, RedisServer, "redis-server")
	requireHostFile(t, RedisCLI, "redis-tools")
	g := NewWithT(t)
	ctx := context.Background()
	build := func() (Spec, error) { return Redis(ctx, RedisServer, RedisCLI) }
	spec, err := build()
	g.Expect(err).NotTo(HaveOccurred())
	img, cf := operandImage(t, spec, build, "localhost/redis:test")

	rc := &cachev1.RedisCluster{ObjectMeta: metav1.ObjectMeta{Name: "redis", Namespace: "default"}, Spec: cachev1.RedisClusterSpec{Size: 3}}
	pod := rediscluster.DesiredStatefulSet(rc, rediscluster.Images{Redis: "localhost/redis:test", Exporter: "localhost/redis-exporter:test"}, 3, true).Spec.Template.Spec
	uid := podUser(t, pod)
	g.Expect(imageUser(t, cf)).To(Equal(uid), "the image's user is the pod's")
	g.Expect(uid).To(BeEquivalentTo(RedisUID))
	g.Expect(cf.Config.Entrypoint).To(Equal([]string{"redis-server"}))
	fs := files(t, img)
	g.Expect(fs).To(HaveKey("/usr/bin/redis-server"))
	g.Expect(fs).To(HaveKey("/usr/bin/redis-cli"), "client pods run redis-cli from the image")
	g.Expect(fs["/usr/bin/redis-cli"].hdr.Mode&0o111).NotTo(BeZero(), "redis-cli is executable")
	cliLibs, err := SharedLibraries(ctx, RedisCLI)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cliLibs).NotTo(BeEmpty())
	for _, lib := range cliLibs {
		g.Expect(fs).To(HaveKey(lib), "redis-cli loads %s", lib)
	}
	g.Expect(fs["/data"].hdr.Uid).To(BeEquivalentTo(uid), "redis writes its data to /data")
	g.Expect(fs).NotTo(HaveKey("/bin/sh"))

	needRoot(t)
	root := unpack(t, img)
	version, err := inImage(t, root, cf, uid, []string{"redis-cli", "--version"}).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "redis-cli runs in the image, found in its PATH: %s", version)
	g.Expect(string(version)).To(HavePrefix("redis-cli "))

	// The node reads its users from the ACL Secret's file, as in the pod.
	const password = "client-password"
	access := redisadmin.Access{Passwords: []string{password}, OperatorPassword: "operator-password"}
	c := pod.Containers[0]
	// And, as a new cluster's node, its bus certificate.
	bus, err := rediscluster.DesiredBusSecret(rc, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	mountSecrets(t, root, pod, c, rediscluster.DesiredACLSecret(rc, access), bus)
	// A socket in the file system, which the clients, in the same root but
	// not the server's network namespace, reach.
	sock := path.Join(cf.Config.WorkingDir, "redis.sock")
	argv := append(append([]string{}, c.Command...), expand(c.Args, map[string]string{"POD_IP": "127.0.0.1"})...)
	cmd := inImage(t, root, cf, uid, append(argv, "--unixsocket", sock))
	out := gbytes.NewBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	startIsolated(t, cmd)
	g.Eventually(out, 20*time.Second).Should(gbytes.Say("Ready to accept connections"),
		"redis-server runs in the image with the controller's arguments")

	// cli runs redis-cli in the image as a client pod does, the password,
	// if any, in REDISCLI_AUTH.
	cli := func(password string, args ...string) (string, error) {
		cmd := inImage(t, root, cf, uid, append([]string{"redis-cli", "-s", sock}, args...))
		if password != "" {
			cmd.Env = append(append([]string{}, cmd.Env...), "REDISCLI_AUTH="+password)
		}
		b, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("redis-cli %s: %w: %s", strings.Join(args, " "), err, b)
		}
		return strings.TrimSpace(string(b)), err
	}
	refused, _ := cli("", "PING")
	g.Expect(refused).To(ContainSubstring("NOAUTH"), "a client without the password is refused")
	g.Expect(cli(password, "PING")).To(Equal("PONG"))
	// The one node serves every slot, so that it takes writes. (redis-cli
	// takes -c, which follows redirections, with -h only, not -s.)
	g.Expect(cli(password, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")).To(Equal("OK"))
	g.Eventually(func() (string, error) { return cli(password, "SET", "greeting", "hello") },
		10*time.Second, 200*time.Millisecond).Should(Equal("OK"))
	g.Expect(cli(password, "GET", "greeting")).To(Equal("hello"))
	denied, _ := cli("", "GET", "greeting")
	g.Expect(denied).To(ContainSubstring("NOAUTH"))

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	g.Expect(cmd.Wait()).To(Succeed(), "redis-server stops on SIGTERM: %s", out.Contents())
}

func TestMemcachedImage(t *testing.T) {
	requireHostFile(t, MemcachedBinary, "memcached")
	g := NewWithT(t)
	ctx := context.Background()
	build := func() (Spec, error) { return Memcached(ctx, MemcachedBinary) }
	spec, err := build()
	g.Expect(err).NotTo(HaveOccurred())
	img, cf := operandImage(t, spec, build, "localhost/memcached:test")

	m := &cachev1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "memcached", Namespace: "default"},
		Spec:       cachev1alpha1.MemcachedSpec{Size: 1, ContainerPort: 11211},
	}
	pod := memcached.DesiredDeployment(m, "localhost/memcached:test", memcached.DefaultExporterImage).Spec.Template.Spec
	uid := podUser(t, pod)
	g.Expect(imageUser(t, cf)).To(Equal(uid), "the image's user is the pod's")
	g.Expect(uid).To(BeEquivalentTo(MemcachedUID))
	g.Expect(cf.Config.Entrypoint).To(Equal([]string{"memcached"}))
	g.Expect(files(t, img)).To(HaveKey("/usr/bin/memcached"))

	needRoot(t)
	root := unpack(t, img)
	c := pod.Containers[0]
	cmd := inImage(t, root, cf, uid, append(append([]string{}, c.Command...), c.Args...))
	out := gbytes.NewBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	startIsolated(t, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// memcached says nothing when it starts; one that cannot (a missing
	// library, an option it refuses) exits at once.
	g.Consistently(exited, 1500*time.Millisecond).ShouldNot(Receive(), "memcached keeps running: %s", out.Contents())
	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	g.Eventually(exited, 10*time.Second).Should(Receive())
}

func TestWhalesayImage(t *testing.T) {
	requireHostFile(t, Cowsay, "cowsay")
	for _, f := range []string{CowsDir, UTF8Locale} {
		if _, err := os.Stat(f); err != nil {
			missingPackage(t, "%s is missing (Debian's cowsay and libc-bin packages)", f)
		}
	}
	g := NewWithT(t)
	ctx := context.Background()
	build := func() (Spec, error) { return Whalesay(ctx, Cowsay, CowsDir, UTF8Locale) }
	spec, err := build()
	g.Expect(err).NotTo(HaveOccurred())
	img, cf := operandImage(t, spec, build, "localhost/whalesay:test")

	// Not ASCII, so that the bubble fits only when cowsay counts characters.
	const message = "Grüße aus dem Cluster, ça va?"
	ws := &whalesayv1alpha1.WhaleSay{
		ObjectMeta: metav1.ObjectMeta{Name: "whalesay", Namespace: "default"},
		Spec:       whalesayv1alpha1.WhaleSaySpec{Message: message},
	}
	pod := whalesay.DesiredJob(ws, "localhost/whalesay:test").Spec.Template.Spec
	uid := podUser(t, pod)
	g.Expect(imageUser(t, cf)).To(Equal(uid), "the image's user is the pod's")
	g.Expect(uid).To(BeEquivalentTo(WhalesayUID))
	fs := files(t, img)
	g.Expect(fs).To(HaveKey("/usr/bin/perl"))
	g.Expect(fs).To(HaveKey("/usr/games/cowsay"))
	g.Expect(fs).To(HaveKey("/usr/share/cowsay/cows/default.cow"))
	g.Expect(fs).NotTo(HaveKey("/bin/sh"))

	needRoot(t)
	root := unpack(t, img)
	c := pod.Containers[0]
	g.Expect(c.Command).To(Equal([]string{"cowsay"}), "the Job runs cowsay, found in the image's PATH")
	cmd := inImage(t, root, cf, uid, append(append([]string{}, c.Command...), c.Args...))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	g.Expect(err).NotTo(HaveOccurred(), "cowsay: %s", stderr.String())
	g.Expect(stderr.String()).To(BeEmpty(), "no warning, of the locale or a module")
	lines := strings.Split(string(out), "\n")
	g.Expect(lines[1]).To(Equal("< "+message+" >"), "%s", out)
	g.Expect(lines[0]).To(Equal(" "+strings.Repeat("_", utf8.RuneCountInString(message)+2)),
		"the bubble is as wide as the message's characters, under the UTF-8 locale:\n%s", out)
	g.Expect(string(out)).To(ContainSubstring("(oo)"))
}

// TestRedisExporterImage: the image of the pinned redis_exporter that make
// tools builds is the static binary, its entrypoint, run as a numeric
// nonroot user; it runs the RedisCluster sidecar's arguments.
func TestRedisExporterImage(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	bin := reporoottest.RequireTool(t, root, "REDIS_EXPORTER", "redis_exporter")
	g.Expect(isStatic(t, bin)).To(BeTrue(), "the image holds no library")
	build := func() (Spec, error) { return RedisExporter(bin) }
	spec, err := build()
	g.Expect(err).NotTo(HaveOccurred())
	img, cf := operandImage(t, spec, build, "localhost/redis-exporter:test")
	g.Expect(cf.Config.Entrypoint).To(Equal([]string{"/redis_exporter"}))
	uid := imageUser(t, cf)
	g.Expect(uid).To(BeEquivalentTo(RedisExporterUID))
	g.Expect(uid).NotTo(BeZero())
	fs := files(t, img)
	g.Expect(fs).To(HaveKey("/redis_exporter"))
	g.Expect(fs["/redis_exporter"].hdr.Mode & 0o111).NotTo(BeZero())

	// The sidecar runs the image's entrypoint with its arguments: the
	// binary knows every flag they pass.
	rc := &cachev1.RedisCluster{ObjectMeta: metav1.ObjectMeta{Name: "redis", Namespace: "default"}, Spec: cachev1.RedisClusterSpec{Size: 3, TLS: &cachev1.TLSSpec{SecretName: "cert"}}}
	pod := rediscluster.DesiredStatefulSet(rc, rediscluster.Images{Redis: "localhost/redis:test", Exporter: "localhost/redis-exporter:test"}, 3, false).Spec.Template.Spec
	var args []string
	for _, c := range pod.Containers {
		if c.Name == rediscluster.ExporterContainerName {
			g.Expect(c.Command).To(BeEmpty(), "the image's entrypoint runs")
			args = c.Args
		}
	}
	g.Expect(args).NotTo(BeEmpty())
	out, err := exec.Command(bin, append(args, "-version")...).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(string(out)).NotTo(ContainSubstring("flag provided but not defined"))
}

func TestPauseImage(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		missingPackage(t, "gcc is not installed (apt-get install gcc libc6-dev): it builds the pause program")
	}
	g := NewWithT(t)
	bin := t.TempDir() + "/pause"
	if err := BuildPause(context.Background(), "pause/pause.c", bin); err != nil {
		if strings.Contains(err.Error(), "cannot find -lc") {
			missingPackage(t, "the static C library is missing (apt-get install libc6-dev)")
		}
		t.Fatal(err)
	}
	g.Expect(isStatic(t, bin)).To(BeTrue(), "pause needs no library")
	build := func() (Spec, error) { return Pause(bin) }
	spec, err := build()
	g.Expect(err).NotTo(HaveOccurred())
	img, cf := operandImage(t, spec, build, "localhost/pause:test")
	g.Expect(cf.Config.Entrypoint).To(Equal([]string{"/pause"}))
	g.Expect(imageUser(t, cf)).To(BeEquivalentTo(PauseUID))

	// As root, the image's pause runs as its user in the image; otherwise
	// the binary it was built from runs.
	run := func() *exec.Cmd { return exec.Command(bin) }
	if os.Geteuid() == 0 {
		root := unpack(t, img)
		run = func() *exec.Cmd { return inImage(t, root, cf, PauseUID, cf.Config.Entrypoint) }
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := run()
		g.Expect(cmd.Start()).To(Succeed())
		// Signal only once pause catches it: before, the signal would kill it.
		g.Eventually(func() bool { return catches(cmd.Process.Pid, sig) }, 5*time.Second, 10*time.Millisecond).Should(BeTrue())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		g.Consistently(exited, 200*time.Millisecond).ShouldNot(Receive(), "pause sleeps")
		g.Expect(cmd.Process.Signal(sig)).To(Succeed())
		var err error
		g.Eventually(exited, 5*time.Second).Should(Receive(&err))
		g.Expect(err).NotTo(HaveOccurred(), "pause exits 0 on %s", sig)
	}
}

// catches tells whether the process pid has a handler for sig, from the
// SigCgt mask in /proc/PID/status.
func catches(pid int, sig syscall.Signal) bool {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			return err == nil && m&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}
