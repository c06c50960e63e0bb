package rediscanary

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

const canaryPassword = "canary-password"

// startShard runs one shard, a master and a replica, with the canary
// user, and returns its servers and addresses.
func startShard(t *testing.T) ([]*redistest.Server, []string) {
	access := redisadmin.Access{Passwords: []string{"client"}, OperatorPassword: "operator", CanaryPassword: canaryPassword}
	servers := map[string]*redistest.Server{}
	var addrs []string
	var list []*redistest.Server
	for i := range 2 {
		s := redistest.StartWith(t, "127.0.0.1", 0, redistest.Options{Config: access.ConfigFile(), Password: "client"})
		servers[fmt.Sprintf("node-%d", i)] = s
		addrs = append(addrs, s.Addr())
		list = append(list, s)
	}
	a := redisadmin.New(func(_ context.Context, name string) (string, error) { return servers[name].Addr(), nil },
		redisadmin.Options{Username: redisadmin.OperatorUser, Password: access.OperatorPassword})
	topo := redisadmin.Topology{Shards: [][]string{{"node-0", "node-1"}}}
	NewWithT(t).Eventually(func(g Gomega) {
		res, err := a.Reconcile(context.Background(), topo)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Done).To(BeTrue())
		g.Expect(res.State.ClusterState).To(Equal("ok"))
		info, err := list[1].Client().Info(context.Background(), "replication").Result()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(info).To(ContainSubstring("master_link_status:up"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	return list, addrs
}

func startRunner(t *testing.T, workers int, onLoss func(types.NamespacedName)) *Runner {
	r := New(workers, onLoss)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// Clusters whose nodes never answer count outage and share half of the
// workers, each held for at most a probe's deadline: the healthy cluster
// beside them is probed every interval, with every write acknowledged.
func TestStalledClusterDelaysNoOther(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	_, healthyAddrs := startShard(t)
	silent := []string{redistest.ListenSilently(t, "127.0.0.1:0"), redistest.ListenSilently(t, "127.0.0.1:0")}
	r := startRunner(t, 2, nil)
	healthy := types.NamespacedName{Namespace: "a", Name: "healthy"}
	stalled := []types.NamespacedName{{Namespace: "b", Name: "stalled-1"}, {Namespace: "b", Name: "stalled-2"}}
	for _, key := range stalled {
		r.Set(key, Config{Interval: time.Second, Password: canaryPassword, Target: redisadmin.CanaryTarget{Shards: [][]string{silent}, Replicas: 1}})
	}
	r.Set(healthy, Config{Interval: time.Second, Password: canaryPassword, Target: redisadmin.CanaryTarget{Shards: [][]string{healthyAddrs}, Replicas: 1}})
	start := time.Now()
	g.Eventually(func() float64 {
		return testutil.ToFloat64(OutageSeconds.WithLabelValues("b", "stalled-1", "0"))
	}, 20*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 2))
	elapsed := time.Since(start)
	snap, ok := r.Snapshot(healthy)
	g.Expect(ok).To(BeTrue())
	g.Expect(snap.Total).To(Equal(Totals{}), "the healthy cluster lost nothing and failed no write")
	t.Logf("the healthy cluster was probed %d times in %s", snap.Probes, elapsed)
	// The first probes of the stalled clusters may hold both workers, for
	// a second; then one worker is theirs and the other the healthy one's.
	g.Expect(snap.Probes).To(BeNumerically(">=", int(elapsed/time.Second)-1), "probed every interval or so in %s", elapsed)
	g.Expect(testutil.ToFloat64(OutageSeconds.WithLabelValues("a", "healthy", "0"))).To(BeZero())
}

// A loss is counted on its shard's series, reported once to onLoss, and
// in the rollout step's totals, which restart with the next step; the
// series go with the cluster.
func TestLossIsCountedAndReported(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	servers, addrs := startShard(t)
	var mu sync.Mutex
	var reported []types.NamespacedName
	r := startRunner(t, 1, func(key types.NamespacedName) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, key)
	})
	key := types.NamespacedName{Namespace: "c", Name: "lossy"}
	cfg := Config{Interval: time.Second, Password: canaryPassword, Target: redisadmin.CanaryTarget{Shards: [][]string{addrs}, Replicas: 1}, Rollout: "rev-2", Step: "restarting replica lossy-1"}
	r.Set(key, cfg)
	// Two acknowledged writes: the lineage begins at the first.
	g.Eventually(func() int { s, _ := r.Snapshot(key); return s.Probes }, 10*time.Second, 50*time.Millisecond).Should(BeNumerically(">=", 3))
	g.Expect(servers[0].Client().FlushAll(context.Background()).Err()).To(Succeed())
	g.Eventually(func() uint64 { s, _ := r.Snapshot(key); return s.Total.WritesLost }, 10*time.Second, 50*time.Millisecond).Should(BeNumerically(">", 0))
	snap, _ := r.Snapshot(key)
	g.Expect(snap.Step.WritesLost).To(Equal(snap.Total.WritesLost))
	g.Expect(snap.Rollout.WritesLost).To(Equal(snap.Total.WritesLost))
	g.Expect(snap.LastLoss).NotTo(BeZero())
	g.Expect(testutil.ToFloat64(WritesLost.WithLabelValues("c", "lossy", "0"))).To(BeEquivalentTo(snap.Total.WritesLost))
	mu.Lock()
	g.Expect(reported).To(Equal([]types.NamespacedName{key}))
	mu.Unlock()

	cfg.Step = "failing over lossy-0"
	r.Set(key, cfg)
	snap, _ = r.Snapshot(key)
	g.Expect(snap.Step).To(Equal(Totals{}))
	g.Expect(snap.Rollout.WritesLost).To(Equal(snap.Total.WritesLost))

	r.Remove(key)
	_, ok := r.Snapshot(key)
	g.Expect(ok).To(BeFalse())
	g.Expect(WritesLost.DeleteLabelValues("c", "lossy", "0")).To(BeFalse(), "the series went with the cluster")
	g.Expect(OutageSeconds.DeleteLabelValues("c", "lossy", "0")).To(BeFalse(), "the series went with the cluster")
}
