//go:build bench

package bench

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
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
	fairnessInflight = flag.Int("fairness-inflight", 20, "the front door's --max-requests-inflight (with --max-mutating-requests-inflight, its seats under Priority and Fairness)")
	fairnessMutating = flag.Int("fairness-mutating-inflight", 10, "the front door's --max-mutating-requests-inflight")
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
	fairTenantNamespace  = "bench-fairness-tenant"
	fairBindingName      = "bench-fairness-manager"
)

// frontDoor is the second kube-apiserver of the fairness scenario.
type frontDoor struct {
	cmd *exec.Cmd
	log *os.File
	cfg *rest.Config // the benchmark's admin credentials, to the front door
}

// stop ends the front door and waits for it.
func (f *frontDoor) stop() {
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	_ = f.cmd.Wait()
	_ = f.log.Close()
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
// its own port, few seats, and no share in the kubernetes Service's
// endpoints, which the first one keeps.
func frontDoorArgs(args []string, port string, inflight, mutating int) []string {
	out := slices.DeleteFunc(slices.Clone(args[1:]), func(a string) bool {
		for _, flag := range []string{"--secure-port=", "--max-requests-inflight=", "--max-mutating-requests-inflight=", "--endpoint-reconciler-type="} {
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
	b.must(cmd.Start())
	f := &frontDoor{cmd: cmd, log: log, cfg: rest.CopyConfig(b.cfg)}
	b.t.Cleanup(f.stop)
	f.cfg.Host = "https://" + net127(port)
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

// net127 is port on loopback, where the local cluster's API server listens.
func net127(port string) string { return "127.0.0.1:" + port }

// managerKubeconfig creates the manager's ServiceAccount, bound to
// cluster-admin (the scenario is about its priority, not its rights), and
// writes a kubeconfig with its token for server.
func (b *bench) managerKubeconfig(server *rest.Config) string {
	b.t.Helper()
	b.namespace(fairManagerNamespace)
	_, err := b.cs.CoreV1().ServiceAccounts(fairManagerNamespace).Create(b.ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: fairManagerAccount}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.must(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: fairBindingName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: fairManagerAccount, Namespace: fairManagerNamespace}},
	}
	if err := b.c.Create(b.ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		b.must(err)
	}
	b.t.Cleanup(func() { _ = b.c.Delete(context.Background(), binding) })
	tr, err := b.cs.CoreV1().ServiceAccounts(fairManagerNamespace).CreateToken(b.ctx, fairManagerAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(6 * 3600))},
	}, metav1.CreateOptions{})
	b.must(err)
	ca := server.CAData
	if len(ca) == 0 {
		ca, err = os.ReadFile(server.CAFile)
		b.must(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["front-door"] = &clientcmdapi.Cluster{Server: server.Host, CertificateAuthorityData: ca}
	kc.AuthInfos["manager"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["manager"] = &clientcmdapi.Context{Cluster: "front-door", AuthInfo: "manager"}
	kc.CurrentContext = "manager"
	path := filepath.Join(b.t.TempDir(), "manager.kubeconfig")
	b.must(clientcmd.WriteToFile(*kc, path))
	return path
}

// userConfig is an ordinary user's configuration for server, who may edit
// fairUserNamespace: the admin impersonating fairUser, whom the API server
// classifies as the user (in the built-in global-default level), not as
// the admin (exempt).
func (b *bench) userConfig(server *rest.Config) *rest.Config {
	b.t.Helper()
	b.namespace(fairUserNamespace)
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-user-edit", Namespace: fairUserNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: fairUser}},
	}
	if err := b.c.Create(b.ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		b.must(err)
	}
	cfg := rest.CopyConfig(server)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: fairUser}
	return cfg
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

// fairRun is one burst of the fairness scenario.
type fairRun struct {
	crs int
	// alone is the user's N creates with no manager running; during is N
	// times the user's mean create while the manager converged the burst,
	// of userCreates in all.
	alone, during time.Duration
	userCreates   int
	// converged is from the manager's start until every child was
	// available.
	converged time.Duration
	// level is where the API server classified the manager's requests.
	level string
	// waits is the mean time requests waited in the front door's queues,
	// by priority level, over the burst.
	waits string
}

// ratio is how much longer the user's creates took during the burst.
func (r fairRun) ratio() float64 { return r.during.Seconds() / r.alone.Seconds() }

// fairnessScenario runs the scenario for each burst size and adds its table.
func (b *bench) fairnessScenario() {
	k := kinds[slices.IndexFunc(kinds, func(k kind) bool { return k.name == peerKind })]
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
	managerConfig := b.managerKubeconfig(fd.cfg)
	mgrCfg, err := clientcmd.BuildConfigFromFlags("", managerConfig)
	b.must(err)
	user := b.userConfig(fd.cfg)
	userClient, err := client.New(user, client.Options{Scheme: b.c.Scheme()})
	b.must(err)
	userLevel := b.priorityLevel(user, "/api/v1/namespaces/"+fairUserNamespace+"/configmaps")
	component := filepath.Join(b.configDir("components"), "api-priority", "priority.yaml")
	tenantPath := "/apis/" + k.gvk.Group + "/" + k.gvk.Version + "/namespaces/" + fairTenantNamespace + "/" + k.resource

	b.begin("Fairness: a user's creates during a burst, through an API server with few seats", fmt.Sprintf(
		"A second kube-apiserver on the cluster's etcd, with --max-requests-inflight=%d and --max-mutating-requests-inflight=%d, so that API Priority and Fairness decides who is served; "+
			"kube-controller-manager and kwok stay on the first. An ordinary user (%s, classified in %s) creates %d ConfigMaps one after the other through it, alone. "+
			"Then a tenant's burst of Memcacheds is created, our manager (`%s`, default flags: no client-side limit) starts over it as its own ServiceAccount through the same server, "+
			"and the user creates ConfigMaps one after the other until every child is available; its time for %d creates during the burst is %d times its mean create over the burst, "+
			"set against its creates alone just before. Once with no FlowSchema of ours (the manager in workload-low, as any ServiceAccount), once with config/components/api-priority/priority.yaml applied. "+
			"Queue waits are the front door's apiserver_flowcontrol_request_wait_duration_seconds, by priority level, over the burst.",
		*fairnessInflight, *fairnessMutating, fairUser, userLevel, *n, strings.Join(aloneArgs(k), " "), *n, *n),
		"Measure", "Value", "Target", "")

	for _, crs := range sizes {
		var without, with fairRun
		for _, applied := range []bool{false, true} {
			if applied {
				b.kubectl("apply", "--server-side", "-f", component)
				b.awaitPriorityLevel(mgrCfg, tenantPath, "controller-manager")
			} else {
				b.kubectl("delete", "--ignore-not-found", "-f", component)
				b.awaitPriorityLevel(mgrCfg, tenantPath, "workload-low")
			}
			r := b.fairBurst(k, crs, managerConfig, userClient, fd)
			r.level = b.priorityLevel(mgrCfg, tenantPath)
			if applied {
				with = r
			} else {
				without = r
			}
		}
		b.kubectl("delete", "--ignore-not-found", "-f", component)
		for _, r := range []fairRun{without, with} {
			label := "without our FlowSchema"
			target, mark := "-", ""
			if r == with {
				label = "with config/components/api-priority"
				target = fmt.Sprintf("<= %.1fx, below the run without (%.2fx)", targetFairRatio, without.ratio())
				mark = verdict(r.ratio() <= targetFairRatio && r.ratio() < without.ratio())
			}
			b.add(fmt.Sprintf("%d user creates while %d Memcacheds converge, %s (manager in %s)", *n, crs, label, r.level),
				fmt.Sprintf("%.2fx: %s against %s alone (%d creates over the burst)", r.ratio(), secs(r.during), secs(r.alone), r.userCreates), target, mark)
			b.add(fmt.Sprintf("%d Memcacheds: all children available from the manager's start, %s", crs, label), secs(r.converged), "-", "")
			b.add(fmt.Sprintf("%d Memcacheds: mean queue wait by priority level over the burst, %s", crs, label), r.waits, "-", "")
		}
	}
}

// fairBurst times the user's creates alone, then creates crs Memcacheds in
// the tenant's namespace (as the admin, through the first API server),
// starts the manager over them through the front door, and has the user
// create ConfigMaps one after the other until every child is available:
// the user's time for N creates during the burst is N times the mean
// create over the whole burst, not over its first seconds only. Then it
// cleans up.
func (b *bench) fairBurst(k kind, crs int, managerConfig string, user client.Client, fd *frontDoor) fairRun {
	b.t.Helper()
	r := fairRun{crs: crs}
	r.alone = b.userCreates(user)
	b.awaitNoCRs(k)
	b.namespace(fairTenantNamespace)
	b.must(parallel(crs, func(i int) error { return b.c.Create(b.ctx, k.object(fairTenantNamespace, crName(k, i))) }))
	ctx, stop := context.WithCancel(b.ctx)
	defer stop()
	children, _ := b.watchKind(ctx, k, fairTenantNamespace)
	began := time.Now()
	m := b.start(fmt.Sprintf("fairness-%d", crs), slices.Concat([]string{"--kubeconfig", managerConfig}, aloneArgs(k))...)
	before := b.scrapeFlowControl(fd)
	converged := make(chan struct{})
	during := make(chan userRun, 1)
	go func() { during <- userCreatesUntil(b.ctx, user, converged) }()
	last, err := awaitMatched(children, crs, convergeDeadline(began, crs))
	close(converged)
	u := <-during
	r.waits = meanWaits(b.scrapeFlowControl(fd).sub(before))
	if err != nil {
		b.t.Errorf("fairness, %d Memcacheds: %v: see %s", crs, err, m.Log.Name())
	} else {
		r.converged = last.Sub(began)
	}
	b.must(u.err)
	r.during = u.took / time.Duration(u.count) * time.Duration(*n)
	r.userCreates = u.count
	m.Stop()
	b.must(b.c.DeleteAllOf(b.ctx, &corev1.ConfigMap{}, client.InNamespace(fairUserNamespace)))
	b.deleteNamespaces(fairTenantNamespace)
	return r
}

// userRun is what the user's creates during a burst came to.
type userRun struct {
	count int
	took  time.Duration
	err   error
}

// userCreatesUntil creates the user's ConfigMaps one after the other until
// stop is closed, at least one.
func userCreatesUntil(ctx context.Context, user client.Client, stop <-chan struct{}) userRun {
	began := time.Now()
	for i := 0; ; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("burst-%d", i), Namespace: fairUserNamespace},
			Data: map[string]string{"key": "value"}}
		if err := user.Create(ctx, cm); err != nil {
			return userRun{err: err}
		}
		select {
		case <-stop:
			return userRun{count: i + 1, took: time.Since(began)}
		default:
		}
	}
}

// userCreates times the user's N ConfigMap creates, one after the other,
// and deletes them.
func (b *bench) userCreates(user client.Client) time.Duration {
	b.t.Helper()
	began := time.Now()
	for i := range *n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("user-%d", i), Namespace: fairUserNamespace},
			Data: map[string]string{"key": "value"}}
		b.must(user.Create(b.ctx, cm))
	}
	took := time.Since(began)
	b.must(b.c.DeleteAllOf(b.ctx, &corev1.ConfigMap{}, client.InNamespace(fairUserNamespace)))
	return took
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
