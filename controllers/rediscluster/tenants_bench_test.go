//go:build bench

package rediscluster_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/metricsauth"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

var (
	healthyClusters = flag.Int("healthy", 8, "healthy RedisClusters, each in its own namespace, whose convergence is timed")
	slowClusters    = flag.Int("slow", 24, "RedisClusters of one hostile namespace whose nodes accept connections and never answer")
	hugeClusters    = flag.Int("huge", 4, "RedisClusters of another hostile namespace whose nodes hold a masterauth over the reply limit")
	junkRate        = flag.Int("junk", 50, "requests a second with junk bearer tokens to the metrics endpoint")
	withoutShare    = flag.Bool("without-share", true, "also time the healthy clusters beside the hostile tenants without the namespace share, to show what the share buys")
	rounds          = flag.Int("rounds", 5, "batches of healthy clusters timed in each phase; the table shows the median, the tolerance applies to the fastest")
	tolerance       = flag.Float64("tolerance", 0.10, "how much slower the healthy clusters may converge beside the hostile ones")
	heapProfile     = flag.String("heapprofile", "", "file a heap profile is written to after each phase (the phase's name is appended)")
	tenantsOut      = flag.String("out", "", "file the results table is written to; the log only when empty")
)

// workers is the manager's default; the share is its default quarter.
const workers = manager.DefaultMaxConcurrentReconciles

// TestHostileTenants times healthy RedisClusters converging alone, then
// beside hostile tenants (nodes that never answer, nodes whose replies are
// too large, junk tokens at the metrics endpoint), with the namespace share
// and without it. Beside the hostile tenants, with the share, they must
// converge within the tolerance of their time alone, and the process's
// peak RSS must stay under the manager's memory limit.
func TestHostileTenants(t *testing.T) {
	type phase struct {
		name    string
		hostile bool
		share   int
	}
	// The first run also warms the process up (connections, caches, code
	// paths); only the later ones are compared.
	t.Run("warm-up", func(t *testing.T) { timeHealthy(t, false, reconciler.PerNamespaceShare(workers), nil) })
	phases := []phase{
		{name: "alone", share: reconciler.PerNamespaceShare(workers)},
		{name: "beside hostile tenants", hostile: true, share: reconciler.PerNamespaceShare(workers)},
	}
	if *withoutShare {
		phases = append(phases, phase{name: "beside hostile tenants, no namespace share", hostile: true})
	}
	took := map[string]batchTimes{}
	var junk junkStats
	var peak int64
	for _, p := range phases {
		t.Run(p.name, func(t *testing.T) {
			took[p.name] = timeHealthy(t, p.hostile, p.share, &junk)
			if p.share > 0 {
				// The limit is the shipped configuration's: the phase
				// without a share comes last.
				peak = peakRSS(t)
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			t.Logf("peak RSS so far %d MiB; heap in use %d MiB, from the OS %d MiB", peakRSS(t)>>20, m.HeapInuse>>20, m.HeapSys>>20)
			if *heapProfile != "" {
				f, err := os.Create(*heapProfile + "." + strings.ReplaceAll(p.name, " ", "-"))
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = f.Close() }()
				if err := pprof.WriteHeapProfile(f); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	alone, hostile := took[phases[0].name].median(), took[phases[1].name].median()
	var b strings.Builder
	fmt.Fprintf(&b, "| Phase | %d healthy RedisClusters Ready after (median of %d) | vs alone |\n|---|---|---|\n", *healthyClusters, *rounds)
	for _, p := range phases {
		fmt.Fprintf(&b, "| %s | %.1f s | %+.0f%% |\n", p.name, took[p.name].median().Seconds(), 100*(took[p.name].median().Seconds()/alone.Seconds()-1))
	}
	fmt.Fprintf(&b, "\nHostile tenants: %d clusters whose nodes never answer (one namespace), %d whose nodes hold a %d MiB masterauth, %d junk-token requests a second at the metrics endpoint (%d answered 401, %d answered 429, %d other). %d workers, %d per namespace. Peak RSS of the process (manager, clients, test) with the namespace share: %d MiB.\n",
		*slowClusters, *hugeClusters, hugeMasterAuth>>20, *junkRate, junk.unauthorized.Load(), junk.limited.Load(), junk.other.Load(),
		workers, reconciler.PerNamespaceShare(workers), peak>>20)
	t.Log("\n" + b.String())
	if *tenantsOut != "" {
		if err := os.WriteFile(*tenantsOut, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Another load on the machine only ever adds time, to some rounds of
	// one phase, while the hostile tenants slow every round of theirs: the
	// fastest rounds compare the operator, the medians the whole machine.
	g := NewWithT(t)
	fastestAlone, fastestHostile := took[phases[0].name].fastest(), took[phases[1].name].fastest()
	g.Expect(fastestHostile.Seconds()).To(BeNumerically("<=", fastestAlone.Seconds()*(1+*tolerance)),
		"beside hostile tenants the fastest batch took %v, alone %v (medians %v and %v)", fastestHostile, fastestAlone, hostile, alone)
	g.Expect(peak).To(BeNumerically("<", int64(256<<20)), "the manager's memory limit is 256Mi")
}

// hugeMasterAuth is the masterauth the huge clusters' nodes hold: four
// times the reply limit.
const hugeMasterAuth = 32 << 20

// batchTimes are the times the batches of one phase took, sorted.
type batchTimes []time.Duration

func (b batchTimes) median() time.Duration  { return b[len(b)/2] }
func (b batchTimes) fastest() time.Duration { return b[0] }

// timeHealthy starts a manager like the deployed one (its workers, share
// as given), the hostile tenants when asked, then batches of healthy
// clusters, and returns the times the batches took to be Ready.
func timeHealthy(t *testing.T, hostile bool, share int, junk *junkStats) batchTimes {
	opts := options
	opts.PerNamespace = share
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), opts, testenv.ManagerOptions{MaxConcurrentReconciles: workers})
	env := testenv.Get(t)
	if hostile {
		startSlowTenant(t, g, c, ns)
		startHugeTenant(t, g, c, env.Namespace(t))
		stop := startJunkTokens(t, env.Config, junk)
		defer stop()
	}
	var times batchTimes
	for round := range *rounds {
		times = append(times, timeBatch(t, g, c, round))
	}
	slices.Sort(times)
	t.Logf("healthy batches took %v", times)
	return times
}

// timeBatch creates the healthy clusters, each in a namespace of its own,
// and returns how long they took to be Ready.
func timeBatch(t *testing.T, g *WithT, c client.Client, round int) time.Duration {
	env := testenv.Get(t)
	var healthy []*cachev1.RedisCluster
	var kubelets []*kubelet
	start := time.Now()
	for i := range *healthyClusters {
		ns := env.Namespace(t)
		rc := builders.RedisCluster(ns, fmt.Sprintf("healthy-%d-%d", round, i)).Size(1).Obj()
		g.Expect(c.Create(context.Background(), rc)).To(Succeed())
		healthy = append(healthy, rc)
		kubelets = append(kubelets, newKubelet(t, c, ns, rc.Name))
	}
	g.Eventually(func(g Gomega) {
		for _, k := range kubelets {
			k.sync(g)
		}
		for _, rc := range healthy {
			g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
			g.Expect(conditions.IsTrue(rc, conditions.Ready)).To(BeTrue(), "%s: %+v", rc.Namespace, rc.Status.Conditions)
			g.Expect(rc.Status.SlotsAssigned).To(Equal(int32(16384)))
		}
	}, 5*time.Minute, 100*time.Millisecond).Should(Succeed())
	took := time.Since(start)
	// Gone before their nodes stop, so that the next batch does not share
	// the workers with their retries.
	for _, rc := range healthy {
		g.Expect(c.Delete(context.Background(), rc)).To(Succeed())
	}
	for _, k := range kubelets {
		for _, s := range k.servers {
			s.Stop()
		}
	}
	return took
}

// startSlowTenant creates the slow clusters in ns, and a kubelet that
// gives them pods, in the background, until the test ends: their IPs lead
// to listeners that accept connections and never answer, as a tenant's
// image may.
func startSlowTenant(t *testing.T, g *WithT, c client.Client, ns string) {
	var kubelets []*kubelet
	for i := range *slowClusters {
		rc := builders.RedisCluster(ns, fmt.Sprintf("slow-%d", i)).Size(1).Obj()
		g.Expect(c.Create(context.Background(), rc)).To(Succeed())
		k := newKubelet(t, c, ns, rc.Name)
		k.noServer = true
		redistest.ListenSilently(t, net.JoinHostPort(k.ip(0), strconv.Itoa(rediscluster.ClientPort)))
		kubelets = append(kubelets, k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		// A failed expectation of a sync is retried in the next round.
		panicking := NewGomega(func(message string, _ ...int) { panic(message) })
		for ctx.Err() == nil {
			for _, k := range kubelets {
				func() {
					defer func() { _ = recover() }()
					k.sync(panicking)
				}()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// startHugeTenant creates the huge clusters in ns and, once they are
// Ready, sets a masterauth over the reply limit on their nodes, as their
// tenant may with CONFIG SET. redis-cli sends the value, so that the
// process whose peak memory is measured never holds it.
func startHugeTenant(t *testing.T, g *WithT, c client.Client, ns string) {
	var out []*kubelet
	var clusters []*cachev1.RedisCluster
	for i := range *hugeClusters {
		rc := builders.RedisCluster(ns, fmt.Sprintf("huge-%d", i)).Size(1).Obj()
		g.Expect(c.Create(context.Background(), rc)).To(Succeed())
		clusters = append(clusters, rc)
		out = append(out, newKubelet(t, c, ns, rc.Name))
	}
	for i, rc := range clusters {
		expectReady(g, out[i], rc, 1)
	}
	value := filepath.Join(t.TempDir(), "masterauth")
	f, err := os.Create(value)
	g.Expect(err).NotTo(HaveOccurred())
	chunk := []byte(strings.Repeat("m", 1<<20))
	for range hugeMasterAuth >> 20 {
		_, err := f.Write(chunk)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(f.Close()).To(Succeed())
	for _, k := range out {
		for _, s := range k.servers {
			in, err := os.Open(value)
			g.Expect(err).NotTo(HaveOccurred())
			cmd := exec.Command("redis-cli", "-h", s.Host, "-p", strconv.Itoa(s.Port), "--no-auth-warning", "-a", k.password(g), "-x", "CONFIG", "SET", "masterauth")
			cmd.Stdin = in
			out, err := cmd.CombinedOutput()
			_ = in.Close()
			g.Expect(err).NotTo(HaveOccurred(), "%s", out)
			g.Expect(strings.TrimSpace(string(out))).To(Equal("OK"))
		}
	}
	// The next reconcile of each meets the value, and each failed one
	// retries with backoff.
}

// junkStats counts the metrics endpoint's answers to junk tokens.
type junkStats struct{ unauthorized, limited, other atomic.Int64 }

// startJunkTokens serves the metrics endpoint as the manager does and
// sends it requests with random bearer tokens at *junkRate a second until
// the returned stop is called.
func startJunkTokens(t *testing.T, cfg *rest.Config, stats *junkStats) (stop func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(metricsserver.Options{
		BindAddress: addr, SecureServing: true,
		FilterProvider: metricsauth.Provider(cfg, metricsauth.DefaultQPS, metricsauth.DefaultBurst),
		TLSOpts:        []func(*tls.Config){metricsauth.SelfSignedTLS},
	}, cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Start(ctx) })
	scraper := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	wg.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(*junkRate))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			wg.Go(func() {
				token := make([]byte, 32)
				_, _ = rand.Read(token)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
				req.Header.Set("Authorization", "Bearer "+hex.EncodeToString(token))
				resp, err := scraper.Do(req)
				switch {
				case err != nil:
					if ctx.Err() == nil {
						stats.other.Add(1)
					}
				case resp.StatusCode == http.StatusUnauthorized:
					stats.unauthorized.Add(1)
				case resp.StatusCode == http.StatusTooManyRequests:
					stats.limited.Add(1)
				default:
					stats.other.Add(1)
				}
				if resp != nil {
					_ = resp.Body.Close()
				}
			})
		}
	})
	return func() { cancel(); wg.Wait() }
}

// peakRSS is the process's peak resident set size (VmHWM).
func peakRSS(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
