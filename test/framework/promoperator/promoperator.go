// Package promoperator installs a stand-in for the Prometheus Operator's
// PodMonitor CRD (podmonitor-crd.yaml) while a test runs, for the
// controllers that keep PodMonitors where the kind is served.
package promoperator

import (
	"context"
	_ "embed"
	"testing"
	"time"

	"github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/pkg/podmonitor"
)

//go:embed podmonitor-crd.yaml
var podMonitorCRD []byte

// InstallPodMonitorCRD installs the PodMonitor CRD, waits until discovery
// serves the kind, and removes it (and so every PodMonitor) when the test
// ends, waiting until the kind is gone so that later tests of the package
// see a cluster without it.
func InstallPodMonitorCRD(t *testing.T, cfg *rest.Config) {
	t.Helper()
	g := gomega.NewWithT(t)
	scheme := apiextensionsScheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(yaml.UnmarshalStrict(podMonitorCRD, crd)).To(gomega.Succeed())
	g.Expect(c.Create(context.Background(), crd)).To(gomega.Succeed())
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	// An error, such as discovery's cache lagging, counts as not served
	// yet: the waits below ask again.
	served := func() bool {
		ok, err := podmonitor.ServedBy(dc)
		return err == nil && ok
	}
	g.Eventually(served, 30*time.Second, 100*time.Millisecond).Should(gomega.BeTrue(), "discovery serves PodMonitors")
	t.Cleanup(func() {
		err := c.Delete(context.Background(), crd)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the PodMonitor CRD: %v", err)
			return
		}
		gomega.NewWithT(t).Eventually(served, 60*time.Second, 100*time.Millisecond).Should(gomega.BeFalse(), "the PodMonitor kind is gone")
	})
}

// apiextensionsScheme knows CustomResourceDefinitions.
func apiextensionsScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	return scheme
}
