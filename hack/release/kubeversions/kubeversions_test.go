package kubeversions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/release/kubeversions"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func TestReadsBothPinnedReleases(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	write := func(path, content string) {
		g.Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		g.Expect(os.WriteFile(path, []byte(content), 0o644)).To(Succeed())
	}
	write(filepath.Join(dir, "hack", "tools", "oldest", "go.mod"), "module x\n\nrequire k8s.io/kubernetes v1.35.4\n")
	write(filepath.Join(dir, "hack", "tools", "go.mod"), "module y\n\nrequire (\n\tk8s.io/kubelet v0.37.1\n\tk8s.io/kubernetes v1.37.1\n)\n")
	r, err := kubeversions.Read(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r).To(Equal(kubeversions.Range{Oldest: "1.35", Newest: "1.37"}))
	g.Expect(r.HelmConstraint()).To(Equal(">= 1.35.0-0"))
	g.Expect(r.MinKubeVersion()).To(Equal("1.35.0"))

	write(filepath.Join(dir, "hack", "tools", "oldest", "go.mod"), "module x\n")
	_, err = kubeversions.Read(dir)
	g.Expect(err).To(MatchError(ContainSubstring("requires no k8s.io/kubernetes")))
}

// The README states the range the tests run against.
func TestREADMEStatesTheTestedRange(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	r, err := kubeversions.Read(root)
	g.Expect(err).NotTo(HaveOccurred())
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	g.Expect(err).NotTo(HaveOccurred())
	words := strings.Join(strings.Fields(string(readme)), " ")
	g.Expect(strings.Contains(words, "Kubernetes "+r.Oldest+" to "+r.Newest)).To(BeTrue(),
		"README.md says \"Kubernetes %s to %s\"", r.Oldest, r.Newest)
}
