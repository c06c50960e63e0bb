//go:build bench

package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/test/framework/managerproc"
)

// managerProcess is an operator running as a child process, with its
// metrics endpoint on a free local port: bin/manager, or the kubebuilder
// tutorial's Memcached operator of the side-by-side run.
type managerProcess struct {
	*managerproc.Process
	metricsAddr string
	// secure is true for our manager, whose metrics endpoint is HTTPS behind
	// authentication and authorization; the tutorial's serves plain HTTP.
	secure bool
	// metrics keeps its connection to the metrics endpoint open between
	// scrapes: a TLS handshake per scrape would count as the operator's CPU.
	metrics *http.Client
}

// startProcess starts the operator binary bin with the flags every operator
// of the benchmark takes (the benchmark's cluster, a metrics address of its
// own, no leader election) and waits for its readiness probe. args come
// last, so they override these. secure says whether its metrics endpoint
// is HTTPS and wants the benchmark's token, as our manager's does.
func startProcess(bin, name string, secure bool, env []string, args ...string) (*managerProcess, error) {
	metrics, err := managerproc.FreePort()
	if err != nil {
		return nil, err
	}
	common := []string{"--kubeconfig", kubeconfig, "--metrics-bind-address", metrics, "--leader-elect=false"}
	p, err := managerproc.StartWithEnv(bin, "bench-"+name, append(common, args...), env, 120*time.Second)
	if err != nil {
		return nil, err
	}
	transport := &http.Transport{}
	if secure {
		// Our manager serves a self-signed certificate.
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // local test endpoint
	}
	return &managerProcess{Process: p, metricsAddr: metrics, secure: secure,
		metrics: &http.Client{Timeout: 10 * time.Second, Transport: transport}}, nil
}

// startManager starts the manager binary with every controller and waits
// for its readiness probe. extraArgs come last, so they override the
// benchmark's defaults.
func startManager(name string, extraArgs ...string) (*managerProcess, error) {
	args := []string{
		"--webhook-port=0",
		fmt.Sprintf("--max-concurrent-reconciles=%d", *reconcilers),
		// Every status write with its patch is in the log, for a write
		// that should not be there.
		"--zap-log-level=debug",
	}
	if *pprofAddr != "" {
		args = append(args, "--pprof-bind-address", *pprofAddr)
	}
	env, err := manifestEnv()
	if err != nil {
		return nil, err
	}
	return startProcess(managerBin, name, true, env, append(args, extraArgs...)...)
}

// manifestEnv is what the manager's Deployment (config/manager/manager.yaml)
// sets from its container's own limits through the downward API, such as
// GOMAXPROCS and GOMEMLIMIT: the benchmark runs the binary as it is deployed.
// The manifest is read once per run, for every manager the run starts.
var manifestEnv = sync.OnceValues(readManifestEnv)

func readManifestEnv() ([]string, error) {
	root, err := reporoot.Find()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "manager", "manager.yaml"))
	if err != nil {
		return nil, err
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(data, &d); err != nil {
		return nil, fmt.Errorf("config/manager/manager.yaml: %w", err)
	}
	var env []string
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil {
				continue
			}
			v, err := downwardValue(c.Resources, *e.ValueFrom.ResourceFieldRef)
			if err != nil {
				return nil, fmt.Errorf("config/manager/manager.yaml: %s: %w", e.Name, err)
			}
			env = append(env, e.Name+"="+v)
		}
	}
	return env, nil
}

// downwardValue is the value the kubelet gives a resourceFieldRef variable
// of a container with resources res: the limit divided by the divisor (1 by
// default), rounded up, so 500m of CPU is 1.
func downwardValue(res corev1.ResourceRequirements, ref corev1.ResourceFieldSelector) (string, error) {
	name, ok := strings.CutPrefix(ref.Resource, "limits.")
	if !ok {
		return "", fmt.Errorf("resource %q: only limits are supported", ref.Resource)
	}
	limit, ok := res.Limits[corev1.ResourceName(name)]
	if !ok {
		return "", fmt.Errorf("no %s limit", name)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	return strconv.FormatInt(int64(math.Ceil(float64(limit.MilliValue())/float64(divisor.MilliValue()))), 10), nil
}

// startPeer starts the kubebuilder tutorial's Memcached operator (PEER)
// with its own defaults and waits for its readiness probe.
func startPeer(name string) (*managerProcess, error) {
	return startProcess(peerBin, name, false, nil)
}

// procStatus reads one kB field of /proc/<pid>/status, such as VmHWM, in MiB.
func (p *managerProcess) procStatus(field string) (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, p.Pid())
}

// cpuSeconds is the user plus system CPU time the process has used.
func (p *managerProcess) cpuSeconds() (float64, error) { return cpuSecondsOf(p.Pid()) }

// writes is the process's own count of its writes in d, less, for our
// manager, the TokenReviews and SubjectAccessReviews that the benchmark's
// scrapes of its secure metrics made it send, counted in api, the API
// server's samples over the same time. Nobody else on the local cluster
// sends them.
func (p *managerProcess) writes(d, api samples) float64 {
	w := writesByManager(d)
	if p.secure {
		w -= reviews(api)
	}
	return w
}

// samples are Prometheus text-format samples: the full series (name and
// labels, as printed) to value.
type samples map[string]float64

// parseMetrics reads the Prometheus text format without a dependency.
func parseMetrics(r io.Reader, keep func(name string) bool) (samples, error) {
	out := samples{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		series := line[:i]
		name := series
		if j := strings.IndexByte(series, '{'); j >= 0 {
			name = series[:j]
		}
		if !keep(name) {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[series] = v
	}
	return out, sc.Err()
}

// label returns one label's value from a series as printed.
func label(series, name string) string {
	i := strings.Index(series, name+`="`)
	if i < 0 || (i > 0 && series[i-1] != '{' && series[i-1] != ',') {
		return ""
	}
	rest := series[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

func metricName(series string) string {
	if j := strings.IndexByte(series, '{'); j >= 0 {
		return series[:j]
	}
	return series
}

// sub returns a - b per series.
func (a samples) sub(b samples) samples {
	out := samples{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// sum adds the series of metric name whose labels pass keep.
func (a samples) sum(name string, keep func(series string) bool) float64 {
	var t float64
	for k, v := range a {
		if metricName(k) == name && (keep == nil || keep(k)) {
			t += v
		}
	}
	return t
}

func isWrite(verb string) bool {
	switch strings.ToUpper(verb) {
	case "POST", "PUT", "PATCH", "DELETE", "CREATE", "UPDATE", "APPLY", "DELETECOLLECTION":
		return true
	}
	return false
}

// scrapeManager reads the operator's metrics endpoint: our manager's
// secure one with a ServiceAccount token, the tutorial's plain one as is.
func (p *managerProcess) scrapeManager(token string) (samples, error) {
	scheme := "http"
	if p.secure {
		scheme = "https"
	}
	req, _ := http.NewRequest(http.MethodGet, scheme+"://"+p.metricsAddr+"/metrics", nil)
	if p.secure {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := p.metrics.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // a body only read from loses nothing on close
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("operator /metrics: %s: %s", resp.Status, b)
	}
	return parseMetrics(resp.Body, func(n string) bool {
		switch n {
		case "rest_client_requests_total", "controller_runtime_reconcile_total",
			"controller_runtime_reconcile_time_seconds_sum", "controller_runtime_reconcile_time_seconds_count",
			"workqueue_queue_duration_seconds_sum", "workqueue_queue_duration_seconds_count",
			"controller_runtime_webhook_requests_total":
			return true
		}
		return false
	})
}

// scrapeAPIServer reads apiserver_request_total with the admin credentials.
func scrapeAPIServer(ctx context.Context, cs kubernetes.Interface) (samples, error) {
	rc, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }() // a body only read from loses nothing on close
	return parseMetrics(rc, func(n string) bool { return n == "apiserver_request_total" })
}

// metricsToken returns a token of a ServiceAccount allowed to GET /metrics.
func metricsToken(ctx context.Context, cs kubernetes.Interface, ns string) (string, error) {
	const name = "bench-metrics-reader"
	create := func(err error) error {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if err := create(func() error {
		_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		return "", err
	}
	if err := create(func() error {
		_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		return "", err
	}
	return serviceAccountToken(ctx, cs, ns, name)
}

// serviceAccountToken creates the ServiceAccount ns/name unless it exists
// and returns a token of it that outlasts any run.
func serviceAccountToken(ctx context.Context, cs kubernetes.Interface, ns, name string) (string, error) {
	_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(6 * 3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
