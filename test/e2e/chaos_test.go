//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// TestRedisChaosOnTheRealNode drives a client that keeps writing and
// reading (each write acknowledged once a replica has it) through a rolling
// image change, two masters that hang and then crash, every pod deleted at
// once, a manager restart in the middle of a rollout, and a scale
// 3 -> 5 -> 3. No
// acknowledged write may be lost; the longest window in which writes
// failed is reported per step.
func TestRedisChaosOnTheRealNode(t *testing.T) {
	requireRedisNode(t)
	g := NewWithT(t)
	ns := namespace(t)
	const name = "chaos"
	applyRedisClusterSpec(t, ns, name, 3, `{"size":3,"replicasPerMaster":1,"storage":{"size":"64Mi"},"monitoring":{"canary":{"enabled":true,"interval":"1s"}}}`)
	c := redisClient(t, ns, name)
	load := redistest.StartReplicatedLoad(c, "chaos")
	outages := map[string]time.Duration{}
	step := func(what string, size int, do func()) {
		load.Outage()
		do()
		expectRedisReady(t, ns, name, size)
		outages[what] = load.Outage()
		t.Logf("%s: writes failed for at most %s", what, outages[what])
	}

	step("rolling image change", 3, func() {
		image := kubectl(t, "get", "statefulset", "-n", ns, name, "-o", "jsonpath={.spec.template.spec.containers[0].image}")
		rolled := image + "-rolled"
		tagImage(t, image, rolled)
		kubectl(t, "patch", "rediscluster", "-n", ns, name, "--type=merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, rolled))
		expectRolledOut(t, ns, name, func(pod string) string {
			return kubectl(t, "get", "pod", "-n", ns, pod, "-o", "jsonpath={.spec.containers[0].image}")
		}, rolled)
	})
	// With a replica per shard a master pauses writes only while its
	// replica takes over.
	g.Expect(outages["rolling image change"]).To(BeNumerically("<", 2*time.Second), "events:\n%s", kubectl(t, "events", "-n", ns, "--for", "rediscluster/"+name))

	step("two masters hung, then killed", 3, func() {
		// One after the other: Redis needs a majority of masters alive to
		// elect a replica. A master that hangs (SIGSTOP) keeps its
		// listening socket, so the kubelet's TCP probes pass and nothing
		// restarts it before Redis has failed it over; then it crashes
		// (SIGKILL), the kubelet brings it back, and it rejoins as a
		// replica. (Killing it at once raced the kubelet: a master back
		// within the node timeout is never failed over, and one killed
		// again before its replica had synced leaves that replica's data
		// too old to take over.)
		for i, pod := range redisMasters(t, ns, name)[:2] {
			ip := kubectl(t, "get", "pod", "-n", ns, pod, "-o", "jsonpath={.status.podIP}")
			peers := nodeClients(t, ns, name, "", redisPassword(t, ns, name))
			pid := signalRedis(t, ip, syscall.SIGSTOP)
			g.Eventually(func() bool { return failedOver(peers, ip) }, "2m", "500ms").Should(BeTrue(), "Redis fails %s over", pod)
			g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
			t.Logf("killed redis-server %d at %s once its replica had taken over", pid, ip)
			g.Eventually(func() int {
				out, _ := run("events", "-n", ns, "--for", "rediscluster/"+name)
				return strings.Count(out, "Redis failed it over")
			}, "3m").Should(BeNumerically(">=", i+1), "the operator records Redis's failover of %s", pod)
			expectRedisReady(t, ns, name, 3)
		}
	})

	step("every pod deleted at once", 3, func() {
		kubectl(t, "delete", "pods", "-n", ns, "-l", "app.kubernetes.io/instance="+name, "--wait=false")
		time.Sleep(5 * time.Second)
	})
	g.Expect(run("events", "-n", ns, "--for", "rediscluster/"+name)).NotTo(ContainSubstring("DataLost"), "the volumes kept the data")

	step("manager restart during a rollout", 3, func() {
		kubectl(t, "patch", "rediscluster", "-n", ns, name, "--type=merge", "-p", `{"spec":{"redisConfig":{"maxmemory-policy":"allkeys-lru"}}}`)
		g.Eventually(func() string {
			out, _ := run("get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.rollout.updated}")
			return out
		}, "2m").Should(MatchRegexp(`^[1-4]$`), "the rollout is under way")
		leader.Kill()
		var err error
		leader, err = startManager("chaos-restart")
		g.Expect(err).NotTo(HaveOccurred())
		expectRolledOut(t, ns, name, func(pod string) string {
			ip := kubectl(t, "get", "pod", "-n", ns, pod, "-o", "jsonpath={.status.podIP}")
			cfg, _ := nodeClients(t, ns, name, "", redisPassword(t, ns, name))[ip].ConfigGet(context.Background(), "maxmemory-policy").Result()
			return cfg["maxmemory-policy"]
		}, "allkeys-lru")
	})

	for _, size := range []int{5, 3} {
		step(fmt.Sprintf("scale to %d", size), size, func() {
			kubectl(t, "patch", "rediscluster", "-n", ns, name, "--type=merge", "-p", fmt.Sprintf(`{"spec":{"size":%d}}`, size))
			expectRedisReady(t, ns, name, size)
		})
	}

	acked := load.ExpectNoLoss(g, c)
	t.Logf("%d acknowledged writes through the chaos, none lost (%d made again until a replica had them); errors seen: %v", acked, load.Unreplicated(), load.Errors())
	// The write canary, which ran throughout, found what the load found:
	// its condition is False since the start, and its counters (since the
	// manager's restart) are 0 writes lost.
	g.Expect(kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", `jsonpath={.status.conditions[?(@.type=="WritesLost")].status}`)).To(Equal("False"))
	canary := canarySeries(t, ns, name)
	t.Logf("the write canary's counters since the manager's restart:\n%s", strings.Join(canary, "\n"))
	lost := 0
	for _, line := range canary {
		if strings.HasPrefix(line, "rediscluster_canary_acknowledged_writes_lost_total{") {
			lost++
			g.Expect(line).To(HaveSuffix(" 0"), "no acknowledged write lost")
		}
	}
	g.Expect(lost).To(Equal(3), "one series per shard")
	events, _ := run("events", "-n", ns, "--for", "rediscluster/"+name)
	t.Logf("the events tell the story:\n%s", events)
	g.Expect(kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.clusterState}")).To(Equal("ok"))
}

// canarySeries reads the leading manager's metrics as a ServiceAccount
// allowed to, and returns the write canary's series of the RedisCluster.
func canarySeries(t *testing.T, ns, name string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(managerMetrics(t, metricsToken(t, ns)), "\n") {
		if strings.HasPrefix(line, "rediscluster_canary_") && strings.Contains(line, `name="`+name+`"`) && strings.Contains(line, `namespace="`+ns+`"`) {
			out = append(out, line)
		}
	}
	return out
}

// expectRolledOut waits until the rollout is over and every pod of the
// cluster reports want through got.
func expectRolledOut(t *testing.T, ns, name string, got func(pod string) string, want string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		out, _ := run("get", "rediscluster", "-n", ns, name, "-o", `jsonpath={.status.rollout}`)
		g.Expect(strings.TrimSpace(out)).To(BeEmpty(), "the rollout is over")
		pods := strings.Fields(kubectl(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance="+name, "-o", "jsonpath={.items[*].metadata.name}"))
		g.Expect(pods).NotTo(BeEmpty())
		for _, pod := range pods {
			g.Expect(got(pod)).To(Equal(want), pod)
		}
	}, "10m", "2s").Should(Succeed())
}

// failedOver reports whether another node of the cluster sees the node at
// ip without slots: Redis has given them to its replica.
func failedOver(peers map[string]*redis.Client, ip string) bool {
	for addr, c := range peers {
		if addr == ip {
			continue
		}
		out, err := c.ClusterNodes(context.Background()).Result()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			// <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> [slots...]
			if f := strings.Fields(line); len(f) >= 8 && strings.HasPrefix(f[1], ip+":") {
				return len(f) == 8
			}
		}
	}
	return false
}

// redisMasters lists the pods whose nodes are masters, from the status.
func redisMasters(t *testing.T, ns, name string) []string {
	t.Helper()
	masters := strings.Fields(kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.masters[*]}"))
	NewWithT(t).Expect(len(masters)).To(BeNumerically(">=", 2))
	return masters
}

// signalRedis sends sig to the redis-server process of the pod with the
// given IP, waiting up to 20 seconds for the kubelet to have started it,
// and returns its PID: pods on the real node are processes of this
// machine, and the pod's IP is a local address of the process's network
// namespace.
func signalRedis(t *testing.T, podIP string, sig syscall.Signal) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if pid := redisPID(t, podIP); pid != 0 {
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatalf("sending %s to redis-server %d of %s: %v", sig, pid, podIP, err)
			}
			t.Logf("sent %s to redis-server %d at %s", sig, pid, podIP)
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no redis-server runs in the network of %s", podIP)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// redisPID finds the redis-server process in the pod with the given IP.
func redisPID(t *testing.T, podIP string) int {
	t.Helper()
	comms, err := filepath.Glob("/proc/[0-9]*/comm")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range comms {
		comm, err := os.ReadFile(f)
		if err != nil || strings.TrimSpace(string(comm)) != "redis-server" {
			continue
		}
		dir := filepath.Dir(f)
		fib, err := os.ReadFile(filepath.Join(dir, "net", "fib_trie"))
		if err != nil || !strings.Contains(string(fib), podIP+"\n") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		return pid
	}
	return 0
}

// tagImage gives an image on the real node a second name.
func tagImage(t *testing.T, image, tag string) {
	t.Helper()
	script := os.Getenv("E2E_TAG_IMAGE")
	if script == "" {
		t.Fatal("E2E_TAG_IMAGE is not set: run the e2e suite through make test-e2e")
	}
	out, err := exec.Command("sh", "-c", script+` "$0" "$1"`, image, tag).CombinedOutput()
	if err != nil {
		t.Fatalf("tagging %s as %s: %v: %s", image, tag, err, out)
	}
}
