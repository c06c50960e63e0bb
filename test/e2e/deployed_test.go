//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/realnode"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

const (
	managerNamespace  = "multi-operator-system"
	managerDeployment = "multi-operator-controller-manager"
	metricsReaderRole = "multi-operator-metrics-reader"
	// deployedLeaseName is the manager's default --leader-election-id.
	deployedLeaseName = "multi-operator.devsectim.io"
)

// TestDeployedManagerOnTheRealNode does what a cluster user does: the
// default overlay, from the manager's own image (make deploy-local builds
// it, imports it into the real node and applies the overlay with it), runs
// in its namespace under the restricted Pod Security Standard, on an API
// server with OwnerReferencesPermissionEnforcement. Every seed sample then
// reaches its state under it, its controllers run real memcached and Redis
// servers, a Redis scale survives the
// manager pod's deletion half way, and its metrics answer only a token
// allowed to read them.
func TestDeployedManagerOnTheRealNode(t *testing.T) {
	if !realNode {
		t.Skip("needs the real node: the manager runs from its image")
	}
	g := NewWithT(t)
	// The deployed manager replaces the local one for this test.
	leader.Stop()
	t.Cleanup(func() {
		_, _ = run("delete", "deployment", "-n", managerNamespace, managerDeployment, "--wait=true", "--timeout=60s")
		awaitDeployedManagerGone(t)
		// The overlay pointed the webhooks at its Service; point them back
		// at the local manager.
		if err := installLocal(); err != nil {
			t.Error(err)
		}
		var err error
		if leader, err = startManager("after-deployed"); err != nil {
			t.Errorf("restarting the local manager: %v", err)
		}
	})
	deploy := exec.Command("make", "-C", root, "--no-print-directory", "deploy-local")
	deploy.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := deploy.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "make deploy-local: %s", out)
	g.Expect(kubectl(t, "get", "namespace", managerNamespace, "-o", `jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}`)).To(Equal("restricted"))
	// Two replicas: both serve the webhooks, one leads.
	nodes := strings.Fields(kubectl(t, "get", "pods", "-n", managerNamespace, "-l", "control-plane=controller-manager", "-o", "jsonpath={.items[*].spec.nodeName}"))
	g.Expect(nodes).To(HaveLen(2))
	g.Expect(nodes).To(HaveEach(realnode.NodeName))

	ns := namespace(t)
	t.Run("every seed sample reaches its state", func(t *testing.T) {
		for _, s := range loadSamples(t) {
			g := NewWithT(t)
			target := ns
			if s.namespace != "" {
				// The sample names its own namespace; it applies unchanged.
				target = s.namespace
				_, _ = run("create", "namespace", target)
				t.Cleanup(func() { _, _ = run("delete", "-f", s.file, "--wait=true", "--timeout=120s", "--ignore-not-found") })
				kubectl(t, "apply", "-f", s.file)
			} else {
				kubectl(t, "apply", "-n", target, "-f", s.file)
			}
			expectations[s.kind](t, g, target, s.name)
		}
	})
	memcached(t, ns, "deployed")
	kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "memcached/deployed", "--timeout=120s")
	for _, ip := range strings.Fields(kubectl(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance=deployed", "-o", "jsonpath={.items[*].status.podIP}")) {
		g.Expect(memcachedStats(net.JoinHostPort(ip, "11211"))).To(ContainSubstring("STAT pid "))
	}

	t.Run("conversion goes on while one of the two replicas is deleted", func(t *testing.T) {
		g := NewWithT(t)
		sample := filepath.Join(root, "samples", "tdset.yaml")
		_, _ = run("create", "namespace", "temp")
		t.Cleanup(func() { _, _ = run("delete", "-f", sample, "--wait=true", "--timeout=120s", "--ignore-not-found") })
		kubectl(t, "apply", "-f", sample)
		kubectl(t, "wait", "--for=condition=Ready", "-n", "temp", "tdset/tdset-hello-world", "--timeout=90s")
		stop := readV1Continuously(t, "temp", "tdset-hello-world")
		pod := strings.Fields(kubectl(t, "get", "pods", "-n", managerNamespace, "-l", "control-plane=controller-manager", "-o", "jsonpath={.items[*].metadata.name}"))[0]
		kubectl(t, "delete", "pod", "-n", managerNamespace, pod, "--wait=true", "--timeout=60s")
		kubectl(t, "rollout", "status", "-n", managerNamespace, "deployment/"+managerDeployment, "--timeout=120s")
		reads, failures := stop()
		g.Expect(reads).To(BeNumerically(">", 10))
		g.Expect(failures).To(BeEmpty(), "every v1 read was converted while a replica went away")
	})

	t.Run("a Redis scale resumes after the manager pod is deleted", func(t *testing.T) {
		g := NewWithT(t)
		applyRedisCluster(t, ns, "resume", 3)
		c := redisClient(t, ns, "resume")
		redistest.WriteKeys(g, c)
		kubectl(t, "patch", "rediscluster", "-n", ns, "resume", "--type=merge", "-p", `{"spec":{"size":5}}`)
		// Half way: the new pods exist, the slots are not all moved yet.
		g.Eventually(func() string {
			out, _ := run("get", "statefulset", "-n", ns, "resume", "-o", "jsonpath={.status.readyReplicas}")
			return strings.TrimSpace(out)
		}, "2m").Should(Equal("5"))
		kubectl(t, "delete", "pod", "-n", managerNamespace, "-l", "control-plane=controller-manager", "--wait=false")
		expectRedisReady(t, ns, "resume", 5)
		redistest.ExpectKeys(g, c)
	})

	t.Run("metrics answer only a token allowed to read them", func(t *testing.T) {
		g := NewWithT(t)
		kubectl(t, "create", "serviceaccount", "-n", ns, "metrics-allowed")
		kubectl(t, "create", "serviceaccount", "-n", ns, "metrics-denied")
		kubectl(t, "create", "clusterrolebinding", ns+"-metrics", "--clusterrole="+metricsReaderRole, "--serviceaccount="+ns+":metrics-allowed")
		t.Cleanup(func() { _, _ = run("delete", "clusterrolebinding", ns+"-metrics") })
		kubectl(t, "rollout", "status", "-n", managerNamespace, "deployment/"+managerDeployment, "--timeout=120s")
		// Only the leader runs the controllers, so only its metrics have
		// reconcile counts; every replica answers with the same authorization.
		var ip string
		g.Eventually(func() string {
			ip, _ = run("get", "pods", "-n", managerNamespace, deployedLeader(), "-o", "jsonpath={.status.podIP}")
			return strings.TrimSpace(ip)
		}, "60s").ShouldNot(BeEmpty(), "the deployed manager has a leader")
		url := "https://" + net.JoinHostPort(strings.TrimSpace(ip), "8443") + "/metrics"
		allowed := kubectl(t, "create", "token", "-n", ns, "metrics-allowed")
		denied := kubectl(t, "create", "token", "-n", ns, "metrics-denied")
		g.Eventually(func(g Gomega) {
			code, body := scrape(g, url, allowed)
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
		}).Should(Succeed())
		code, _ := scrape(g, url, denied)
		g.Expect(code).To(Equal(http.StatusForbidden))
		code, _ = scrape(g, url, "")
		g.Expect(code).To(Equal(http.StatusUnauthorized))
	})
}

// scrape GETs the manager's metrics with a bearer token. The serving
// certificate is the manager's self-signed one, so it is not verified; the
// peer is a pod IP on this machine's bridge.
func scrape(g Gomega, url, token string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	g.Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the manager's self-signed certificate
	resp, err := client.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close() //nolint:errcheck // read only
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}

// readV1Continuously reads a TDSet as v1, through the conversion webhook,
// until the returned function is called; that returns the count of reads
// and the errors of those that failed.
// deployedLeader is the name of the deployed manager's pod that holds the
// leader-election Lease: controller-runtime's identity is the pod's hostname
// (its name) plus "_" and a random suffix.
func deployedLeader() string {
	holder, _ := run("get", "lease", "-n", managerNamespace, deployedLeaseName, "-o", "jsonpath={.spec.holderIdentity}")
	pod, _, _ := strings.Cut(strings.TrimSpace(holder), "_")
	return pod
}

// readV1Continuously reads the TDSet as v1 every 100 ms until the returned
// function is called, which returns how many reads were made and which failed.
func readV1Continuously(t *testing.T, ns, name string) func() (int, []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var reads int
	var failures []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			out, err := run("get", "tdsets.v1.schedule.rs", "-n", ns, name, "-o", "jsonpath={.spec.defaultReplica}")
			if ctx.Err() != nil {
				return
			}
			reads++
			if err != nil || strings.TrimSpace(out) == "" {
				failures = append(failures, fmt.Sprintf("%v: %s", err, out))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() (int, []string) {
		cancel()
		<-done
		return reads, failures
	}
}
