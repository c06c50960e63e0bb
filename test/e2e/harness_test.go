//go:build e2e

// Package e2e drives the manager binary against a real local cluster (make
// dev-cluster: kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler and kwok's simulated nodes) through kubectl, the way a
// user does. Run it with `make test-e2e`.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/multi-operator/multi-operator/hack/localcluster"
	"github.com/multi-operator/multi-operator/hack/realnode"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/test/framework/managerproc"
)

var (
	kubeconfig = os.Getenv("E2E_KUBECONFIG")
	kubectlBin = os.Getenv("KUBECTL")
	managerBin = os.Getenv("MANAGER")
	root       string
	// realNode is true when the local cluster has a real node, where pods
	// run real containers; otherwise only kwok's simulated nodes.
	realNode bool
	// allowed is what the local cluster made besides loopback: the real
	// node's bridge and Service range while it runs.
	allowed localcluster.Allowed
	// leader is the manager TestMain starts; tests may replace it.
	leader *managerproc.Process
)

const (
	leaseNamespace = "kube-system"
	leaseName      = "multi-operator-e2e"
)

func TestMain(m *testing.M) {
	// The suite's own clients log nothing; the manager logs to its own files.
	ctrl.SetLogger(logr.Discard())
	gomega.SetDefaultEventuallyTimeout(90 * time.Second)
	gomega.SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	if kubeconfig == "" || kubectlBin == "" || managerBin == "" {
		fmt.Fprintln(os.Stderr, "E2E_KUBECONFIG, KUBECTL and MANAGER must be set: run `make test-e2e`")
		os.Exit(1)
	}
	var err error
	if root, err = reporoot.Find(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nodes, err := run("get", "nodes", "-l", realnode.LabelRealNode, "-o", "name")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	realNode = strings.TrimSpace(nodes) != ""
	if os.Getenv("E2E_REALNODE") == "on" && !realNode {
		fmt.Fprintln(os.Stderr, "E2E_REALNODE=on, but the local cluster has no real node (a node labelled "+realnode.LabelRealNode+"): start it with make dev-cluster REALNODE=on")
		os.Exit(1)
	}
	// No test traffic may leave this machine: every address of the cluster
	// routes to loopback (or the real node's bridge), and the cluster's
	// processes are watched for a connection to anything else for the whole run.
	if realNode {
		allowed = realnode.Allowed()
	}
	if err := checkAddresses(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	connections := localcluster.Watch(250*time.Millisecond, allowed)
	if err := installLocal(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	leader, err = startManager("first")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	leader.Stop()
	if err := checkAddresses(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	offMachine, err := connections.Stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "watching the cluster's connections:", err)
		code = 1
	}
	for _, c := range offMachine {
		fmt.Fprintln(os.Stderr, "FAIL: a connection left this machine:", c)
		code = 1
	}
	os.Exit(code)
}

// checkAddresses fails when a Node address or Pod IP of the test cluster
// routes anywhere but loopback.
func checkAddresses() error {
	c, err := localcluster.NewClient(kubeconfig)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := localcluster.CheckAddresses(ctx, c, allowed.Devices...); err != nil {
		return fmt.Errorf("the local cluster has addresses off this machine (was it started by an older `make dev-cluster`? run `make dev-cluster-down` first):\n%w", err)
	}
	return nil
}

// run runs kubectl against the test cluster. It gives kubectl two minutes,
// or half a minute more than a --timeout it is passed, so that a wait ends
// by its own timeout, with kubectl's message, not by a kill.
func run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kubectlDeadline(args))
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out.String())
	}
	return withoutWarnings(out.String()), nil
}

// withoutWarnings drops the API server's warnings that kubectl prints
// (such as schedule.rs/v1's deprecation), which are not what a test
// parses.
func withoutWarnings(out string) string {
	lines := strings.SplitAfter(out, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, "Warning: ") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// kubectlDeadline is how long run lets kubectl take for args.
func kubectlDeadline(args []string) time.Duration {
	deadline := 2 * time.Minute
	for _, arg := range args {
		value, ok := strings.CutPrefix(arg, "--timeout=")
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(value); err == nil && d+30*time.Second > deadline {
			deadline = d + 30*time.Second
		}
	}
	return deadline
}

// kubectl runs kubectl and fails the test on error.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// applyJSON applies one manifest given as JSON (or YAML) text.
func applyJSON(t *testing.T, manifest string) {
	t.Helper()
	// Not below t.TempDir, named after the test: kubectl splits -f at
	// commas, which a subtest's name may hold.
	f, err := os.CreateTemp("", "e2e-manifest-*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := f.WriteString(manifest); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "-f", f.Name())
}

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	name := "e2e-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	return namespaceNamed(t, strings.TrimRight(name, "-"))
}

// namespaceNamed creates the namespace name for one test, afresh, and
// deletes it afterwards.
func namespaceNamed(t *testing.T, name string) string {
	t.Helper()
	_, _ = run("delete", "namespace", name, "--wait=true", "--ignore-not-found")
	kubectl(t, "create", "namespace", name)
	t.Cleanup(func() { _, _ = run("delete", "namespace", name, "--wait=false", "--ignore-not-found") })
	// Runs before the namespace goes (cleanups run last first).
	t.Cleanup(func() {
		if t.Failed() {
			describeFailure(t, name)
		}
	})
	return name
}

// describeFailure logs what a reader of a failed CI run needs and cannot ask
// for afterwards: the namespace's custom resources with their status, its
// pods, its events, and the end of the local manager's log.
func describeFailure(t *testing.T, ns string) {
	t.Helper()
	for _, args := range [][]string{
		{"get", "rediscluster,redisclusterbackup,memcached,tdset,whalesay", "-n", ns, "-o", "yaml"},
		{"get", "jobs", "-n", ns, "-o", "wide"},
		{"get", "pods", "-n", ns, "-o", "wide"},
		{"events", "-n", ns},
		{"get", "pods", "-n", managerNamespace, "-o", "wide"},
	} {
		out, err := run(args...)
		t.Logf("kubectl %s (%v):\n%s", strings.Join(args, " "), err, out)
	}
	if leader == nil {
		return
	}
	log, err := os.ReadFile(leader.Log.Name())
	if err != nil {
		t.Logf("the manager's log: %v", err)
		return
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	t.Logf("the last %d lines of the local manager's log %s:\n%s", min(len(lines), 200), leader.Log.Name(), strings.Join(lines[max(0, len(lines)-200):], "\n"))
}

// installLocal installs what `make run` installs (config/local): the CRDs,
// with TDSet's conversion and the validating webhook pointed at the manager
// binary on https://localhost:9443. The manager checks at start-up that its
// CRDs are served; a CRD just created is not until it is Established.
func installLocal() error {
	if out, err := run("apply", "--server-side", "-k", filepath.Join(root, "config", "local")); err != nil {
		return fmt.Errorf("installing config/local: %w: %s", err, out)
	}
	if out, err := exec.Command(filepath.Join(root, "hack", "wait-crds-established.sh"), "60", kubectlBin, "--kubeconfig", kubeconfig).CombinedOutput(); err != nil {
		return fmt.Errorf("waiting for the CRDs: %w: %s", err, out)
	}
	return nil
}

// awaitDeployedManagerGone waits until no pod of a deployed manager is left.
// Deleting its Deployment, or uninstalling its release, leaves the pods
// running out their termination grace; they lead their own lease, not the
// local manager's, so a local manager started before they are gone would
// reconcile the same objects beside them (two managers forming one Redis
// Cluster can leave it split) and fight over the webhook certificate.
func awaitDeployedManagerGone(t *testing.T) {
	t.Helper()
	if out, err := run("wait", "--for=delete", "pod", "-n", managerNamespace, "-l", "control-plane=controller-manager", "--timeout=90s"); err != nil {
		t.Errorf("the deployed manager's pods did not go: %v: %s", err, out)
	}
}

// startManager starts the manager binary with every controller and leader
// election on, and waits for its readiness probe. Every manager serves the
// webhooks on localhost:9443 (SO_REUSEPORT): a standby keeps conversion
// going while the leader is down.
func startManager(name string) (*managerproc.Process, error) {
	// Served, as in a deployment, for Prometheus to scrape.
	metrics, err := managerproc.FreePort()
	if err != nil {
		return nil, err
	}
	p, err := managerproc.Start(managerBin, name, []string{
		"--kubeconfig", kubeconfig,
		"--webhook-host", "localhost",
		// Its own certificate for config/local's localhost URLs, never
		// whatever another project left in controller-runtime's cert dir.
		"--webhook-cert-dir=",
		"--webhook-reuse-port",
		"--metrics-bind-address", metrics,
		"--leader-elect",
		"--leader-election-namespace", leaseNamespace,
		"--leader-election-id", leaseName,
		"--zap-log-level", "info",
	}, 60*time.Second)
	if err != nil {
		return nil, err
	}
	p.MetricsAddr = metrics
	return p, nil
}

// leaseHolder is the leader-election identity the manager process that
// leads holds: controller-runtime uses the hostname plus a random suffix.
func leaseHolder() string {
	out, err := run("get", "lease", "-n", leaseNamespace, leaseName, "-o", "jsonpath={.spec.holderIdentity}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}
