package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// TestBuildInstallerWritesEachOverlayWithTheImage runs the Makefile's
// installer step (what `make build-installer IMG=...` writes after
// regenerating the manifests) and holds every file to its overlay built
// with the same image.
func TestBuildInstallerWritesEachOverlayWithTheImage(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	const image = "registry.example:5000/multi-operator:v9.9.9"
	out := t.TempDir()
	cmd := exec.Command("make", "-s", "--no-print-directory", "installers", "IMG="+image, "INSTALLER_DIR="+out)
	cmd.Dir = root
	log, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(log))
	for _, dir := range overlayDirs(t) {
		name := filepath.Base(dir)
		raw, err := os.ReadFile(filepath.Join(out, "install-"+name+".yaml"))
		g.Expect(err).NotTo(HaveOccurred(), "an installer per overlay")
		rel, _ := filepath.Rel(root, dir)
		want, err := overlay.Kustomization{Resources: []string{rel}, Bare: true, Image: image}.Build(root)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(documents(t, raw)).To(Equal(documents(t, stream(t, want))), "dist/install-%s.yaml is its overlay", name)
		g.Expect(string(raw)).To(ContainSubstring("image: "+image), "with IMG")
	}
}
