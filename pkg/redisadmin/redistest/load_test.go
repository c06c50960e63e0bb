package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// startCluster starts n servers that keep their data across Restart and
// joins them in one cluster whose first server has every slot.
func startCluster(t *testing.T, n int) []*Server {
	t.Helper()
	ctx := context.Background()
	servers := make([]*Server, n)
	clients := make([]*redis.Client, n)
	for i := range servers {
		servers[i] = StartWith(t, "127.0.0.1", 0, Options{Persist: true})
		clients[i] = servers[i].Client()
	}
	if err := clients[0].ClusterAddSlotsRange(ctx, 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers[1:] {
		if err := clients[0].ClusterMeet(ctx, s.Host, strconv.Itoa(s.Port)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	NewWithT(t).Eventually(func(g Gomega) {
		for _, c := range clients {
			info, err := c.ClusterInfo(ctx).Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(info).To(ContainSubstring("cluster_state:ok"))
			g.Expect(info).To(ContainSubstring(fmt.Sprintf("cluster_known_nodes:%d", n)))
		}
	}, "20s", "50ms").Should(Succeed())
	return servers
}

// loadUntil runs a load through c until it has at least n acknowledged
// writes, and stops it.
func loadUntil(t *testing.T, c redis.UniversalClient, prefix string, n int) (*Load, int) {
	t.Helper()
	l := StartLoad(c, prefix)
	NewWithT(t).Eventually(func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.acked
	}, "10s", "10ms").Should(BeNumerically(">=", n))
	return l, l.Stop()
}

// After a node came back at another address (a pod replaced), the
// client's slot map still points at the old one: the first read fails, and
// reading back retries with a fresh map instead of calling the keys lost.
func TestReadBackRetriesAfterTheSlotMapWentStale(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	servers := startCluster(t, 2)
	c := ClusterClientWith(t, redis.ClusterOptions{MaxRedirects: 3}, servers...)
	l, acked := loadUntil(t, c, "stale", 50)

	servers[0].Restart(0)
	g.Expect(c.Get(ctx, l.key(0)).Err()).To(MatchError(ContainSubstring("connection refused")),
		"the client still sends the slot to the old address")

	start := time.Now()
	r := l.readBack(ctx, c, acked, time.Now().Add(30*time.Second))
	t.Logf("read back after %s and %d attempts", time.Since(start), r.attempts)
	g.Expect(r.lost).To(BeEmpty())
	g.Expect(r.unread).To(BeZero(), "errors: %v", r.errors)
	g.Expect(r.attempts).To(BeNumerically(">", 1), "the first attempt went to the address that is gone")

	var failures []string
	g2 := NewGomega(func(message string, _ ...int) { failures = append(failures, message) })
	g.Expect(l.ExpectNoLoss(g2, c)).To(Equal(acked))
	g.Expect(failures).To(BeEmpty())
}

// A key read and found missing or different is a lost write; a key that
// cannot be read at all is not, and is reported as unread.
func TestReadBackTellsLostWritesFromFailedReads(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	servers := startCluster(t, 1)
	c := ClusterClientWith(t, redis.ClusterOptions{MaxRedirects: 1}, servers...)
	l, acked := loadUntil(t, c, "lost", 10)
	g.Expect(c.Del(ctx, l.key(3)).Err()).To(Succeed())
	g.Expect(c.Set(ctx, l.key(5), "other", 0).Err()).To(Succeed())

	r := l.readBack(ctx, c, acked, time.Now().Add(10*time.Second))
	g.Expect(r.lost).To(ConsistOf(l.key(3)+": missing", l.key(5)+` = "other", want "value-5"`))
	g.Expect(r.unread).To(BeZero())
	g.Expect(r.attempts).To(Equal(1))

	servers[0].Stop()
	start := time.Now()
	r = l.readBack(ctx, c, acked, time.Now().Add(3*time.Second))
	t.Logf("gave up after %s and %d attempts", time.Since(start), r.attempts)
	g.Expect(time.Since(start)).To(BeNumerically("<", 15*time.Second), "reading back gives up near the deadline")
	g.Expect(r.lost).To(BeEmpty(), "no key was read, so none is lost")
	g.Expect(r.unread).To(Equal(acked))
	g.Expect(r.attempts).To(BeNumerically(">", 1), "failed reads are retried")
	g.Expect(r.errors).NotTo(BeEmpty())

	var failures []string
	g2 := NewGomega(func(message string, _ ...int) { failures = append(failures, message) })
	l.expectNoLoss(g2, c, time.Second)
	g.Expect(failures).To(HaveLen(1))
	g.Expect(failures[0]).To(ContainSubstring(fmt.Sprintf("could not read back %d acknowledged keys", acked)))
	g.Expect(strings.Join(failures, "\n")).NotTo(ContainSubstring("acknowledged writes lost"))
}

// When a slot's master fails over, the replicated load follows the old
// master's MOVED reply to the new one at once, as a cluster client's own
// commands do: its writes do not wait for the client's slot map, whose
// reload may first dial addresses of restarted pods until it times out.
func TestReplicatedLoadFollowsMovedWhileTheSlotMapReloads(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	servers := startCluster(t, 2)
	master, replica := servers[0].Client(), servers[1].Client()
	defer func() { _ = master.Close() }()
	defer func() { _ = replica.Close() }()
	id, err := master.ClusterMyID(ctx).Result()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(replica.ClusterReplicate(ctx, id).Err()).To(Succeed())
	g.Eventually(func() (string, error) { return replica.Info(ctx, "replication").Result() }, "20s", "50ms").
		Should(ContainSubstring("master_link_status:up"))
	// A manual failover needs the master to know the replica as its own.
	// (go-redis names CLUSTER REPLICAS by its old name.)
	g.Eventually(func() ([]string, error) {
		return master.ClusterSlaves(ctx, id).Result() //nolint:staticcheck // see above
	}, "20s", "50ms").Should(HaveLen(1))

	// The client's slot map comes from the first server; once the test has
	// failed it over, a reload takes slowReload, as one that dials a gone
	// address first would.
	const slowReload = 3 * time.Second
	var failedOver atomic.Bool
	c := ClusterClientWith(t, redis.ClusterOptions{ClusterSlots: func(ctx context.Context) ([]redis.ClusterSlot, error) {
		if failedOver.Load() {
			time.Sleep(slowReload)
		}
		return master.ClusterSlots(ctx).Result() //nolint:staticcheck // the ClusterSlots option takes CLUSTER SLOTS' reply
	}}, servers...)
	l := StartReplicatedLoad(c, "moved")
	g.Eventually(func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.acked
	}, "10s", "10ms").Should(BeNumerically(">=", 20))

	l.Outage()
	failedOver.Store(true)
	g.Expect(replica.ClusterFailover(ctx).Err()).To(Succeed())
	g.Eventually(func() (string, error) { return master.Info(ctx, "replication").Result() }, "20s", "50ms").
		Should(ContainSubstring("role:slave"), "replica's log:\n%s", servers[1].Log())
	before := l.Stop()
	l = StartReplicatedLoad(c, "moved-after")
	g.Eventually(func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.acked
	}, slowReload/2, "10ms").Should(BeNumerically(">=", 20), "writes go on at the new master before the slot map reloads")
	g.Expect(l.LongestOutage()).To(BeNumerically("<", slowReload/2))
	g.Expect(before).To(BeNumerically(">=", 20))
	l.Stop()
}
