package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/controllers/redisclusterbackup"
	"github.com/multi-operator/multi-operator/controllers/whalesay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// TestOperandImagesMatchTheGoDefaults: the image each component puts into
// the manager's environment is the controller's Go default, so that the
// binary run alone and the deployed manager run the same operands. (The
// memcached finalizer in the admission policy's CEL is checked against the
// Go constant by TestMemcachedOverlayAddsTheFinalizerAtAdmission.)
func TestOperandImagesMatchTheGoDefaults(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	o := build(t, filepath.Join(root, "config", "default"))
	env := map[string]string{}
	for _, e := range o.Manager.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	checked := 0
	for _, d := range controllers.All() {
		if d.ImageEnv == "" {
			continue
		}
		g.Expect(d.DefaultImage).NotTo(BeEmpty(), "%s names an image variable, so it has a default", d.Name)
		g.Expect(env).To(HaveKeyWithValue(d.ImageEnv, d.DefaultImage), "the %s component's %s", d.Name, d.ImageEnv)
		checked++
	}
	g.Expect(checked).To(Equal(4), "memcached, rediscluster, redisclusterbackup and whalesay run operand images")
	exporters := 0
	for _, d := range controllers.All() {
		if d.ExporterImageEnv == "" {
			continue
		}
		exporters++
		g.Expect(env).To(HaveKeyWithValue(d.ExporterImageEnv, d.DefaultExporterImage), "the %s component's %s", d.Name, d.ExporterImageEnv)
	}
	g.Expect(exporters).To(Equal(2), "memcached and rediscluster run exporter sidecars")
	g.Expect(env).To(HaveKeyWithValue(memcached.ExporterImageEnv, o.Manager.Spec.Template.Spec.Containers[0].Image), "the Memcached exporter runs the manager's own image")
	g.Expect(env).To(HaveKeyWithValue(redisclusterbackup.ImageEnv, o.Manager.Spec.Template.Spec.Containers[0].Image), "backup Jobs run the manager's own image")
}

// TestMemcachedExporterDefaultIsTheReleasedManager: the Memcached
// exporter's, the backup Jobs' and the restore Jobs' Go defaults, for the binary run alone,
// are the manager image of the release version (make release fails unless
// config/manager names it), never latest.
func TestMemcachedExporterDefaultIsTheReleasedManager(t *testing.T) {
	mk := releaseMK(t)
	g := NewWithT(t)
	g.Expect(memcached.DefaultExporterImage).To(Equal(mk.variable(t, "RELEASE_IMAGE_REPO") + ":v" + mk.variable(t, "VERSION")))
	g.Expect(redisclusterbackup.DefaultImage).To(Equal(memcached.DefaultExporterImage))
	g.Expect(rediscluster.DefaultRestoreImage).To(Equal(memcached.DefaultExporterImage), "restore Jobs run the backup Jobs' image")
	g.Expect(rediscluster.RestoreImageEnv).To(Equal(redisclusterbackup.ImageEnv))
}

// releaseMakefile is hack/make/release.mk.
type releaseMakefile []byte

func releaseMK(t *testing.T) releaseMakefile {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "hack", "make", "release.mk"))
	if err != nil {
		t.Fatal(err)
	}
	return mk
}

// variable is the default (?=) release.mk gives the variable name.
func (mk releaseMakefile) variable(t *testing.T, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*\?=\s*(\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatalf("release.mk sets no %s", name)
	}
	return string(m[1])
}

// TestRedisExporterDefaultIsThePinnedVersion: the RedisCluster's default
// exporter image is the release of redis_exporter that hack/tools pins,
// which the tests run and make images packs.
func TestRedisExporterDefaultIsThePinnedVersion(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	mod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "redisexporter", "go.mod"))
	g.Expect(err).NotTo(HaveOccurred())
	m := regexp.MustCompile(`(?m)^require github.com/oliver006/redis_exporter (v[0-9.]+)$`).FindSubmatch(mod)
	g.Expect(m).NotTo(BeNil(), "hack/tools/redisexporter/go.mod pins redis_exporter")
	g.Expect(rediscluster.DefaultExporterImage).To(HaveSuffix(":" + string(m[1])))
}

// TestWhaleSayDefaultIsTheReleasedImage: WhaleSay's default operand is the
// image make release-images writes for the release version, not the
// original's docker/whalesay, which current runtimes refuse to pull.
func TestWhaleSayDefaultIsTheReleasedImage(t *testing.T) {
	g := NewWithT(t)
	mk := releaseMK(t)
	g.Expect(whalesay.DefaultImage).To(Equal("ghcr.io/multi-operator/whalesay:v" + mk.variable(t, "VERSION")))
	g.Expect(string(mk)).To(ContainSubstring("WHALESAY_RELEASE_IMAGE := ghcr.io/multi-operator/whalesay:v$(VERSION)"))
}
