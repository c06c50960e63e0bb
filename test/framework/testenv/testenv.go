// Package testenv runs tests against a real kube-apiserver and etcd
// (controller-runtime's envtest) with the project's CRDs installed. The
// binaries come from bin/, where `make test` builds them from the Go module
// proxy.
//
// Beside the product's CRDs (config/crd/bases) it installs the test-only
// CRDs under test/framework/api/crd: the Widget kind of test/framework/api/v1alpha1, for the
// library tests under pkg/ only, so that a change to a product API cannot
// break them. No product code, manifest or controller uses it.
//
// Every process the tests start (kube-apiserver, etcd, redis-server, the
// manager binary) listens only on loopback addresses, and no test sends
// traffic off the machine.
//
// A test package starts one control plane for all its tests, naming the APIs
// its client must know beside the built-in kinds:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Run(m, v1alpha1.AddToScheme)) }
//
// and each test gets it with testenv.Get(t).
package testenv

import (
	"cmp"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Env is a running control plane.
type Env struct {
	// Config reaches the API server as cluster admin.
	Config *rest.Config
	// Scheme knows the built-in kinds and every API of this project.
	Scheme *runtime.Scheme
	// Client is an uncached admin client.
	Client client.Client
}

var shared *Env

// Run starts the control plane, runs the package's tests and stops it. It
// returns the exit code for os.Exit.
func Run(m *testing.M, addToScheme ...func(*runtime.Scheme) error) int {
	return RunWith(m, RunOptions{}, addToScheme...)
}

// RunOptions change the control plane Run starts.
type RunOptions struct {
	// AdmissionPlugins are enabled in the API server besides its defaults,
	// such as OwnerReferencesPermissionEnforcement, which OpenShift runs.
	AdmissionPlugins []string
	// Webhooks, when set, registers webhooks (such as a Descriptor's
	// Webhooks) with a webhook server that runs for the whole package. The
	// API server then calls it for config/webhook/manifests.yaml and for
	// the conversion of every convertible kind of the scheme. Without it,
	// a kind served in two versions is installed without conversion, and
	// only its storage version may be used.
	Webhooks func(ctrl.Manager) error
	// CRDDirectoryPaths, when not empty, replaces the project's CRDs
	// (config/crd/bases and test/framework/api/crd): the upgrade test installs the
	// previous release's. Relative paths are to the test package's
	// directory, where go test runs.
	CRDDirectoryPaths []string
}

// RunWith is Run with a control plane changed by opts.
func RunWith(m *testing.M, opts RunOptions, addToScheme ...func(*runtime.Scheme) error) int {
	// `go test -fuzz` runs TestMain again in each of its workers, which run
	// only the fuzz target and which it kills before any cleanup can
	// finish: a control plane per worker would slow the baseline to a
	// crawl and outlive the run. Fuzz targets need none.
	flag.Parse()
	if isFuzzWorker() {
		return m.Run()
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapcore.InfoLevel)))
	// A loaded 2-core CI machine runs several control planes at once;
	// gomega's default of 1s would make waits flaky, not faster.
	gomega.SetDefaultEventuallyTimeout(30 * time.Second)
	gomega.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	root, err := reporoot.Find()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	assets, err := AssetsDir(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// envtest prefers the variable over BinaryAssetsDirectory, even when empty.
	if err := os.Setenv("KUBEBUILDER_ASSETS", assets); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	for _, add := range addToScheme {
		utilruntime.Must(add(scheme))
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     crdDirs(root),
		ErrorIfCRDPathMissing: true,
	}
	if len(opts.CRDDirectoryPaths) > 0 {
		te.CRDDirectoryPaths = opts.CRDDirectoryPaths
	}
	if opts.Webhooks != nil {
		// envtest points the conversion of the scheme's convertible kinds
		// and the webhook configurations at its local serving address.
		te.Scheme = scheme
		te.CRDInstallOptions.Scheme = scheme
		te.WebhookInstallOptions.Paths = []string{filepath.Join(root, "config", "webhook", "manifests.yaml")}
	}
	if len(opts.AdmissionPlugins) > 0 {
		te.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", strings.Join(opts.AdmissionPlugins, ","))
	}
	cfg, err := te.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting kube-apiserver and etcd:", err)
		return 1
	}
	defer func() {
		if err := te.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	shared = &Env{Config: cfg, Scheme: scheme, Client: c}
	if opts.Webhooks != nil {
		stop, err := serveWebhooks(cfg, scheme, te.WebhookInstallOptions, opts.Webhooks)
		if err != nil {
			fmt.Fprintln(os.Stderr, "serving webhooks:", err)
			return 1
		}
		defer stop()
	}
	return m.Run()
}

// serveWebhooks runs a manager that only serves webhooks, at the address
// and with the certificate envtest installed them with, and waits until the
// API server can reach it.
func serveWebhooks(cfg *rest.Config, scheme *runtime.Scheme, wo envtest.WebhookInstallOptions, register func(ctrl.Manager) error) (func(), error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
		Controller: ctrlconfig.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		return nil, err
	}
	if err := register(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "the webhook server stopped with an error:", err)
		}
	}
	addr := net.JoinHostPort(wo.LocalServingHost, strconv.Itoa(wo.LocalServingPort))
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only checks that the server listens
		if err == nil {
			_ = conn.Close()
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the webhook server at %s did not come up: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Get returns the package's control plane; the package's TestMain must call Run.
func Get(t testing.TB) *Env {
	t.Helper()
	if shared == nil && isFuzzWorker() {
		t.Fatal("testenv.Get: a fuzz worker of `go test -fuzz` starts no control plane; a fuzz target must not need one")
	}
	if shared == nil {
		t.Fatal("testenv.Get needs func TestMain(m *testing.M) { os.Exit(testenv.Run(m, ...)) }")
	}
	return shared
}

// isFuzzWorker tells whether this process is a worker of `go test -fuzz`,
// which the coordinator starts with -test.fuzzworker.
func isFuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// crdDirs lists config/crd/bases and its folders, one per API package, and
// test/framework/api/crd, the CRDs of the test-only API.
func crdDirs(root string) []string {
	bases := filepath.Join(root, "config", "crd", "bases")
	dirs, _ := filepath.Glob(filepath.Join(bases, "*", "kustomization.yaml"))
	out := []string{bases}
	for _, d := range dirs {
		out = append(out, filepath.Dir(d))
	}
	return append(out, filepath.Join(root, "test", "framework", "api", "crd"))
}

// AssetsDir returns where kube-apiserver and etcd (and kubectl beside them)
// are: $KUBEBUILDER_ASSETS, which make sets, or else the newest bin/k8s-v*
// folder of the repository at root, so that `go test` works on its own once
// make built them. It fails when either binary is missing there.
func AssetsDir(root string) (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		found, _ := filepath.Glob(filepath.Join(root, "bin", "k8s-v*"))
		if len(found) > 0 {
			dir = found[len(found)-1]
		}
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if dir == "" || !fileExists(filepath.Join(dir, bin)) {
			return "", fmt.Errorf("kube-apiserver and etcd are missing: run `make test`, which builds them into bin/ (KUBEBUILDER_ASSETS=%q)", dir)
		}
	}
	return dir, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ManagerOptions configure StartManager.
type ManagerOptions struct {
	// Config overrides the admin config, to run as another identity or to count requests.
	Config *rest.Config
	// Controllers are the descriptors whose children the cache filters.
	Controllers []reconciler.Descriptor
	// MaxConcurrentReconciles is each controller's workers; 2 when zero.
	MaxConcurrentReconciles int
	// WatchNamespaces limits the cache to these namespaces, as
	// --watch-namespaces does; every namespace when empty.
	WatchNamespaces []string
}

// StartManager runs a manager configured like cmd/manager (label-filtered
// caches, no metrics or probes) until the test ends. setup registers the
// controllers under test.
func (e *Env) StartManager(t testing.TB, opts ManagerOptions, setup func(ctrl.Manager) error) ctrl.Manager {
	t.Helper()
	cfg := opts.Config
	if cfg == nil {
		cfg = e.Config
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 e.Scheme,
		Cache:                  manager.CacheOptions(opts.Controllers, opts.WatchNamespaces),
		NewCache:               manager.NewCache,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Several tests in one process register controllers of the same name.
		Controller: ctrlconfig.Controller{SkipNameValidation: new(true), MaxConcurrentReconciles: cmp.Or(opts.MaxConcurrentReconciles, 2)},
	})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	if err := setup(mgr); err != nil {
		t.Fatalf("setting up controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with an error: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("manager did not stop within 30s")
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the manager's cache did not sync")
	}
	return mgr
}

// StartController runs one controller the way the manager binary does
// (its descriptor's label-filtered cache and Setup, with opts) in a manager
// configured by mo, until the test ends. It returns a Gomega for the test,
// the admin client and a fresh namespace.
func StartController(t *testing.T, d reconciler.Descriptor, opts reconciler.Options, mo ManagerOptions) (*gomega.WithT, client.Client, string) {
	t.Helper()
	env := Get(t)
	mo.Controllers = append(mo.Controllers, d)
	env.StartManager(t, mo, func(mgr ctrl.Manager) error { return d.Setup(mgr, opts) })
	g := gomega.NewWithT(t)
	// Long enough that "nothing happens" means the controller had its chance.
	g.SetDefaultConsistentlyDuration(2 * time.Second)
	return g, env.Client, env.Namespace(t)
}

// StartControlPlane starts a kube-apiserver and etcd of their own for one
// test, with flags added to the API server's (such as
// enable-priority-and-fairness=false), and stops them when the test ends.
// It returns an admin config. Prefer the package's shared control plane
// (Get): this one costs seconds.
func StartControlPlane(t testing.TB, apiServerFlags map[string]string) *rest.Config {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	assets, err := AssetsDir(root)
	if err != nil {
		t.Fatal(err)
	}
	te := &envtest.Environment{BinaryAssetsDirectory: assets}
	args := te.ControlPlane.GetAPIServer().Configure()
	for name, value := range apiServerFlags {
		args.Set(name, value)
	}
	cfg, err := te.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := te.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return cfg
}
