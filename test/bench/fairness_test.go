//go:build bench

package bench

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/test/framework/apf"
	"github.com/multi-operator/multi-operator/test/framework/managerproc"
)

// The fairness scenario (issue "Converge as fast as the tutorial's
// operator and stay fair to other clients"): on an API server whose
// concurrency seats are few, so that API Priority and Fairness decides
// who is served, an ordinary user's creates are timed alone and while our
// manager, at its default flags (no client-side limit), converges a
// tenant's burst of Memcacheds; once with the manager's requests in the
// built-in workload-low level, as any ServiceAccount's are, once with
// config/components/api-priority applied.
//
// The local cluster's API server keeps its defaults, since the other
// scenarios measure the cluster as it is. A second kube-apiserver, started
// from the first one's command line on the same etcd, with few seats, is
// the front door of the manager and the user: kube-controller-manager and
// kwok stay on the first, so the children still become available.
var (
	fairness         = flag.Bool("fairness", true, "run the fairness scenario: a user's creates while a burst of Memcacheds converges, through an API server with few concurrency seats, with and without the api-priority component")
	fairnessCRs      = flag.String("fairness-crs", "", "comma-separated sizes of the tenant's burst of Memcacheds; empty means n and 4*n")
	fairnessInflight = flag.Int("fairness-inflight", 4, "the front door's --max-requests-inflight (with --max-mutating-requests-inflight, its seats under Priority and Fairness)")
	fairnessMutating = flag.Int("fairness-mutating-inflight", 2, "the front door's --max-mutating-requests-inflight")
	fairnessInterval = flag.Duration("fairness-interval", 25*time.Millisecond, "the timed clients start a create at most this often")
)

// targetFairRatio bounds the user's creates during a burst against alone,
// with the component applied.
const targetFairRatio = 1.3

// The identities of the scenario. The manager's ServiceAccount is the one
// config/components/api-priority/priority.yaml names before an overlay
// renames it, so the component's file applies as it is.
const (
	fairManagerNamespace = "system"
	fairManagerAccount   = "controller-manager"
	fairUser             = "bench-tenant-user"
	fairUserNamespace    = "bench-fairness-user"
	fairOtherAccount     = "other-controller"
	fairTenantNamespace  = "bench-fairness-tenant"
	fairBindingName      = "bench-fairness-manager"
)

// frontDoor is the second kube-apiserver of the fairness scenario.
type frontDoor struct {
	cmd  *exec.Cmd
	log  *os.File
	cfg  *rest.Config // the benchmark's admin credentials, to the front door
	once sync.Once
}

// frontDoorStopGrace is how long the front door may take to shut down
// before it is killed.
const frontDoorStopGrace = 30 * time.Second

// stop ends the front door and waits for it, once: the scenario stops it
// when it is done, and the test's cleanup again if the scenario failed.
func (f *frontDoor) stop() {
	f.once.Do(func() {
		_ = f.cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan struct{})
		go func() { _ = f.cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(frontDoorStopGrace):
			_ = f.cmd.Process.Kill()
			<-exited
		}
		_ = f.log.Close()
	})
}

// apiServerCommand returns the command line of the local kube-apiserver
// process that listens on port.
func apiServerCommand(port string) ([]string, error) {
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) == "kube-apiserver" && slices.Contains(args, "--secure-port="+port) {
			return args, nil
		}
	}
	return nil, fmt.Errorf("no kube-apiserver process with --secure-port=%s on this machine", port)
}

// frontDoorArgs are the first API server's arguments for the front door:
// its own port, few seats, no share in the kubernetes Service's endpoints,
// which the first one keeps, and no audit log, which is the first one's
// file.
func frontDoorArgs(args []string, port string, inflight, mutating int) []string {
	out := slices.DeleteFunc(slices.Clone(args[1:]), func(a string) bool {
		for _, flag := range []string{"--secure-port=", "--max-requests-inflight=", "--max-mutating-requests-inflight=", "--endpoint-reconciler-type=", "--audit-log-"} {
			if strings.HasPrefix(a, flag) {
				return true
			}
		}
		return false
	})
	return append(out, "--secure-port="+port,
		fmt.Sprintf("--max-requests-inflight=%d", inflight),
		fmt.Sprintf("--max-mutating-requests-inflight=%d", mutating),
		"--endpoint-reconciler-type=none")
}

// startFrontDoor starts the front door and waits until it is ready.
func (b *bench) startFrontDoor() *frontDoor {
	b.t.Helper()
	server, err := url.Parse(b.cfg.Host)
	b.must(err)
	args, err := apiServerCommand(server.Port())
	b.must(err)
	addr, err := managerproc.FreePort()
	b.must(err)
	_, port, _ := strings.Cut(addr, ":")
	log, err := os.CreateTemp("", "bench-front-door-*.log")
	b.must(err)
	cmd := exec.Command(args[0], frontDoorArgs(args, port, *fairnessInflight, *fairnessMutating)...) //nolint:gosec // the local cluster's own binary
	cmd.Stdout, cmd.Stderr = log, log
	// Killed with the benchmark, so that a go test timeout leaves no
	// API server behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	b.must(cmd.Start())
	f := &frontDoor{cmd: cmd, log: log, cfg: rest.CopyConfig(b.cfg)}
	b.t.Cleanup(f.stop)
	f.cfg.Host = "https://" + net.JoinHostPort(server.Hostname(), port)
	cs := kubernetes.NewForConfigOrDie(f.cfg)
	if err := waitFor(2*time.Minute, func() bool {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(b.ctx)
		return err == nil
	}); err != nil {
		b.t.Fatalf("the front door did not become ready: see %s", log.Name())
	}
	b.t.Logf("front door: kube-apiserver pid %d on %s, --max-requests-inflight=%d --max-mutating-requests-inflight=%d, log %s",
		cmd.Process.Pid, f.cfg.Host, *fairnessInflight, *fairnessMutating, log.Name())
	return f
}

// managerKubeconfig creates the manager's ServiceAccount, bound to
// cluster-admin (the scenario is about its priority, not its rights), and
// writes a kubeconfig with its token for server.
func (b *bench) managerKubeconfig(server *rest.Config) string {
	b.t.Helper()
	b.namespace(fairManagerNamespace)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: fairBindingName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: fairManagerAccount, Namespace: fairManagerNamespace}},
	}
	if err := b.c.Create(b.ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		b.must(err)
	}
	b.t.Cleanup(func() { _ = b.c.Delete(context.Background(), binding) })
	return b.serviceAccountKubeconfig(server, fairManagerNamespace, fairManagerAccount)
}

// serviceAccountKubeconfig creates the ServiceAccount namespace/name and
// writes a kubeconfig with a token of it for server.
func (b *bench) serviceAccountKubeconfig(server *rest.Config, namespace, name string) string {
	b.t.Helper()
	token, err := serviceAccountToken(b.ctx, b.cs, namespace, name)
	b.must(err)
	ca := server.CAData
	if len(ca) == 0 {
		ca, err = os.ReadFile(server.CAFile)
		b.must(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["front-door"] = &clientcmdapi.Cluster{Server: server.Host, CertificateAuthorityData: ca}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "front-door", AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(b.t.TempDir(), namespace+"-"+name+".kubeconfig")
	b.must(clientcmd.WriteToFile(*kc, path))
	return path
}

// fairClient is a client the fairness scenario times, creating
// ConfigMaps in fairUserNamespace one after the other.
type fairClient struct {
	// who says who the client is, for the table.
	who string
	// level is the priority level the API server classifies it in.
	level string
	// target says whether targetFairRatio bounds it: the component moves
	// the manager out of the level this client shares with it.
	target bool
	c      client.Client
}

// fairClients are the timed clients, who may edit fairUserNamespace
// through server: another controller's ServiceAccount, which shares
// workload-low with the manager until the component moves the manager to
// a level of its own, and so is the client the component protects; and
// an ordinary user, the admin impersonating fairUser, whom the API server
// classifies in global-default.
func (b *bench) fairClients(server *rest.Config) []fairClient {
	b.t.Helper()
	b.namespace(fairUserNamespace)
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-user-edit", Namespace: fairUserNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: fairUser},
			{Kind: rbacv1.ServiceAccountKind, Name: fairOtherAccount, Namespace: fairUserNamespace},
		},
	}
	if err := b.c.Create(b.ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		b.must(err)
	}
	other, err := clientcmd.BuildConfigFromFlags("", b.serviceAccountKubeconfig(server, fairUserNamespace, fairOtherAccount))
	b.must(err)
	// Neither client limits itself: only the server's fairness is timed.
	other.QPS, other.Burst = server.QPS, server.Burst
	user := rest.CopyConfig(server)
	user.Impersonate = rest.ImpersonationConfig{UserName: fairUser}
	path := "/api/v1/namespaces/" + fairUserNamespace + "/configmaps"
	var clients []fairClient
	for _, c := range []struct {
		who    string
		cfg    *rest.Config
		target bool
	}{
		{"another controller (ServiceAccount " + fairUserNamespace + "/" + fairOtherAccount + ")", other, true},
		{"a user (" + fairUser + ")", user, false},
	} {
		cl, err := client.New(c.cfg, client.Options{Scheme: b.c.Scheme()})
		b.must(err)
		// The first request finds the ConfigMaps' resource by discovery,
		// which no later create repeats: done here, before any timing.
		b.must(cl.List(b.ctx, &corev1.ConfigMapList{}, client.InNamespace(fairUserNamespace), client.Limit(1)))
		clients = append(clients, fairClient{who: c.who, level: b.priorityLevel(c.cfg, path), target: c.target, c: cl})
	}
	return clients
}

// priorityLevel is the name of the priority level that classified a GET
// of apiPath by cfg's user.
func (b *bench) priorityLevel(cfg *rest.Config, apiPath string) string {
	b.t.Helper()
	_, uid, err := apf.Classify(b.ctx, cfg, apiPath)
	b.must(err)
	levels := &flowcontrolv1.PriorityLevelConfigurationList{}
	b.must(b.c.List(b.ctx, levels))
	for _, l := range levels.Items {
		if string(l.UID) == uid {
			return l.Name
		}
	}
	return "none (UID " + uid + ")"
}

// awaitPriorityLevel waits until the API server classifies cfg's user's
// GET of apiPath in level: it reads new FlowSchemas a moment after they
// are stored.
func (b *bench) awaitPriorityLevel(cfg *rest.Config, apiPath, level string) {
	b.t.Helper()
	var got string
	if waitFor(time.Minute, func() bool {
		got = b.priorityLevel(cfg, apiPath)
		return got == level
	}) != nil {
		b.t.Fatalf("the API server classifies %s in %s, not %s", apiPath, got, level)
	}
}

// created is one timed create: when it began and how long it took.
type created struct {
	at   time.Time
	took time.Duration
}

// createStats sums up a client's creates.
type createStats struct {
	count     int
	mean, p99 time.Duration
}

// statsOf sums up the creates that began in [from, to).
func statsOf(cs []created, from, to time.Time) createStats {
	var took []time.Duration
	var sum time.Duration
	for _, c := range cs {
		if !c.at.Before(from) && c.at.Before(to) {
			took = append(took, c.took)
			sum += c.took
		}
	}
	if len(took) == 0 {
		return createStats{}
	}
	slices.Sort(took)
	return createStats{count: len(took), mean: sum / time.Duration(len(took)), p99: percentile(took, 0.99)}
}

// String is the mean and p99 of the creates, in milliseconds.
func (s createStats) String() string {
	return fmt.Sprintf("mean %.1f ms, p99 %.1f ms", float64(s.mean.Microseconds())/1000, float64(s.p99.Microseconds())/1000)
}

// fairTimes is one timed client's creates in one burst.
type fairTimes struct {
	// alone is N creates with no manager running; burst the creates from
	// the manager's start until every child was available; writing those
	// of them until the manager created its last child Deployment.
	alone, burst, writing createStats
}

// ratio is how much longer the client's creates took during the burst.
func (t fairTimes) ratio() float64 { return t.burst.mean.Seconds() / t.alone.mean.Seconds() }

// writingRatio is how much longer they took while the manager created
// its children.
func (t fairTimes) writingRatio() float64 {
	return t.writing.mean.Seconds() / t.alone.mean.Seconds()
}

// fairRun is one burst of the fairness scenario.
type fairRun struct {
	crs int
	// times are the timed clients' creates, in the order of the clients.
	times []fairTimes
	// converged is from the manager's start until every child was
	// available; writing until its last child Deployment was created.
	converged, writing time.Duration
	// level is where the API server classified the manager's requests.
	level string
	// waits is the mean time requests waited in the front door's queues,
	// by priority level, over the burst.
	waits string
}

// fairnessScenario runs the scenario for each burst size and adds its table.
func (b *bench) fairnessScenario(k kind) {
	sizes := []int{*n, 4 * *n}
	if *fairnessCRs != "" {
		sizes = nil
		for _, s := range strings.Split(*fairnessCRs, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(s))
			b.must(err)
			sizes = append(sizes, v)
		}
	}
	b.cleanup()
	b.install([]kind{k}, k.crdDir())
	b.authorize()
	fd := b.startFrontDoor()
	// The scale part runs on the first API server alone.
	defer fd.stop()
	managerConfig := b.managerKubeconfig(fd.cfg)
	mgrCfg, err := clientcmd.BuildConfigFromFlags("", managerConfig)
	b.must(err)
	clients := b.fairClients(fd.cfg)
	component := filepath.Join(b.configDir("components"), "api-priority", "priority.yaml")
	removeComponent := func() { b.kubectl("delete", "--ignore-not-found", "-f", component) }
	tenantPath := "/apis/" + k.gvk.Group + "/" + k.gvk.Version + "/namespaces/" + fairTenantNamespace + "/" + k.resource
	var who []string
	for _, c := range clients {
		who = append(who, fmt.Sprintf("%s, classified in %s", c.who, c.level))
	}

	b.begin("Fairness: other clients' creates during a burst, through an API server with few seats", fmt.Sprintf(
		"A second kube-apiserver on the cluster's etcd, with --max-requests-inflight=%d and --max-mutating-requests-inflight=%d, so that API Priority and Fairness decides who is served; "+
			"kube-controller-manager and kwok stay on the first. Two clients create ConfigMaps one after the other through it, side by side, each starting one every %s at most: %s. "+
			"Each creates %d alone; then a tenant's burst of Memcacheds is created, the clients start creating, our manager (`%s`, default flags: no client-side limit) starts over the burst as its own ServiceAccount through the same server, "+
			"and the clients create until every child is available. The ratio is a client's mean create over the burst against alone; the same while the manager creates its children is shown beside it. "+
			"Once with no FlowSchema of ours (the manager in workload-low, beside any other ServiceAccount), once with config/components/api-priority/priority.yaml applied, which moves the manager to a level of its own: the target is the other controller's, whose level it shared. "+
			"Queue waits are the front door's apiserver_flowcontrol_request_wait_duration_seconds, by priority level, over the burst.",
		*fairnessInflight, *fairnessMutating, *fairnessInterval, strings.Join(who, "; "), *n, strings.Join(aloneArgs(k), " ")),
		"Measure", "Value", "Target", "")

	for _, crs := range sizes {
		var without, with fairRun
		for _, applied := range []bool{false, true} {
			if applied {
				b.kubectl("apply", "--server-side", "-f", component)
				b.t.Cleanup(removeComponent)
				b.awaitPriorityLevel(mgrCfg, tenantPath, "controller-manager")
			} else {
				removeComponent()
				b.awaitPriorityLevel(mgrCfg, tenantPath, "workload-low")
			}
			r := b.fairBurst(k, crs, managerConfig, clients, fd)
			r.level = b.priorityLevel(mgrCfg, tenantPath)
			if applied {
				with = r
			} else {
				without = r
			}
		}
		removeComponent()
		for _, r := range []fairRun{without, with} {
			label := "without our FlowSchema"
			if r.level == "controller-manager" {
				label = "with config/components/api-priority"
			}
			for i, c := range clients {
				t := r.times[i]
				target, mark := "-", ""
				if c.target && r.level == "controller-manager" {
					target = fmt.Sprintf("<= %.1fx, below the run without (%.2fx)", targetFairRatio, without.times[i].ratio())
					mark = verdict(t.ratio() <= targetFairRatio && t.ratio() < without.times[i].ratio())
				}
				b.add(fmt.Sprintf("Creates by %s while %d Memcacheds converge, %s (manager in %s)", c.who, crs, label, r.level),
					fmt.Sprintf("%.2fx (%.2fx while the manager creates): %s over %d creates, against %s alone", t.ratio(), t.writingRatio(), t.burst, t.burst.count, t.alone),
					target, mark)
			}
			b.add(fmt.Sprintf("%d Memcacheds, %s: from the manager's start, last child created, all children available", crs, label),
				secs(r.writing)+", "+secs(r.converged), "-", "")
			b.add(fmt.Sprintf("%d Memcacheds, %s: mean queue wait by priority level over the burst", crs, label), r.waits, "-", "")
		}
	}
}

// fairBurst times the clients' creates alone, then creates crs Memcacheds
// in the tenant's namespace (as the admin, through the first API server),
// has the clients create ConfigMaps one after the other, starts the
// manager over the burst through the front door, and stops the clients
// when every child is available. Then it cleans up.
func (b *bench) fairBurst(k kind, crs int, managerConfig string, clients []fairClient, fd *frontDoor) fairRun {
	b.t.Helper()
	r := fairRun{crs: crs, times: make([]fairTimes, len(clients))}
	alone := b.clientsCreate(clients, "alone", *n, nil)
	for i := range clients {
		r.times[i].alone = statsOf(alone[i], time.Time{}, time.Now())
	}
	b.must(b.c.DeleteAllOf(b.ctx, &corev1.ConfigMap{}, client.InNamespace(fairUserNamespace)))
	b.awaitNoCRs(k)
	b.namespace(fairTenantNamespace)
	b.must(parallel(crs, func(i int) error { return b.c.Create(b.ctx, k.object(fairTenantNamespace, crName(k, i))) }))
	ctx, stop := context.WithCancel(b.ctx)
	defer stop()
	children, _ := b.watchKind(ctx, k, fairTenantNamespace)
	before := b.scrapeFlowControl(fd)
	converged := make(chan struct{})
	during := make(chan [][]created, 1)
	go func() { during <- b.clientsCreate(clients, "burst", 0, converged) }()
	began := time.Now()
	m := b.start(fmt.Sprintf("fairness-%d", crs), slices.Concat([]string{"--kubeconfig", managerConfig}, aloneArgs(k))...)
	last, err := awaitMatched(children, crs, convergeDeadline(began, crs))
	close(converged)
	creates := <-during
	r.waits = meanWaits(b.scrapeFlowControl(fd).sub(before))
	if err != nil {
		b.t.Errorf("fairness, %d Memcacheds: %v: see %s", crs, err, m.Log.Name())
		last = time.Now()
	}
	r.converged = last.Sub(began)
	wrote := b.lastChildCreated(fairTenantNamespace)
	r.writing = wrote.Sub(began)
	for i := range clients {
		r.times[i].burst = statsOf(creates[i], began, last)
		r.times[i].writing = statsOf(creates[i], began, wrote)
	}
	m.Stop()
	b.must(b.c.DeleteAllOf(b.ctx, &corev1.ConfigMap{}, client.InNamespace(fairUserNamespace)))
	b.deleteNamespaces(fairTenantNamespace)
	return r
}

// lastChildCreated is when the last Deployment in namespace was created,
// rounded up to the second the API server stores.
func (b *bench) lastChildCreated(namespace string) time.Time {
	b.t.Helper()
	deps := &appsv1.DeploymentList{}
	b.must(b.c.List(b.ctx, deps, client.InNamespace(namespace)))
	var last time.Time
	for _, d := range deps.Items {
		if t := d.CreationTimestamp.Add(time.Second); t.After(last) {
			last = t
		}
	}
	return last
}

// clientsCreate has every client create ConfigMaps one after the other,
// side by side, each at least one and until it made max (when max > 0)
// or stop is closed, and returns each client's creates.
func (b *bench) clientsCreate(clients []fairClient, prefix string, max int, stop <-chan struct{}) [][]created {
	b.t.Helper()
	out := make([][]created, len(clients))
	b.must(parallel(len(clients), func(i int) error {
		var err error
		out[i], err = timedCreates(b.ctx, clients[i].c, fmt.Sprintf("%s-%d", prefix, i), max, stop)
		return err
	}))
	return out
}

// timedCreates has c create ConfigMaps prefix-0, prefix-1, ... one after
// the other, starting one every -fairness-interval at most, at least one,
// until it made max (when max > 0) or stop is closed, and times each. The
// pace keeps the clients from being a load of their own: what is timed is
// how the server serves a steady client while the manager converges.
func timedCreates(ctx context.Context, c client.Client, prefix string, max int, stop <-chan struct{}) ([]created, error) {
	var out []created
	for i := 0; ; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Namespace: fairUserNamespace},
			Data: map[string]string{"key": "value"}}
		at := time.Now()
		if err := c.Create(ctx, cm); err != nil {
			return nil, err
		}
		out = append(out, created{at: at, took: time.Since(at)})
		if max > 0 && len(out) == max {
			return out, nil
		}
		select {
		case <-stop:
			return out, nil
		case <-time.After(time.Until(at.Add(*fairnessInterval))):
		}
	}
}

// scrapeFlowControl reads the front door's queue waits by priority level.
func (b *bench) scrapeFlowControl(fd *frontDoor) samples {
	b.t.Helper()
	rc, err := kubernetes.NewForConfigOrDie(fd.cfg).CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(b.ctx)
	b.must(err)
	defer func() { _ = rc.Close() }() // a body only read from loses nothing on close
	s, err := parseMetrics(rc, func(n string) bool {
		return n == "apiserver_flowcontrol_request_wait_duration_seconds_sum" || n == "apiserver_flowcontrol_request_wait_duration_seconds_count"
	})
	b.must(err)
	return s
}

// meanWaits formats the mean queue wait of each priority level that served
// requests in d.
func meanWaits(d samples) string {
	levels := map[string]bool{}
	for series := range d {
		levels[label(series, "priority_level")] = true
	}
	var parts []string
	for _, level := range slices.Sorted(maps.Keys(levels)) {
		of := func(s string) bool { return label(s, "priority_level") == level }
		count := d.sum("apiserver_flowcontrol_request_wait_duration_seconds_count", of)
		if count == 0 {
			continue
		}
		mean := time.Duration(d.sum("apiserver_flowcontrol_request_wait_duration_seconds_sum", of) / count * float64(time.Second))
		parts = append(parts, fmt.Sprintf("%s %s (%.0f requests)", level, mean.Round(10*time.Microsecond), count))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
