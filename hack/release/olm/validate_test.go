package olm

import (
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"

	"github.com/multi-operator/multi-operator/hack/release/kubeversions"
)

// TestCheckedInBundlePassesOperatorFrameworkValidators runs the validators
// of `operator-sdk bundle validate` on every bundle under dist/: the
// default ones, the OperatorHub one for the CSV's minKubeVersion and the
// good practices. An error fails; warnings are logged.
func TestCheckedInBundlePassesOperatorFrameworkValidators(t *testing.T) {
	for dir := range bundleDirs {
		t.Run(dir, func(t *testing.T) { validateBundle(t, dir) })
	}
}

// validateBundle runs the validators on dist/<dir>.
func validateBundle(t *testing.T, dir string) {
	g := NewWithT(t)
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot(t), "dist", dir))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.CSV).NotTo(BeNil())
	supported, err := kubeversions.Read(repoRoot(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.CSV.Spec.MinKubeVersion).To(Equal(supported.MinKubeVersion()), "the oldest release make test-oldest runs against")
	k8sVersion := strings.TrimSuffix(b.CSV.Spec.MinKubeVersion, ".0")
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": k8sVersion})
	validators := interfaces.Validators{validation.OperatorHubV2Validator, validation.GoodPracticesValidator}
	validators = append(validators, validation.DefaultBundleValidators...)
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			t.Errorf("%s: %s", result.Name, e)
		}
		for _, w := range result.Warnings {
			t.Logf("warning: %s: %s", result.Name, w)
		}
	}
}
