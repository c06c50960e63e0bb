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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
)

var (
	kubeconfig = os.Getenv("E2E_KUBECONFIG")
	kubectlBin = os.Getenv("KUBECTL")
	managerBin = os.Getenv("MANAGER")
	root       string
	// leader is the manager TestMain starts; tests may replace it.
	leader *managerProcess
)

const (
	leaseNamespace = "kube-system"
	leaseName      = "multi-operator-e2e"
)

func TestMain(m *testing.M) {
	gomega.SetDefaultEventuallyTimeout(90 * time.Second)
	gomega.SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	if kubeconfig == "" || kubectlBin == "" || managerBin == "" {
		fmt.Fprintln(os.Stderr, "E2E_KUBECONFIG, KUBECTL and MANAGER must be set: run `make test-e2e`")
		os.Exit(1)
	}
	wd, _ := os.Getwd()
	root = filepath.Clean(filepath.Join(wd, "..", ".."))
	if out, err := run("apply", "--server-side", "-k", filepath.Join(root, "config", "crd")); err != nil {
		fmt.Fprintln(os.Stderr, "installing CRDs:", err, out)
		os.Exit(1)
	}
	var err error
	leader, err = startManager("first")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	leader.stop()
	os.Exit(code)
}

// run runs kubectl against the test cluster.
func run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
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

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	name := "e2e-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	_, _ = run("delete", "namespace", name, "--wait=true", "--ignore-not-found")
	kubectl(t, "create", "namespace", name)
	t.Cleanup(func() { _, _ = run("delete", "namespace", name, "--wait=false", "--ignore-not-found") })
	return name
}

// managerProcess is bin/manager running as a child process.
type managerProcess struct {
	name      string
	cmd       *exec.Cmd
	probeAddr string
	log       *os.File
	exited    chan struct{}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startManager starts the manager binary with every controller, leader
// election on, and waits for its readiness probe.
func startManager(name string) (*managerProcess, error) {
	probe, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "manager-"+name+"-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(managerBin,
		"--kubeconfig", kubeconfig,
		"--health-probe-bind-address", probe,
		"--metrics-bind-address", "0",
		"--leader-elect",
		"--leader-election-namespace", leaseNamespace,
		"--leader-election-id", leaseName,
		"--zap-log-level", "info",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &managerProcess{name: name, cmd: cmd, probeAddr: probe, log: logFile, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + probe + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("manager %s exited: see %s", name, logFile.Name())
		case <-time.After(200 * time.Millisecond):
		}
	}
	p.kill()
	return nil, fmt.Errorf("manager %s was not ready within 60s: see %s", name, logFile.Name())
}

// stop ends the manager as Ctrl-C does.
func (p *managerProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.kill()
	}
}

// kill ends the manager at once, as a crash or an OOM kill would.
func (p *managerProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// identity is the prefix of the leader-election identity the manager
// process holds: controller-runtime uses the hostname plus a random suffix.
func leaseHolder(t *testing.T) string {
	out, err := run("get", "lease", "-n", leaseNamespace, leaseName, "-o", "jsonpath={.spec.holderIdentity}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}
