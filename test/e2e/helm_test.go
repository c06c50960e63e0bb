//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/realnode"
)

// ourCRDs are the CRDs the chart's four controllers bring.
var ourCRDs = []string{"tdsets.schedule.rs", "memcacheds.cache.example.com", "redisclusters.cache.example.com", "whalesays.devsectim.io"}

// TestHelmChartOnTheRealNode installs dist/chart the way the README shows
// (make helm-deploy-local runs helm upgrade --install from the local
// images) with two controllers switched on, shows their samples converge,
// then upgrades the release to all four and shows the other two converge
// while the first two stay Ready. helm uninstall takes everything away but
// the CRDs (crds.keep), which the test then deletes as docs/install.md shows.
func TestHelmChartOnTheRealNode(t *testing.T) {
	if !realNode {
		t.Skip("needs the real node: the manager runs from its image")
	}
	g := NewWithT(t)
	// Earlier tests leave no custom resource behind (their namespaces are
	// gone once the local manager removed their finalizers), so the CRDs
	// config/local installed can go: the chart brings its own, pointed at
	// its webhook Service instead of the local manager.
	g.Eventually(func() string {
		out, _ := run("get", strings.Join([]string{"tdsets", "memcacheds", "redisclusters", "whalesays"}, ","), "-A", "-o", "name")
		return strings.TrimSpace(out)
	}, "3m").Should(BeEmpty(), "no custom resource is left from an earlier test")
	leader.Stop()
	kubectl(t, append([]string{"delete", "crd", "--ignore-not-found", "--wait=true"}, ourCRDs...)...)
	kubectl(t, "delete", "validatingwebhookconfiguration", "--ignore-not-found", "multi-operator-validating-webhook-configuration")
	t.Cleanup(func() {
		if out, err := helmCmd("uninstall", "multi-operator", "--namespace", managerNamespace, "--wait", "--timeout", "3m"); err != nil {
			t.Errorf("helm uninstall: %v: %s", err, out)
		}
		awaitDeployedManagerGone(t)
		NewWithT(t).Expect(installedCRDs(t)).To(ConsistOf(ourCRDs), "helm uninstall keeps the CRDs")
		// config/local's server-side apply would conflict with Helm's
		// fields of the kept CRDs.
		kubectl(t, append([]string{"delete", "crd", "--wait=true"}, ourCRDs...)...)
		if err := installLocal(); err != nil {
			t.Error(err)
		}
		var err error
		if leader, err = startManager("after-helm"); err != nil {
			t.Errorf("restarting the local manager: %v", err)
		}
	})
	samples := map[string]sample{}
	for _, s := range loadSamples(t) {
		if s.namespace == "" && s.apiVersion != "schedule.rs/v2" {
			samples[s.kind] = s
		}
	}
	ns := namespace(t)
	// The samples go while the release's manager still removes their
	// finalizers; only then does the release (and its CRDs) go.
	t.Cleanup(func() { _, _ = run("delete", "namespace", ns, "--wait=true", "--timeout=3m") })
	converge := func(t *testing.T, kinds ...string) {
		for _, kind := range kinds {
			s, ok := samples[kind]
			if !ok {
				t.Fatalf("no sample of %s", kind)
			}
			kubectl(t, "apply", "-n", ns, "-f", s.file)
			expectations[kind](t, NewWithT(t), ns, s.name)
		}
	}

	t.Run("install with memcached and whalesay", func(t *testing.T) {
		g := NewWithT(t)
		helmDeployLocal(t, "--set", "controllers.tdset.enabled=false", "--set", "controllers.rediscluster.enabled=false")
		g.Expect(managerArgs(t)).To(ContainElements("--controllers=memcached", "--controllers=whalesay"))
		g.Expect(managerArgs(t)).NotTo(ContainElements("--controllers=tdset"))
		g.Expect(installedCRDs(t)).To(ConsistOf("memcacheds.cache.example.com", "whalesays.devsectim.io"))
		g.Expect(kubectl(t, "get", "deployment", "-n", managerNamespace, managerDeployment, "-o", "jsonpath={.spec.replicas}")).To(Equal("1"), "no webhook server, one replica")
		nodes := strings.Fields(kubectl(t, "get", "pods", "-n", managerNamespace, "-l", "control-plane=controller-manager", "-o", "jsonpath={.items[*].spec.nodeName}"))
		g.Expect(nodes).To(HaveEach(realnode.NodeName))
		converge(t, "Memcached", "WhaleSay")
	})

	t.Run("upgrade to all four", func(t *testing.T) {
		g := NewWithT(t)
		helmDeployLocal(t)
		g.Expect(installedCRDs(t)).To(ConsistOf(ourCRDs))
		g.Expect(kubectl(t, "get", "deployment", "-n", managerNamespace, managerDeployment, "-o", "jsonpath={.spec.replicas}")).To(Equal("2"), "the webhook server runs two replicas")
		converge(t, "TDSet", "RedisCluster")
		kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "memcached/"+samples["Memcached"].name, "--timeout=60s")
		revision := kubectl(t, "get", "secret", "-n", managerNamespace, "-l", "owner=helm,name=multi-operator,status=deployed", "-o", "jsonpath={.items[*].metadata.labels.version}")
		g.Expect(revision).To(Equal("2"), "one release, upgraded once")
	})
}

// helmDeployLocal runs `make helm-deploy-local` with extra helm flags.
func helmDeployLocal(t *testing.T, args ...string) {
	t.Helper()
	deploy := exec.Command("make", "-C", root, "--no-print-directory", "helm-deploy-local", "HELM_ARGS="+strings.Join(args, " "))
	deploy.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := deploy.CombinedOutput()
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), "make helm-deploy-local: %s", out)
}

// helmCmd runs the helm binary the Makefile built against the test cluster.
func helmCmd(args ...string) (string, error) {
	cmd := exec.Command(os.Getenv("HELM"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func managerArgs(t *testing.T) []string {
	return strings.Fields(kubectl(t, "get", "deployment", "-n", managerNamespace, managerDeployment, "-o", "jsonpath={.spec.template.spec.containers[0].args[*]}"))
}

func installedCRDs(t *testing.T) []string {
	var ours []string
	for _, name := range strings.Fields(kubectl(t, "get", "crd", "-o", "jsonpath={.items[*].metadata.name}")) {
		if slices.Contains(ourCRDs, name) {
			ours = append(ours, name)
		}
	}
	return ours
}
