//go:build bench

// Package bench is the scale benchmark: the manager binary against the
// local kwok cluster, N custom resources per kind. Run it with
// `make bench N=1000`; it prints one table and writes results.md.
package bench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/hack/localcluster"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/pkg/manager"
)

var (
	n           = flag.Int("n", 1000, "custom resources per kind")
	idle        = flag.Duration("idle", 60*time.Second, "idle window after each kind's convergence in which the manager must write nothing")
	foreign     = flag.Int("foreign", 0, "unrelated Deployments (with a Pod each) for the second memory run; 0 means 5*n, at least 500, at most 5000")
	lead        = flag.Duration("lead", 0, "how far before the boundary the TDSet lag run wakes the reconciler; 0 means 5s + 5ms per TDSet")
	out         = flag.String("out", "results.md", "results file, relative to this directory")
	pprofAddr   = flag.String("pprof", "", "pprof address for the manager (--pprof-bind-address), empty for none")
	slackMiB    = flag.Float64("rss-slack-mib", 5, "absolute slack on the 1.1x RSS target")
	only        = flag.String("kinds", "", "comma-separated kinds to converge (memcached,tdset,whalesay); empty for all")
	memory      = flag.Bool("memory", true, "run the memory runs with and without foreign Deployments")
	lag         = flag.Bool("lag", true, "run the TDSet boundary lag run")
	convert     = flag.Bool("conversion", true, "run the TDSet conversion run: N TDSets created and listed as v1 and as v2")
	reconcilers = flag.Int("workers", manager.DefaultMaxConcurrentReconciles, "reconciles per controller in parallel (--max-concurrent-reconciles), in the binary and in the TDSet lag run")
	sideBySide  = flag.Bool("side-by-side", true, "run the efficiency scenario first: each kind's controller alone, without the admission policy, and the tutorial's Memcached operator beside ours")
	scalePart   = flag.Bool("scale", true, "run the scale part: every controller at once, with the admission policy")
	peer        = flag.Bool("peer", true, "run the kubebuilder tutorial's Memcached operator (PEER) in the efficiency scenario")
	slopeN      = flag.Int("slope-n", 0, "CRs of the second restart of the Memcached RSS slope (the first is over -n); 0 means 4*n, -1 skips the slope")
	// createRounds is how many paired rounds of the client's creates are
	// timed with each operator; the pair with the median ratio counts. One
	// round alone is not a measure on two cores that also host the
	// cluster: rounds of the same run differed by up to 50%.
	createRounds = flag.Int("rounds", 5, "paired rounds of the client's creates per operator in the efficiency scenario (with no operator and with it, in alternating order); the pair with the median ratio counts")
	// maxConvergeVsPeer turns the convergence target into a failure, with
	// a margin for a small N's noise: CI's smoke run sets it.
	maxConvergeVsPeer = flag.Float64("max-converge-vs-peer", 0, "fail the run when our Memcacheds' children take more than this many times the tutorial's to become available; 0 reports only")
	// convergeVsPeerSlack keeps the bound from failing small runs, whose
	// times are a few seconds and mostly the cluster's noise.
	convergeVsPeerSlack = flag.Duration("converge-vs-peer-slack", 10*time.Second, "-max-converge-vs-peer fails the run only when ours also takes this much longer than the tutorial's")
	aloneFlags          = flag.String("alone-flags", "", "extra manager flags for the efficiency scenario, space-separated, such as --kube-api-qps=20")

	kubeconfig = os.Getenv("BENCH_KUBECONFIG")
	managerBin = os.Getenv("MANAGER")
	kubectlBin = os.Getenv("KUBECTL")
	// peerBin is the kubebuilder tutorial's Memcached operator, built from
	// test/peers/tutorialmemcached; empty skips the side-by-side run.
	peerBin = os.Getenv("PEER")
)

// workers is how many creates the benchmark has in flight: enough to reach
// the API server's limit rather than the round-trip time's.
const workers = 32

// benchLabel marks every namespace the benchmark creates, so a later run
// can remove what an aborted one left.
const benchLabel = "multi-operator.bench"

// kind is one custom resource kind under test.
type kind struct {
	name     string
	gvk      schema.GroupVersionKind
	resource string // plural, as apiserver_request_total names it
	child    schema.GroupVersionKind
	// childReady reports when a child became available/complete.
	childReady func(u *unstructured.Unstructured) (time.Time, bool)
	spec       map[string]any
	// policy is the kustomization under config/ of the admission policy
	// that adds policyFinalizer to every new CR; empty for none.
	policy          string
	policyFinalizer string
}

func conditionTime(u *unstructured.Unstructured, typ string) (time.Time, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			ts, _ := m["lastTransitionTime"].(string)
			t, err := time.Parse(time.RFC3339, ts)
			return t, err == nil
		}
	}
	return time.Time{}, false
}

var deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

var kinds = []kind{
	{
		name: "memcached", gvk: schema.GroupVersionKind{Group: "cache.example.com", Version: "v1alpha1", Kind: "Memcached"},
		resource: "memcacheds", child: deploymentGVK,
		childReady: func(u *unstructured.Unstructured) (time.Time, bool) { return conditionTime(u, "Available") },
		spec:       map[string]any{"size": int64(1), "containerPort": int64(11211)},
		policy:     filepath.Join("admission", "memcached"), policyFinalizer: memcached.Finalizer,
	},
	{
		name: "tdset", gvk: schema.GroupVersionKind{Group: "schedule.rs", Version: "v2", Kind: "TDSet"},
		resource: "tdsets", child: deploymentGVK,
		childReady: func(u *unstructured.Unstructured) (time.Time, bool) { return conditionTime(u, "Available") },
		// One window over 23 hours and the default for the last: 1 replica all day.
		spec: map[string]any{
			"container":       map[string]any{"image": "crccheck/hello-world", "port": int64(8000)},
			"windows":         []any{map[string]any{"start": "00:00", "end": "23:00", "replicas": int64(1)}},
			"defaultReplicas": int64(1),
		},
	},
	{
		name: "whalesay", gvk: schema.GroupVersionKind{Group: "devsectim.io", Version: "v1alpha1", Kind: "WhaleSay"},
		resource: "whalesays", child: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
		childReady: func(u *unstructured.Unstructured) (time.Time, bool) { return conditionTime(u, "Complete") },
		spec:       map[string]any{"message": "bench"},
	},
}

// object is a CR of kind k with the benchmark's spec.
func (k kind) object(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": k.spec}}
	u.SetGroupVersionKind(k.gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// childResource is the resource of k's child, for a watch.
func (k kind) childResource() schema.GroupVersionResource {
	return k.child.GroupVersion().WithResource(strings.ToLower(k.child.Kind) + "s")
}

// childAvailable reports whether a child of k is available (complete, for
// a Job).
func (k kind) childAvailable(u *unstructured.Unstructured) bool {
	_, ok := k.childReady(u)
	return ok
}

// writesOf is the API server's view of a run of kind k in d, by resource
// and verb: the CR kind, less the benchmark's own creates, and the kinds
// the operators create (see ownResources).
func (k kind) writesOf(d samples) map[string]float64 {
	w := apiWrites(d, k.ownResources)
	w[k.resource+" POST"] -= float64(*n)
	return w
}

// crdDir is the kustomization of k's CRD under config/.
func (k kind) crdDir() string { return filepath.Join("crd", "bases", k.gvk.Group+"_"+k.resource) }

// ownResources are the resources, as apiserver_request_total names them,
// that a run of kind k writes: the CR kind and the kinds the operators
// create. Deployments and events also carry kube-controller-manager's
// writes.
func (k kind) ownResources(group, resource string) bool {
	switch resource {
	case k.resource, "services", "deployments", "jobs", "events":
		return true
	}
	return false
}

// section is one table of the results, in the order the benchmark ran it.
type section struct {
	title string
	// about says, under the title, what ran and how.
	about  string
	header []string
	rows   [][]string
}

type bench struct {
	t     *testing.T
	ctx   context.Context
	cfg   *rest.Config
	c     client.Client
	cs    kubernetes.Interface
	root  string
	token string
	// crLimit is, per kind, how long N creates took with no manager running.
	crLimit  map[string]time.Duration
	sections []*section
	failed   []string
}

// begin starts a table of the results: the rows b.add adds from now on go
// into it.
func (b *bench) begin(title, about string, header ...string) {
	b.sections = append(b.sections, &section{title: title, about: about, header: header})
}

// add adds a row of measure, value, target and verdict to the current table.
func (b *bench) add(measure, value, target, verdict string) {
	b.appendRow(measure, value, target, verdict)
	b.t.Logf("%s: %s (target %s) %s", measure, value, target, verdict)
}

// addRow adds a row of cells, as many as the current table has columns.
func (b *bench) addRow(cells ...string) {
	b.appendRow(cells...)
	b.t.Log(strings.Join(cells, " | "))
}

// appendRow adds a row to the current table, a plain one if none began.
func (b *bench) appendRow(cells ...string) {
	if len(b.sections) == 0 {
		b.begin("Results", "", "Measure", "Value", "Target", "")
	}
	s := b.sections[len(b.sections)-1]
	s.rows = append(s.rows, cells)
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// As controller-runtime's config loader does for the manager: no
	// client-side rate limit, API Priority and Fairness is the limit.
	cfg.QPS, cfg.Burst = -1, 0
	return cfg, nil
}

func TestScale(t *testing.T) {
	if kubeconfig == "" || managerBin == "" || kubectlBin == "" {
		t.Fatal("BENCH_KUBECONFIG, MANAGER and KUBECTL must be set: run `make bench`")
	}
	ctrl.SetLogger(logr.Discard())
	for _, bin := range []string{managerBin, peerBin} {
		if bin == "" {
			continue
		}
		// A second operator (make run) reconciles the same objects: it
		// doubles the writes, causes conflicts and fights the TDSet lag run.
		if pids := running(bin); len(pids) > 0 {
			t.Fatalf("another %s runs (pids %v): stop it first", bin, pids)
		}
	}
	cfg, err := restConfig()
	if err != nil {
		t.Fatal(err)
	}
	scheme := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := schedulev2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{t: t, ctx: context.Background(), cfg: cfg, c: c, cs: kubernetes.NewForConfigOrDie(cfg), root: root}
	nForeign := *foreign
	if nForeign == 0 {
		nForeign = min(max(5**n, 500), 5000)
	}

	b.cleanup()
	t.Cleanup(b.cleanup)
	// No benchmark traffic may leave this machine: every address of the
	// cluster routes to loopback, before the run and, with every pod of the
	// run still there, after it (cleanups run last-registered first); the
	// cluster's processes are watched for any other peer throughout. The
	// benchmark's cluster has no real node (make bench), so loopback only.
	checkAddresses := func() {
		if err := localcluster.CheckAddresses(b.ctx, c); err != nil {
			t.Errorf("the local cluster has addresses off this machine:\n%v", err)
		}
	}
	checkAddresses()
	connections := localcluster.Watch(time.Second, localcluster.Allowed{})
	t.Cleanup(func() {
		checkAddresses()
		offMachine, err := connections.Stop()
		if err != nil {
			t.Errorf("watching the cluster's connections: %v", err)
		}
		for _, conn := range offMachine {
			t.Errorf("a connection left this machine: %s", conn)
		}
	})
	var selected []kind
	for _, k := range kinds {
		if *only == "" || slices.Contains(strings.Split(*only, ","), k.name) {
			selected = append(selected, k)
		}
	}
	// The efficiency scenario first: it wants the admission policy the
	// scale part installs gone, and each operator alone on the cluster.
	if *sideBySide {
		b.efficiency(selected)
	}
	if i := slices.IndexFunc(selected, func(k kind) bool { return k.name == peerKind }); *fairness && i >= 0 {
		b.fairnessScenario(selected[i])
	}
	if *scalePart {
		b.scale(selected, nForeign)
	}

	b.report(nForeign)
	for _, f := range b.failed {
		t.Error(f)
	}
}

// scale is the scale part: every controller of one manager converging N
// CRs of each selected kind, with the admission policy, then the memory,
// TDSet lag and conversion runs as their flags ask.
func (b *bench) scale(selected []kind, nForeign int) {
	b.begin("Scale: every controller at once",
		fmt.Sprintf("bin/manager, every controller, --max-concurrent-reconciles=%d --kube-api-qps=0 (no client-side limit: its capacity), with the admission policies. "+
			"RedisCluster is not measured: its simulated Pods run no Redis, so it never becomes Ready on kwok.", *reconcilers),
		"Measure", "Value", "Target", "")
	b.installAll()
	// Each kind's own limit: its CRs created while no manager runs, through
	// the same validation and admission as in the convergence run.
	b.crLimit = map[string]time.Duration{}
	for _, k := range selected {
		ns := b.namespace("bench-limit-" + k.name)
		began := time.Now()
		b.must(b.createCRs(k, ns))
		b.crLimit[k.name] = time.Since(began)
	}
	b.cleanup()
	b.authorize()

	// Start-up on an empty cluster. This part measures what the manager can
	// do, so without the default client-side limit, which would make it
	// measure --kube-api-qps (the efficiency part runs the default).
	mgr := b.start("empty", "--kube-api-qps=0")
	b.add("Start-up to /readyz, no CRs", ms(mgr.Startup), "-", "")

	// The limit: the same client creating N ConfigMaps.
	ns := b.namespace("bench-configmaps")
	began := time.Now()
	b.must(parallel(*n, func(i int) error {
		return b.c.Create(b.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}})
	}))
	cmTime := time.Since(began)
	b.add(fmt.Sprintf("%d ConfigMaps created (the limit)", *n), fmt.Sprintf("%s (%.0f/s)", secs(cmTime), rate(*n, cmTime)), "-", "")
	for _, k := range selected {
		d := b.crLimit[k.name]
		b.add(fmt.Sprintf("%d %s CRs created with no manager running (this kind's limit)", *n, k.name),
			fmt.Sprintf("%s (%.0f/s, %.0f%% of the ConfigMap rate)", secs(d), rate(*n, d), 100*cmTime.Seconds()/d.Seconds()), "-", "")
	}

	cpu0, _ := mgr.cpuSeconds()
	m0 := b.scrape(mgr)
	for _, k := range selected {
		b.converge(mgr, k, cmTime)
	}
	crs := len(selected) * *n
	cpu1, _ := mgr.cpuSeconds()
	m1 := b.scrape(mgr)
	rec := max(m1.sum("controller_runtime_reconcile_total", nil)-m0.sum("controller_runtime_reconcile_total", nil), 1)
	b.add("CPU per 1000 reconciles (convergence + idle)", fmt.Sprintf("%.2f s (%.0f reconciles, %.1f s CPU)", (cpu1-cpu0)/rec*1000, rec, cpu1-cpu0), "-", "")
	hwm, _ := mgr.procStatus("VmHWM")
	b.add(fmt.Sprintf("Peak RSS, %d CRs converged", crs), mib(hwm), "-", "")
	mgr.Stop()

	if *memory {
		b.memory(crs, nForeign)
	}
	if *lag {
		// The TDSet reconciler in-process, on a clock the benchmark controls.
		b.tdsetLag()
	}
	if *convert {
		b.conversion()
	}
}

// installAll installs what the scale part runs against: every CRD, and
// the admission policies that the memcached overlay installs with its CRD.
// TDSets are made as v2, the storage version, so no conversion webhook is
// involved and the manager runs without one (--webhook-port=0): this
// measures the controllers.
func (b *bench) installAll() {
	crds, err := filepath.Glob(filepath.Join(b.root, "config", "crd", "bases", "*"))
	b.must(err)
	var dirs []string
	for _, dir := range crds {
		dir, err = filepath.Rel(filepath.Join(b.root, "config"), dir)
		b.must(err)
		dirs = append(dirs, dir)
	}
	b.install(kinds, append(dirs, policies(kinds)...)...)
	for _, k := range kinds {
		// The scale part has always run with whatever the policy did, so a
		// policy that does not take (no MutatingAdmissionPolicy in the API
		// server's admission) is worth a line, not a failure.
		if err := b.awaitPolicy(k, true); err != nil {
			b.t.Log(err)
		}
	}
}

// install applies the kustomizations dirs, relative to config/, waits for
// every CRD to be Established and then for the API server to admit a
// dry-run create of each kind of ks.
func (b *bench) install(ks []kind, dirs ...string) {
	b.t.Helper()
	for _, dir := range dirs {
		b.kubectl("apply", "--server-side", "-k", b.configDir(dir))
	}
	if out, err := exec.Command(filepath.Join(b.root, "hack", "wait-crds-established.sh"), "60", kubectlBin, "--kubeconfig", kubeconfig).CombinedOutput(); err != nil {
		b.t.Fatalf("waiting for the CRDs: %v: %s", err, out)
	}
	// The API server's admission policies learn a new CRD's kind a while
	// after it is Established, and refuse its objects until then: wait
	// until a dry-run create of every kind passes.
	for _, k := range ks {
		b.awaitAdmitted(k.object("default", k.name+"-dry-run"))
	}
}

// configDir is the kustomization dir, relative to config/, as a path.
func (b *bench) configDir(dir string) string { return filepath.Join(b.root, "config", dir) }

// kubectl runs kubectl against the benchmark's cluster, and fails the
// benchmark with its output when it fails.
func (b *bench) kubectl(args ...string) {
	b.t.Helper()
	if err := runKubectl(args...); err != nil {
		b.t.Fatal(err)
	}
}

// runKubectl runs kubectl against the benchmark's cluster and returns an
// error with its output when it fails.
func runKubectl(args ...string) error {
	if o, err := exec.Command(kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, o)
	}
	return nil
}

// policies are the kustomizations of the admission policies of ks.
func policies(ks []kind) []string {
	var dirs []string
	for _, k := range ks {
		if k.policy != "" {
			dirs = append(dirs, k.policy)
		}
	}
	return dirs
}

// awaitPolicy waits up to a minute until a dry-run create of a k shows its
// admission policy at work (on) or gone (off): a policy's creation or
// deletion reaches the API server's admission a moment after the API call.
// Kinds without a policy pass at once.
func (b *bench) awaitPolicy(k kind, on bool) error {
	if k.policy == "" {
		return nil
	}
	var err error
	if waitFor(time.Minute, func() bool {
		probe := k.object("default", k.name+"-policy-probe")
		if err = b.c.Create(b.ctx, probe, client.DryRunAll); err != nil {
			return false
		}
		return slices.Contains(probe.GetFinalizers(), k.policyFinalizer) == on
	}) != nil {
		return fmt.Errorf("%s: after a minute, whether the admission policy config/%s adds %s is still not %t (last error: %v)", k.name, k.policy, k.policyFinalizer, on, err)
	}
	return nil
}

// authorize makes the ServiceAccount token that the benchmark reads our
// manager's secure metrics with. cleanup deletes its namespace, and the
// token with it: authorize again after each cleanup that a scrape follows.
func (b *bench) authorize() {
	b.t.Helper()
	b.namespace("bench-system")
	var err error
	b.token, err = metricsToken(b.ctx, b.cs, "bench-system")
	b.must(err)
}

// memory measures the peak RSS of a fresh manager process that lists and
// reconciles crs CRs once, without and then with nForeign foreign
// Deployments and Pods in the cluster.
func (b *bench) memory(crs, nForeign int) {
	mgr := b.start("restart")
	b.add(fmt.Sprintf("Start-up to /readyz, %d CRs", crs), ms(mgr.Startup), "-", "")
	rssA := b.settle(mgr, crs)
	mgr.Stop()
	b.foreign(nForeign)
	mgr = b.start("foreign")
	b.add(fmt.Sprintf("Start-up to /readyz, %d CRs + %d foreign Deployments", crs, nForeign), ms(mgr.Startup), "-", "")
	rssB := b.settle(mgr, crs)
	mgr.Stop()
	limit := 1.1*rssA + *slackMiB
	ok := rssB <= limit
	b.add("Peak RSS after restart, own CRs only", mib(rssA), "-", "")
	b.add(fmt.Sprintf("Peak RSS after restart, + %d foreign Deployments and Pods", nForeign), fmt.Sprintf("%s (%.2fx)", mib(rssB), rssB/rssA),
		fmt.Sprintf("<= 1.1x + %.0f MiB = %s", *slackMiB, mib(limit)), verdict(ok))
	if !ok {
		b.failed = append(b.failed, fmt.Sprintf("RSS with foreign Deployments %s > %s", mib(rssB), mib(limit)))
	}
}

func (b *bench) must(err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
}

// start starts our manager (see startManager), stopped at the latest when
// the test ends.
func (b *bench) start(name string, extraArgs ...string) *managerProcess {
	b.t.Helper()
	m, err := startManager(name, extraArgs...)
	return b.started(name, m, err)
}

// startPeer starts the tutorial's Memcached operator (see startPeer),
// stopped at the latest when the test ends.
func (b *bench) startPeer(name string) *managerProcess {
	b.t.Helper()
	m, err := startPeer(name)
	return b.started(name, m, err)
}

// started fails the benchmark if an operator did not start, and otherwise
// has it stopped when the test ends and names its log.
func (b *bench) started(name string, m *managerProcess, err error) *managerProcess {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(m.Stop)
	b.t.Logf("operator %s: pid %d, log %s", name, m.Pid(), m.Log.Name())
	return m
}

func (b *bench) scrape(m *managerProcess) samples {
	b.t.Helper()
	// The metrics server may start a moment after /readyz answers.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := m.scrapeManager(b.token)
		if err == nil || time.Now().After(deadline) {
			b.must(err)
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *bench) scrapeAPI() samples {
	b.t.Helper()
	s, err := scrapeAPIServer(b.ctx, b.cs)
	b.must(err)
	return s
}

// awaitAdmitted waits up to a minute until a dry-run create of obj passes
// admission, and fails the benchmark with the last refusal after that.
func (b *bench) awaitAdmitted(obj client.Object) {
	b.t.Helper()
	var err error
	if waitFor(time.Minute, func() bool {
		err = b.c.Create(b.ctx, obj, client.DryRunAll)
		return err == nil
	}) != nil {
		b.t.Fatalf("the API server does not take %s %s yet: %v", obj.GetObjectKind().GroupVersionKind(), obj.GetName(), err)
	}
}

// namespace creates a labelled namespace.
func (b *bench) namespace(name string) string {
	b.t.Helper()
	err := b.c.Create(b.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{benchLabel: "true"}}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.t.Fatal(err)
	}
	return name
}

// cleanup deletes the benchmark's namespaces and waits for them to go, so
// that the next phase or run starts from an empty cluster.
func (b *bench) cleanup() {
	list := &corev1.NamespaceList{}
	if err := b.c.List(b.ctx, list, client.HasLabels{benchLabel}); err != nil {
		b.t.Log(err)
		return
	}
	names := make([]string, 0, len(list.Items))
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	b.deleteNamespaces(names...)
}

// deleteNamespaces deletes the benchmark's namespaces names and waits for
// them to go, with everything in them.
func (b *bench) deleteNamespaces(names ...string) {
	for _, name := range names {
		_ = b.c.Delete(b.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		b.releaseFinalizers(name)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		left := 0
		for _, name := range names {
			if err := b.c.Get(b.ctx, client.ObjectKey{Name: name}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	b.t.Log("benchmark namespaces still terminating after 10 minutes")
}

// releaseFinalizers drops the finalizers of the CRs in ns: between phases
// the managers of the benchmark are stopped, so nobody else would, and the
// namespace would never go. Between the rounds of one operator it runs too,
// before the operator is idle again and the next round starts: the
// operator's own finalizing is not what the rounds measure.
func (b *bench) releaseFinalizers(ns string) {
	for _, k := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		if err := b.c.List(b.ctx, list, client.InNamespace(ns)); err != nil {
			continue
		}
		for i := range list.Items {
			if len(list.Items[i].GetFinalizers()) > 0 {
				_ = b.c.Patch(b.ctx, &list.Items[i], client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			}
		}
	}
}

// writesByManager is the manager's own count of its write requests.
func writesByManager(d samples) float64 {
	return d.sum("rest_client_requests_total", func(s string) bool { return isWrite(label(s, "method")) })
}

// readsByManager counts the manager's GET requests.
func readsByManager(d samples) float64 {
	return d.sum("rest_client_requests_total", func(s string) bool { return label(s, "method") == "GET" })
}

// apiWrites groups write requests of every client by resource[/subresource] verb.
func apiWrites(d samples, keep func(group, resource string) bool) map[string]float64 {
	out := map[string]float64{}
	for s, v := range d {
		if metricName(s) != "apiserver_request_total" || !isWrite(label(s, "verb")) {
			continue
		}
		g, r := label(s, "group"), label(s, "resource")
		if !keep(g, r) {
			continue
		}
		if sr := label(s, "subresource"); sr != "" {
			r += "/" + sr
		}
		key := r + " " + label(s, "verb")
		if code := label(s, "code"); !strings.HasPrefix(code, "2") {
			// Failed writes, such as AlreadyExists or Conflict, are waste.
			key += " " + code
		}
		out[key] += v
	}
	return out
}

func formatWrites(w map[string]float64, per int) string {
	keys := make([]string, 0, len(w))
	for k := range w {
		if w[k] > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, w[k]/float64(per)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// converge creates N CRs of kind k, waits for their children and Ready,
// then idles, and reports times, writes and the Ready lag.
func (b *bench) converge(mgr *managerProcess, k kind, cmTime time.Duration) {
	t := b.t
	ns := b.namespace("bench-" + k.name)
	// The Ready lag is measured as a user would see it: from the moment the
	// API server shows a child available to the moment it shows its CR
	// Ready, both on watches of this process.
	watchCtx, stopWatches := context.WithCancel(b.ctx)
	defer stopWatches()
	children, crReady := b.watchKind(watchCtx, k, ns)
	b.awaitNoCRs(k)
	m0, a0 := b.scrape(mgr), b.scrapeAPI()
	cpu0 := machineCPU()
	began := time.Now()
	b.must(b.createCRs(k, ns))
	created := time.Since(began)

	// Both times come from the watches: the moment this process saw the
	// last child created and the last CR Ready, without loading the API
	// server with lists of a thousand objects.
	var childrenAt, readyAt time.Duration
	var cpuChildren map[string]float64
	deadline := convergeDeadline(began, *n)
	for time.Now().Before(deadline) {
		if kids, _ := children.counts(); childrenAt == 0 && kids >= *n {
			childrenAt = children.lastSeen().Sub(began)
			cpuChildren = machineCPU()
		}
		if _, ready := crReady.counts(); ready >= *n {
			readyAt = crReady.lastMatched().Sub(began)
			break
		}
		if children.broken() || crReady.broken() {
			t.Errorf("%s: a watch of the benchmark ended (410 Gone): convergence not measured", k.name)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	if readyAt == 0 {
		t.Errorf("%s: %d of %d Ready after %s: see %s", k.name, b.countReady(k, ns), *n, time.Since(began).Round(time.Second), mgr.Log.Name())
		b.add(k.name+": convergence", "did not converge", "-", "MISSED")
		return
	}
	cpu1 := machineCPU()
	// Events are sent by a background goroutine, after the status write that
	// made the CR Ready: the idle window starts once they are out.
	drained := b.drain(mgr)
	m1, a1 := b.scrape(mgr), b.scrapeAPI()
	time.Sleep(*idle)
	m2, a2 := b.scrape(mgr), b.scrapeAPI()

	b.add(fmt.Sprintf("%s: %d CRs created", k.name, *n), fmt.Sprintf("%s (%.0f/s)", secs(created), rate(*n, created)), "-", "")
	childRatio := cmTime.Seconds() / childrenAt.Seconds()
	b.add(fmt.Sprintf("%s: all %d children created", k.name, *n), fmt.Sprintf("%s (%.0f/s, %.0f%% of the ConfigMap rate, %.0f%% of this kind's limit)",
		secs(childrenAt), rate(*n, childrenAt), 100*childRatio, 100*b.crLimit[k.name].Seconds()/childrenAt.Seconds()), ">= 50%", verdict(childRatio >= 0.5))
	b.add(k.name+": share of the machine's cores, to all children created", cpuShares(cpu0, cpuChildren, childrenAt, runtime.NumCPU()), "-", "")
	b.add(fmt.Sprintf("%s: all %d Ready", k.name, *n), fmt.Sprintf("%s (%.1fx the ConfigMap time); the manager quiet %s later", secs(readyAt), readyAt.Seconds()/cmTime.Seconds(), secs(drained)), "-", "")
	if l := lags(children, crReady); len(l) > 0 {
		p99 := percentile(l, 0.99)
		b.add(k.name+": Ready after children available, as watched (p50 / p99 / max)",
			fmt.Sprintf("%s / %s / %s (%d CRs)", secs(percentile(l, 0.5)), secs(p99), secs(l[len(l)-1]), len(l)), "<= 1s p99", verdict(p99 <= time.Second))
	} else {
		b.add(k.name+": Ready after children available", "not observed", "<= 1s p99", "MISSED")
	}
	b.add(k.name+": share of the machine's cores, to convergence", cpuShares(cpu0, cpu1, readyAt, runtime.NumCPU()), "-", "")

	conv, total := m1.sub(m0), m2.sub(m0)
	b.add(k.name+": reconciles, to convergence (means)", timing(conv, k.name, *n), "-", "")
	// Each scrape of the manager's secure metrics endpoint makes it POST a
	// TokenReview and a SubjectAccessReview when its caches of them have
	// expired (after 1 and 5 minutes): writes of the benchmark's making,
	// not the controllers'. Nobody else on the local cluster makes them.
	// The manager is scraped before the API server, so that the API server
	// has counted the reviews a manager scrape caused.
	perCR := func(d, api samples) float64 { return mgr.writes(d, api) / float64(*n) }
	target, tv := "-", ""
	if k.name == "memcached" {
		target, tv = "< 4.8", verdict(perCR(total, a2.sub(a0)) < 4.8)
	}
	b.add(k.name+": manager writes per CR, to convergence / +idle", fmt.Sprintf("%.2f / %.2f", perCR(conv, a1.sub(a0)), perCR(total, a2.sub(a0))), target, tv)
	b.add(k.name+": API server writes per CR by resource, to +idle (all clients but the benchmark)", formatWrites(k.writesOf(a2.sub(a0)), *n), "-", "")

	// Only the manager changes a CR after the benchmark created it, and
	// every change is one Modified event on the watch: a successful write
	// without one changed nothing.
	crWrites := a2.sub(a0).sum("apiserver_request_total", func(s string) bool {
		v := label(s, "verb")
		return label(s, "resource") == k.resource && (v == "PATCH" || v == "PUT") && strings.HasPrefix(label(s, "code"), "2")
	})
	noop := crWrites - float64(crReady.modified.Load())
	const noopMeasure = ": CR writes that changed nothing (successful PATCH/PUT without a watch event)"
	switch {
	case crReady.broken():
		t.Errorf("%s: the benchmark's watch of the CRs ended (410 Gone): no-op writes not measured", k.name)
		b.add(k.name+noopMeasure, "not measured: the watch ended", "0", "MISSED")
	default:
		b.add(k.name+noopMeasure, fmt.Sprintf("%.0f of %.0f", noop, crWrites), "0", verdict(noop <= 0))
		if noop > 0 {
			b.failed = append(b.failed, fmt.Sprintf("%s: %.0f of %.0f CR writes changed nothing: see the status writes in %s", k.name, noop, crWrites, mgr.Log.Name()))
		}
	}

	idleReviews := reviews(a2.sub(a1))
	steady := mgr.writes(m2.sub(m1), a2.sub(a1))
	b.add(fmt.Sprintf("%s: manager writes in %s idle", k.name, *idle), fmt.Sprintf("%.0f (and %.0f reviews of the benchmark's metrics token)", steady, idleReviews), "0", verdict(steady == 0))
	if steady != 0 {
		idleW := apiWrites(a2.sub(a1), k.ownResources)
		byCode := map[string]float64{}
		for series, v := range m2.sub(m1) {
			if metricName(series) == "rest_client_requests_total" && isWrite(label(series, "method")) {
				byCode[label(series, "method")+" "+label(series, "code")] += v
			}
		}
		b.failed = append(b.failed, fmt.Sprintf("%s: %.0f manager writes in the idle window (manager: %s; API server: %s)", k.name, steady, formatWrites(byCode, 1), formatWrites(idleW, 1)))
	}
}

// awaitNoCRs waits until no CR of kind k is left anywhere, such as one a
// test before the benchmark left in a terminating namespace. The running
// manager finalizes it, and its writes would otherwise count as this run's
// (the API server's counts have no namespace) without showing on the
// watch of the run's namespace.
func (b *bench) awaitNoCRs(k kind) {
	b.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		b.must(b.c.List(b.ctx, list))
		if len(list.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			first := list.Items[0]
			b.t.Fatalf("%d %s CRs of an earlier run or test are still there (%s/%s among them): delete them first", len(list.Items), k.name, first.Namespace, first.Name)
		}
		time.Sleep(time.Second)
	}
}

// watchKind opens the benchmark's two watches of a run of kind k in ns:
// its children, matched once available and keyed by their CR, and its
// CRs, matched once Ready.
func (b *bench) watchKind(ctx context.Context, k kind, ns string) (children, crReady *firstSeen) {
	b.t.Helper()
	children = b.watchFirst(ctx, k.childResource(), ns, k.childAvailable, controllerUID)
	crReady = b.watchFirst(ctx, k.gvk.GroupVersion().WithResource(k.resource), ns, func(u *unstructured.Unstructured) bool {
		_, ok := conditionTime(u, "Ready")
		return ok
	}, ownUID)
	return children, crReady
}

// convergeDeadline is how long after began count CRs may take to converge.
func convergeDeadline(began time.Time, count int) time.Time {
	return began.Add(5*time.Minute + time.Duration(count)*300*time.Millisecond)
}

// createCRs creates N CRs of kind k in ns, as fast as the client allows.
func (b *bench) createCRs(k kind, ns string) error { return b.createRange(k, ns, 0, *n) }

// createRange creates the CRs of kind k numbered from to to-1 in ns, as
// fast as the client allows.
func (b *bench) createRange(k kind, ns string, from, to int) error {
	return parallel(to-from, func(i int) error {
		return b.c.Create(b.ctx, k.object(ns, crName(k, from+i)))
	})
}

// crName is the name of CR number i of kind k.
func crName(k kind, i int) string { return fmt.Sprintf("%s-%d", k.name, i) }

// deleteCRs deletes every CR of kind k in namespaces and waits up to a
// minute until they are gone, which they are at once when no finalizer
// holds them.
func (b *bench) deleteCRs(k kind, namespaces ...string) {
	b.t.Helper()
	for _, ns := range namespaces {
		b.must(b.c.DeleteAllOf(b.ctx, k.object(ns, ""), client.InNamespace(ns)))
	}
	b.must(waitFor(time.Minute, func() bool {
		left := 0
		for _, ns := range namespaces {
			left += len(b.listCRs(k, ns).Items)
		}
		return left == 0
	}))
}

// reviews counts the TokenReviews and SubjectAccessReviews the API server
// was sent.
func reviews(d samples) float64 {
	return d.sum("apiserver_request_total", func(s string) bool {
		r := label(s, "resource")
		return label(s, "verb") == "POST" && (r == "tokenreviews" || r == "subjectaccessreviews")
	})
}

// timing explains convergence from the manager's own histograms: how often
// each CR was reconciled, how long an item waited in the queue and how long
// a reconcile took.
func timing(d samples, controller string, n int) string {
	mean := func(name string, keep func(string) bool) time.Duration {
		c := d.sum(name+"_count", keep)
		if c == 0 {
			return 0
		}
		return time.Duration(d.sum(name+"_sum", keep) / c * float64(time.Second))
	}
	ofController := func(s string) bool { return label(s, "controller") == controller || label(s, "name") == controller }
	reconciles := d.sum("controller_runtime_reconcile_total", ofController)
	result := func(r string) float64 {
		return d.sum("controller_runtime_reconcile_total", func(s string) bool { return ofController(s) && label(s, "result") == r })
	}
	return fmt.Sprintf("%.1f reconciles per CR (%.0f errors, %.0f requeues); queue wait %s, reconcile %s",
		reconciles/float64(n), result("error"), result("requeue"), ms(mean("workqueue_queue_duration_seconds", ofController)),
		ms(mean("controller_runtime_reconcile_time_seconds", ofController)))
}

// drain waits until the manager has made no write for 2 s while it had
// nothing to reconcile, at most drainLimit, and returns how long after its
// call the last write, or the last busy scrape, was seen. Writes alone
// were not enough: while every worker waited on slow reads (a WhaleSay's
// pod log through a simulated node), no write came for over 2 s, and the
// writes that followed fell into the idle window.
func (b *bench) drain(m *managerProcess) time.Duration {
	began := time.Now()
	last, lastAt := writesByManager(b.scrape(m)), began
	for time.Since(lastAt) < 2*time.Second {
		if time.Since(began) > drainLimit {
			b.t.Logf("the operator still worked %s after it was to be done: the idle window starts anyway", drainLimit)
			break
		}
		time.Sleep(drainPoll)
		s := b.scrape(m)
		if w := writesByManager(s); w != last || busy(s) {
			last, lastAt = w, time.Now()
		}
	}
	return lastAt.Sub(began)
}

// drainPoll is how often drain scrapes the operator. Each scrape costs the
// operator CPU that the benchmark charges to it, more for ours (a series
// per custom resource, behind authentication) than for the tutorial's:
// scraped ten times a second, ours spent much of its measured CPU
// serving them (test/bench/profiles.md). A real Prometheus scrapes every
// every few tens of seconds; once a second still tells a quiet 2 s apart.
const drainPoll = time.Second

// drainLimit bounds drain. It was a minute, and a full run's WhaleSays,
// whose statuses wait for their pods' logs, which a simulated node serves
// slowly, were still being written a minute after the last Job completed:
// their writes fell into the idle window.
const drainLimit = 5 * time.Minute

// busy says whether a manager's metrics show reconciles running or
// queued: controller-runtime's active workers and queue depth.
func busy(s samples) bool {
	return s.sum("controller_runtime_active_workers", nil) > 0 || s.sum("workqueue_depth", nil) > 0
}

func (b *bench) listCRs(k kind, ns string) *unstructured.UnstructuredList {
	b.t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	b.must(b.c.List(b.ctx, list, client.InNamespace(ns)))
	return list
}

func (b *bench) countReady(k kind, ns string) int {
	ready := 0
	for _, u := range b.listCRs(k, ns).Items {
		if _, ok := conditionTime(&u, "Ready"); ok {
			ready++
		}
	}
	return ready
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[nearestRank(len(sorted), p)]
}

// nearestRank is the index of the p-th percentile of n sorted values.
func nearestRank(n int, p float64) int {
	return max(int(math.Ceil(p*float64(n)))-1, 0)
}

// settle waits until the manager has reconciled at least want objects and
// has been quiet for 5 s, then returns its peak RSS in MiB.
func (b *bench) settle(m *managerProcess, want int) float64 {
	b.t.Helper()
	last, since := -1.0, time.Now()
	deadline := time.Now().Add(5*time.Minute + time.Duration(want)*50*time.Millisecond)
	for time.Now().Before(deadline) {
		r := b.scrape(m).sum("controller_runtime_reconcile_total", nil)
		if r != last {
			last, since = r, time.Now()
		} else if r >= float64(want) && time.Since(since) >= 5*time.Second {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if last < float64(want) {
		b.t.Errorf("the manager reconciled %.0f of %d objects after its restart", last, want)
	}
	hwm, err := m.procStatus("VmHWM")
	b.must(err)
	return hwm
}

// foreign creates Deployments with one Pod each that the manager does not
// own, and waits for their Pods to exist.
func (b *bench) foreign(count int) {
	ns := b.namespace("bench-foreign")
	began := time.Now()
	b.must(parallel(count, func(i int) error {
		labels := map[string]string{"app": fmt.Sprintf("foreign-%d", i)}
		return b.c.Create(b.ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("foreign-%d", i), Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "app", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}},
					}}},
				},
			},
		})
	}))
	// What counts for the caches is that the objects exist. kube-controller-
	// manager creates the ReplicaSets and Pods at its default 20 requests a
	// second per controller, so 5,000 take about eight minutes; waiting for
	// them to run too would take longer still and add nothing.
	created := 0
	deadline := time.Now().Add(5*time.Minute + time.Duration(count)*150*time.Millisecond)
	for time.Now().Before(deadline) {
		pods := &metav1.PartialObjectMetadataList{}
		pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		b.must(b.c.List(b.ctx, pods, client.InNamespace(ns)))
		if created = len(pods.Items); created >= count {
			break
		}
		time.Sleep(5 * time.Second)
	}
	b.t.Logf("%d foreign Deployments, %d Pods after %s", count, created, time.Since(began).Round(time.Second))
	if created < count {
		b.t.Errorf("only %d of %d foreign Pods created", created, count)
	}
}

// report writes the results file: a header, then each table in the order
// the benchmark ran it. It prints the tables on stdout too, for the log.
func (b *bench) report(nForeign int) {
	var sb strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&sb, "# Scale benchmark results\n\n")
	fmt.Fprintf(&sb, "- Date: %s\n- Machine: %s, %d cores (%s/%s)\n- N: %d CRs per kind; idle window %s",
		time.Now().UTC().Format(time.RFC3339), host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, *n, *idle)
	if *scalePart && *memory {
		fmt.Fprintf(&sb, "; %d foreign Deployments", nForeign)
	}
	fmt.Fprintf(&sb, "\n- Cluster: make dev-cluster (kwok, real etcd, kube-apiserver, kube-controller-manager, kube-scheduler)\n")
	fmt.Fprintf(&sb, "- Command: `make bench N=%d IDLE=%s`; flags: %s\n", *n, *idle, setFlags())
	for _, s := range b.sections {
		fmt.Fprintf(&sb, "\n## %s\n\n", s.title)
		if s.about != "" {
			fmt.Fprintf(&sb, "%s\n\n", s.about)
		}
		fmt.Fprintf(&sb, "| %s |\n|%s\n", strings.Join(s.header, " | "), strings.Repeat("---|", len(s.header)))
		for _, r := range s.rows {
			fmt.Fprintf(&sb, "| %s |\n", strings.Join(r, " | "))
		}
	}
	if err := os.WriteFile(*out, []byte(sb.String()), 0o644); err != nil {
		b.t.Error(err)
	}
	// The same tables on stdout, for the log: a lost copy there is no
	// failure of the benchmark, whose tables are in *out.
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	for _, s := range b.sections {
		// The title has no tab: it ends the table before it, and its
		// width does not widen the first column of its own.
		_, _ = fmt.Fprintf(tw, "\n%s\n%s\t\n", strings.ToUpper(s.title), strings.ToUpper(strings.Join(s.header, "\t")))
		for _, r := range s.rows {
			_, _ = fmt.Fprintf(tw, "%s\t\n", strings.Join(r, "\t"))
		}
	}
	_ = tw.Flush()
}

// setFlags lists the benchmark's flags the command line set, so that the
// results say how they were made.
func setFlags() string {
	var set []string
	flag.Visit(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			set = append(set, fmt.Sprintf("-%s=%s", f.Name, f.Value))
		}
	})
	if len(set) == 0 {
		return "none"
	}
	return "`" + strings.Join(set, " ") + "`"
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
func secs(d time.Duration) string         { return fmt.Sprintf("%.2f s", d.Seconds()) }
func ms(d time.Duration) string           { return fmt.Sprintf("%d ms", d.Milliseconds()) }
func mib(v float64) string                { return fmt.Sprintf("%.1f MiB", v) }

// running lists the local processes running the binary bin.
func running(bin string) []string {
	self, _ := filepath.EvalSymlinks(bin)
	var pids []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe")); err == nil && strings.TrimSuffix(exe, " (deleted)") == self {
			pids = append(pids, d.Name())
		}
	}
	return pids
}
