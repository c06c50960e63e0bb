package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// The command runs against the test-only Widget CRD: one version, so every
// object is already stored in it. pkg/storageversion and test/upgrade test
// an actual change of storage version.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWith(m, testenv.RunOptions{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "test", "framework", "api", "crd")},
	}, v1alpha1.AddToScheme))
}

func TestRun(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	g.Expect(env.Client.Create(context.Background(), &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}})).To(Succeed())

	var stdout, stderr bytes.Buffer
	getConfig := func() (*rest.Config, error) { return env.Config, nil }
	code := run(context.Background(), []string{"--crd", "widgets.testing.multi-operator.io"}, &stdout, &stderr, getConfig)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(stdout.String()).To(Equal("widgets.testing.multi-operator.io: rewrote 1 object in v1alpha1 (1 already stored in it); storedVersions [v1alpha1]\n"))

	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"--crd", "widgets.testing.multi-operator.io", "--crd", "nothings.testing.multi-operator.io"}, &stdout, &stderr, getConfig)
	g.Expect(code).To(Equal(1))
	g.Expect(stdout.String()).To(HavePrefix("widgets.testing.multi-operator.io: rewrote 1 object"))
	g.Expect(stderr.String()).To(ContainSubstring("migrate-storage: reading CRD nothings.testing.multi-operator.io"))
	g.Expect(stderr.String()).To(ContainSubstring("running again is safe"))
}
