package kubescore_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/kubescore"
	"github.com/multi-operator/multi-operator/hack/release/kubeversions"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
)

// binaries are the repository root, kube-score and helm; the test fails
// when a binary is missing and the setup must be complete (CI=true or
// REQUIRE_TEST_DEPS=1), and is skipped elsewhere.
func binaries(t *testing.T) (root, bin, helm string) {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	bin = reporoottest.RequireTool(t, root, kubescore.BinaryEnv, kubescore.BinaryName)
	helm = reporoottest.RequireTool(t, root, helmchart.BinaryEnv, helmchart.BinaryName)
	return root, bin, helm
}

// latestNginx is a Deployment that kube-score fails on several checks,
// among them container-image-tag.
const latestNginx = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:latest"}
`

// The gate cannot pass silently: a known finding goes through kube-score
// and the runner and comes out open unless an exception accepts it.
func TestScoreReportsAKnownFinding(t *testing.T) {
	g := NewWithT(t)
	_, bin, _ := binaries(t)
	objs, err := overlay.Decode([]byte(latestNginx))
	g.Expect(err).NotTo(HaveOccurred())
	findings, err := kubescore.Score(bin, "v1.35", []kubescore.Render{{Name: "test", Objects: objs}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(findings).To(ContainElement(And(
		HaveField("Render", "test"),
		HaveField("Object", "Deployment/demo/web"),
		HaveField("Test", "container-image-tag"),
		HaveField("Critical", true),
		HaveField("Comments", ContainElement(ContainSubstring("(nginx) Image with latest tag"))),
	)))

	open, unused := kubescore.Apply(findings, nil)
	g.Expect(open).To(Equal(findings))
	g.Expect(unused).To(BeEmpty())

	accept := kubescore.Exception{Test: "container-image-tag", Renders: []string{"te*"}, Objects: []string{"Deployment/*/web"}, Reason: "test"}
	other := kubescore.Exception{Test: "container-image-tag", Renders: []string{"kustomize *"}, Reason: "test"}
	open, unused = kubescore.Apply(findings, []kubescore.Exception{accept, other})
	g.Expect(open).To(HaveLen(len(findings) - 1))
	g.Expect(open).NotTo(ContainElement(HaveField("Test", "container-image-tag")))
	g.Expect(unused).To(Equal([]kubescore.Exception{other}))
}

// A render that rendered nothing is an error, not a pass.
func TestScoreRejectsAnEmptyRender(t *testing.T) {
	_, bin, _ := binaries(t)
	_, err := kubescore.Score(bin, "v1.35", []kubescore.Render{{Name: "empty", Objects: []*unstructured.Unstructured{}}})
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("empty: rendered no object")))
}

func TestLoadExceptionsNeedsAReason(t *testing.T) {
	g := NewWithT(t)
	file := filepath.Join(t.TempDir(), "exceptions.yaml")
	g.Expect(os.WriteFile(file, []byte("- test: container-image-tag\n"), 0o600)).To(Succeed())
	_, err := kubescore.LoadExceptions(file)
	g.Expect(err).To(MatchError(ContainSubstring("one-line reason")))

	g.Expect(os.WriteFile(file, []byte("- test: container-image-tag\n  reason: x\n  render: typo\n"), 0o600)).To(Succeed())
	_, err = kubescore.LoadExceptions(file)
	g.Expect(err).To(MatchError(ContainSubstring("render")))
}

// What make lint-manifests checks: every shipped manifest passes with the
// checked-in exceptions, and none of them is stale.
func TestShippedManifestsPass(t *testing.T) {
	g := NewWithT(t)
	root, bin, helm := binaries(t)
	versions, err := kubeversions.Read(root)
	g.Expect(err).NotTo(HaveOccurred())
	report, err := kubescore.Lint(root, bin, helm, "v"+versions.Oldest)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(report.Renders).To(ContainElements(
		"kustomize config/default", "kustomize config/overlays/tdset",
		"kustomize config/default+network-policy", "helm dist/chart", "helm dist/chart all-on", "olm dist/bundle"))
	g.Expect(report.Failed()).To(BeFalse(), "%s", report)
}

// The bundle's render carries the Deployment its CSV embeds, so that
// kube-score checks the manager's pod as OLM installs it.
func TestShippedBundleHasTheCSVDeployment(t *testing.T) {
	g := NewWithT(t)
	root, _, helm := binaries(t)
	renders, err := kubescore.Shipped(root, helm)
	g.Expect(err).NotTo(HaveOccurred())
	var bundle []*unstructured.Unstructured
	for _, r := range renders {
		if r.Name == "olm dist/bundle" {
			bundle = r.Objects
		}
	}
	g.Expect(bundle).To(ContainElement(WithTransform(overlay.Key, Equal(overlay.KeyOf("Deployment", "", overlay.NamePrefix+"controller-manager")))))
	g.Expect(bundle).NotTo(ContainElement(WithTransform((*unstructured.Unstructured).GetKind, Equal("ClusterServiceVersion"))))
}
