package images

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	. "github.com/onsi/gomega"
)

// testEpoch is the build time of the tests' images.
var testEpoch = time.Unix(1700000000, 0).UTC()

// entry is one file of an image's file system, as the tests read it.
type entry struct {
	hdr  *tar.Header
	data []byte
}

// writeAndRead builds spec, writes it to a tarball under dir as ref, and
// reads it back, as containerd would get it.
func writeAndRead(t *testing.T, spec Spec, ref, dir string) (v1.Image, string) {
	t.Helper()
	g := NewWithT(t)
	img, err := Build(spec)
	g.Expect(err).NotTo(HaveOccurred())
	file := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
	g.Expect(WriteTarball(file, ref, img)).To(Succeed())
	back, err := ReadTarball(file, ref)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	got, err := back.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want), "the tarball holds the image that was built")
	return back, file
}

// files reads the file system of img, by absolute path.
func files(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close() //nolint:errcheck // read only
	tr := tar.NewReader(rc)
	out := map[string]entry{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		data, err := io.ReadAll(tr)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		out["/"+strings.TrimSuffix(hdr.Name, "/")] = entry{hdr: hdr, data: data}
	}
}

// configOf is img's config.
func configOf(t *testing.T, img v1.Image) *v1.ConfigFile {
	t.Helper()
	cf, err := img.ConfigFile()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return cf
}

// missingPackage skips a test whose Debian package is not installed, or
// fails it where every package should be there: under CI, or under `make
// test` once make deps has installed them (REQUIRE_TEST_DEPS=1).
func missingPackage(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" || os.Getenv("REQUIRE_TEST_DEPS") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// needRoot skips a test that runs an image's command in a chroot, as its
// user, which takes root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running an image's command in a chroot needs root")
	}
}

// unpack writes img's file system under a new directory, with its modes
// and owners, and returns the directory.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	g := NewWithT(t)
	root := t.TempDir()
	g.Expect(os.Chmod(root, 0o755)).To(Succeed())
	for p, e := range files(t, img) {
		dst := filepath.Join(root, p)
		switch e.hdr.Typeflag {
		case tar.TypeDir:
			g.Expect(os.MkdirAll(dst, 0o755)).To(Succeed())
		case tar.TypeReg:
			g.Expect(os.MkdirAll(filepath.Dir(dst), 0o755)).To(Succeed())
			g.Expect(os.WriteFile(dst, e.data, 0o600)).To(Succeed())
		default:
			t.Fatalf("%s: unexpected tar type %c", p, e.hdr.Typeflag)
		}
		g.Expect(os.Lchown(dst, e.hdr.Uid, e.hdr.Gid)).To(Succeed())
		// After chown, which clears setuid bits; the sticky bit is 01000.
		mode := os.FileMode(e.hdr.Mode & 0o777)
		if e.hdr.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		g.Expect(os.Chmod(dst, mode)).To(Succeed())
	}
	return root
}

// imagePath finds command as the container runtime does: a name without a
// slash is looked up in the PATH of the image's environment.
func imagePath(t *testing.T, root string, env []string, command string) string {
	t.Helper()
	if strings.Contains(command, "/") {
		return command
	}
	for _, kv := range env {
		dirs, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, dir := range strings.Split(dirs, ":") {
			p := path.Join(dir, command)
			if fi, err := os.Stat(filepath.Join(root, p)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	t.Fatalf("%s is not in the image's PATH (%v)", command, env)
	return ""
}

// inImage is argv run in the unpacked image root as uid:uid, with the
// image's environment and working directory, as a container would run it.
func inImage(t *testing.T, root string, cf *v1.ConfigFile, uid int64, argv []string) *exec.Cmd {
	t.Helper()
	cmd := &exec.Cmd{
		Path: imagePath(t, root, cf.Config.Env, argv[0]),
		Args: argv,
		Env:  cf.Config.Env,
		Dir:  cf.Config.WorkingDir,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:     root,
			Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)},
			Setpgid:    true,
		},
	}
	return cmd
}

// imageUser is the uid of the image's numeric "uid:gid" User.
func imageUser(t *testing.T, cf *v1.ConfigFile) int64 {
	t.Helper()
	uid, gid, ok := strings.Cut(cf.Config.User, ":")
	NewWithT(t).Expect(ok).To(BeTrue(), "User %q is uid:gid", cf.Config.User)
	n, err := strconv.ParseInt(uid, 10, 64)
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), "User %q is numeric, as runAsNonRoot needs", cf.Config.User)
	NewWithT(t).Expect(gid).To(Equal(uid))
	return n
}
