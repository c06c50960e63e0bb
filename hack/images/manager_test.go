package images

import (
	"bytes"
	"context"
	"debug/elf"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// repoRoot is the main module's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := reporoot.Find()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return root
}

// isStatic tells whether the ELF file needs no dynamic loader.
func isStatic(t *testing.T, file string) bool {
	t.Helper()
	f, err := elf.Open(file)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	defer f.Close() //nolint:errcheck // read only
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// managerBuild is what a test that builds the manager's image needs: the go
// command and a context for the builds (a cold build cache rebuilds every
// package with -trimpath, for each platform: minutes). It skips the test
// when the go command or the CA bundle is missing.
func managerBuild(t *testing.T) (string, context.Context) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not in PATH: the test builds the manager's binary")
	}
	if _, err := os.Stat(CABundle); err != nil {
		missingPackage(t, "%s is missing: the image takes it from Debian's ca-certificates package", CABundle)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel)
	return goTool, ctx
}

// TestManagerImage builds the manager's binary as make image does, its
// image and tarball, and checks what a cluster relies on: the user, the
// entrypoint, the CA bundle, no shell, a binary that runs, and the same
// digest from the same inputs.
func TestManagerImage(t *testing.T) {
	goTool, ctx := managerBuild(t)
	g := NewWithT(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	start := time.Now()
	changed, err := BuildManager(ctx, goTool, repoRoot(t), bin, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	t.Logf("built the manager's static binary in %s", time.Since(start).Round(time.Millisecond))

	spec, err := Manager(bin, CABundle)
	g.Expect(err).NotTo(HaveOccurred())
	spec.Created = testEpoch
	const ref = "localhost/multi-operator:test"
	img, tarball := writeAndRead(t, spec, ref, dir)
	fs := files(t, img)

	t.Run("config", func(t *testing.T) {
		g := NewWithT(t)
		cf := configOf(t, img)
		g.Expect(cf.Config.User).To(Equal("65532:65532"))
		g.Expect(cf.Config.Entrypoint).To(Equal([]string{"/manager"}))
		g.Expect(cf.Config.Cmd).To(BeEmpty())
		g.Expect(cf.OS).To(Equal("linux"))
		g.Expect(cf.Architecture).To(Equal(runtime.GOARCH))
		g.Expect(cf.Created.Time.Equal(testEpoch)).To(BeTrue(), "created %s", cf.Created)
		g.Expect(cf.RootFS.DiffIDs).To(HaveLen(1), "a single layer")
	})

	t.Run("files", func(t *testing.T) {
		g := NewWithT(t)
		manager := fs["/manager"]
		g.Expect(manager.hdr).NotTo(BeNil())
		g.Expect(manager.hdr.Mode).To(Equal(int64(0o755)))
		ca, err := os.ReadFile(CABundle)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fs).To(HaveKey(CABundle))
		g.Expect(fs[CABundle].data).To(Equal(ca))
		g.Expect(string(fs["/etc/passwd"].data)).To(ContainSubstring("\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"))
		g.Expect(string(fs["/etc/group"].data)).To(ContainSubstring("\nnonroot:x:65532:\n"))
		g.Expect(fs["/tmp"].hdr.Mode).To(Equal(int64(0o1777)))
		for p, e := range fs {
			g.Expect(strings.HasPrefix(p, "/bin") || strings.HasPrefix(p, "/usr") || strings.HasPrefix(p, "/lib")).
				To(BeFalse(), "%s: the image holds no shell, tool or library", p)
			g.Expect(e.hdr.ModTime.Equal(testEpoch)).To(BeTrue(), "%s modified %s", p, e.hdr.ModTime)
		}
	})

	t.Run("the binary in the image answers --help", func(t *testing.T) {
		g := NewWithT(t)
		extracted := filepath.Join(t.TempDir(), "manager")
		g.Expect(os.WriteFile(extracted, fs["/manager"].data, 0o755)).To(Succeed())
		g.Expect(isStatic(t, extracted)).To(BeTrue(), "the image has no dynamic loader")
		cmd := exec.CommandContext(ctx, extracted, "--help")
		out, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "exit code 0: %s", out)
		g.Expect(string(out)).To(ContainSubstring("manager runs the multi-operator controllers"))
		g.Expect(string(out)).To(ContainSubstring("--controllers"))
	})

	t.Run("the same inputs give the same digest", func(t *testing.T) {
		g := NewWithT(t)
		// The host files' times do not count: only their bytes.
		later := time.Now().Add(time.Hour)
		g.Expect(os.Chtimes(bin, later, later)).To(Succeed())
		again, err := Manager(bin, CABundle)
		g.Expect(err).NotTo(HaveOccurred())
		again.Created = testEpoch
		img2, tarball2 := writeAndRead(t, again, ref, t.TempDir())
		d1, err := img.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		d2, err := img2.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(d2).To(Equal(d1))
		b1, err := os.ReadFile(tarball)
		g.Expect(err).NotTo(HaveOccurred())
		b2, err := os.ReadFile(tarball2)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bytes.Equal(b1, b2)).To(BeTrue(), "the tarballs are the same bytes")

		// Another build time is another image.
		again.Created = testEpoch.Add(time.Second)
		img3, err := Build(again)
		g.Expect(err).NotTo(HaveOccurred())
		d3, err := img3.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(d3).NotTo(Equal(d1))
	})

	t.Run("an unchanged binary is left alone", func(t *testing.T) {
		g := NewWithT(t)
		before, err := os.Stat(bin)
		g.Expect(err).NotTo(HaveOccurred())
		changed, err := BuildManager(ctx, goTool, repoRoot(t), bin, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse(), "go build gives the same bytes from the same source")
		after, err := os.Stat(bin)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(after.ModTime()).To(Equal(before.ModTime()), "so make does not rebuild the image")
	})
}

// TestManagerBuildMatchesDockerfile: the Dockerfile, for users with Docker,
// builds the same binary the same way, and its image runs it the same way.
func TestManagerBuildMatchesDockerfile(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	g.Expect(err).NotTo(HaveOccurred())
	var build string
	for _, line := range strings.Split(string(dockerfile), "\n") {
		if strings.HasPrefix(line, "RUN ") && strings.Contains(line, "go build") {
			build = strings.ReplaceAll(line, `"`, "")
		}
	}
	g.Expect(build).NotTo(BeEmpty(), "the Dockerfile's go build line")
	for _, env := range ManagerBuildEnv("") {
		key, value, _ := strings.Cut(env, "=")
		if key == "CGO_ENABLED" {
			g.Expect(build).To(ContainSubstring(env))
			continue
		}
		g.Expect(build).To(ContainSubstring(key+"="), "the Dockerfile sets %s (here %s)", key, value)
	}
	for _, flag := range ManagerBuildFlags {
		if flag == "-buildvcs=false" {
			// The Docker build context has no .git, so go build stamps no
			// VCS information there either.
			ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(strings.Fields(string(ignore))).To(ContainElement(MatchRegexp(`^/?\.git/?$`)))
			continue
		}
		g.Expect(build).To(ContainSubstring(" "+flag), "the Dockerfile builds with %s", flag)
	}
	g.Expect(build).To(ContainSubstring("./cmd/manager"))
	g.Expect(string(dockerfile)).To(ContainSubstring("\nUSER 65532:65532\n"))
	g.Expect(string(dockerfile)).To(ContainSubstring("\nENTRYPOINT [\"/manager\"]\n"))
}

// indexPlatforms are the platforms of the manager's published index, with
// the ELF machine each one's binary must be built for.
var indexPlatforms = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// buildManagerIndex builds the manager's binary for every platform of the
// index into dir, as make image does, and writes their index to dir/layout.
func buildManagerIndex(ctx context.Context, t *testing.T, goTool, dir string) v1.ImageIndex {
	t.Helper()
	g := NewWithT(t)
	var imgs []v1.Image
	for _, arch := range slices.Sorted(maps.Keys(indexPlatforms)) {
		bin := filepath.Join(dir, "manager-linux-"+arch)
		_, err := BuildManager(ctx, goTool, repoRoot(t), bin, arch)
		g.Expect(err).NotTo(HaveOccurred())
		spec, err := Manager(bin, CABundle)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(spec.Arch).To(Equal(arch), "the platform is read from the binary")
		spec.Created = testEpoch
		img, err := Build(spec)
		g.Expect(err).NotTo(HaveOccurred())
		imgs = append(imgs, img)
	}
	idx, err := Index(imgs...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(WriteLayout(filepath.Join(dir, "layout"), "localhost/multi-operator:test", idx)).To(Succeed())
	return idx
}

// TestManagerIndex: make image publishes one index for linux/amd64 and
// linux/arm64, each entry the image of a binary built for that platform,
// and two builds of the same source give the same index digest.
func TestManagerIndex(t *testing.T) {
	goTool, ctx := managerBuild(t)
	g := NewWithT(t)
	first, second := t.TempDir(), t.TempDir()
	idx := buildManagerIndex(ctx, t, goTool, first)

	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Manifests).To(HaveLen(len(indexPlatforms)))
	for _, d := range m.Manifests {
		g.Expect(d.Platform).NotTo(BeNil())
		g.Expect(d.Platform.OS).To(Equal("linux"))
		machine, ok := indexPlatforms[d.Platform.Architecture]
		g.Expect(ok).To(BeTrue(), "platform %s", d.Platform)
		img, err := idx.Image(d.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(configOf(t, img).Architecture).To(Equal(d.Platform.Architecture))
		extracted := filepath.Join(t.TempDir(), "manager")
		g.Expect(os.WriteFile(extracted, files(t, img)["/manager"].data, 0o755)).To(Succeed())
		f, err := elf.Open(extracted)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(f.Machine).To(Equal(machine), "the %s image holds a binary for its platform", d.Platform.Architecture)
		g.Expect(f.Close()).To(Succeed())
	}

	read, err := ReadLayout(filepath.Join(first, "layout"))
	g.Expect(err).NotTo(HaveOccurred())
	want, err := idx.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	got, err := read.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want), "the layout holds the index as built")

	again, err := buildManagerIndex(ctx, t, goTool, second).Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(want), "a second build of the same source gives the same digest")
}

// An image claims the platform of its binary, never this machine's by
// default, and an index refuses two images of one platform.
func TestIndexPlatforms(t *testing.T) {
	g := NewWithT(t)
	self, err := os.Executable()
	g.Expect(err).NotTo(HaveOccurred())
	arch, err := ELFArch(self)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(arch).To(Equal(runtime.GOARCH))
	_, err = ELFArch(CABundle)
	g.Expect(err).To(HaveOccurred(), "not an ELF binary")

	amd, err := Build(Spec{Arch: "amd64", Created: testEpoch})
	g.Expect(err).NotTo(HaveOccurred())
	arm, err := Build(Spec{Arch: "arm64", Created: testEpoch})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = Index(amd, arm)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = Index(amd, amd)
	g.Expect(err).To(MatchError(ContainSubstring("two images for linux/amd64")))
	_, err = Index()
	g.Expect(err).To(HaveOccurred())
}
