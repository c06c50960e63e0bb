//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// requireRedisNode skips a test that needs Redis to run: kwok's simulated
// pods run nothing.
func requireRedisNode(t *testing.T) {
	t.Helper()
	if !realNode {
		t.Skip("needs the real node: kwok's pods run no Redis")
	}
}

// applyRedisCluster applies a RedisCluster of the given size, with a volume
// per node (the real node's local-path provisioner), and waits until it is
// Ready at that size.
func applyRedisCluster(t *testing.T, ns, name string, size int) {
	t.Helper()
	applyRedisClusterSpec(t, ns, name, size, fmt.Sprintf(`{"size":%d,"storage":{"size":"64Mi"}}`, size))
}

// applyRedisClusterSpec applies a RedisCluster with spec (JSON) and waits
// until it is Ready with size masters.
func applyRedisClusterSpec(t *testing.T, ns, name string, size int, spec string) {
	t.Helper()
	manifest := fmt.Sprintf(`{"apiVersion":"cache.example.com/v1","kind":"RedisCluster","metadata":{"name":%q,"namespace":%q},"spec":%s}`, name, ns, spec)
	applyJSON(t, manifest)
	expectRedisReady(t, ns, name, size)
}

// expectRedisReady waits until the RedisCluster is Ready with size masters
// serving every slot.
func expectRedisReady(t *testing.T, ns, name string, size int) {
	t.Helper()
	NewWithT(t).Eventually(func() string {
		out, _ := run("get", "rediscluster", "-n", ns, name, "-o",
			`jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.size} {.status.clusterState} {.status.slotsAssigned}`)
		return strings.TrimSpace(out)
	}, "4m").Should(Equal(fmt.Sprintf("True %d ok 16384", size)), "RedisCluster %s/%s Ready at size %d", ns, name, size)
}

// redisPassword reads the clients' password from the Secret the
// RedisCluster's status names, as a user would with kubectl.
func redisPassword(t *testing.T, ns, name string) string {
	t.Helper()
	secret := kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.auth.secretName}")
	key := kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.auth.secretKey}")
	return secretValue(t, ns, secret, key)
}

// secretValue reads one key of a Secret.
func secretValue(t *testing.T, ns, secret, key string) string {
	t.Helper()
	encoded := kubectl(t, "get", "secret", "-n", ns, secret, "-o", "jsonpath={.data."+key+"}")
	value, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(value) == 0 {
		t.Fatalf("no value in Secret %s/%s key %s: %v", ns, secret, key, err)
	}
	return string(value)
}

// redisClient reaches the cluster through its client Service with the
// password of its Secret, as an application in the cluster would, and
// follows the nodes' redirects to their pod IPs. It dials once, for at
// most a second, as an application on the pod network would set it:
// go-redis's defaults (5 attempts of 5 s) let every address a restarted
// pod gave up stall a slot map reload for up to 25 s.
func redisClient(t *testing.T, ns, name string) *redis.ClusterClient {
	t.Helper()
	return redisClientWith(t, ns, name, redisPassword(t, ns, name))
}

// redisClientWith is redisClient with a given password.
func redisClientWith(t *testing.T, ns, name, password string) *redis.ClusterClient {
	t.Helper()
	ip := kubectl(t, "get", "service", "-n", ns, name, "-o", "jsonpath={.spec.clusterIP}")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{net.JoinHostPort(ip, "6379")}, Password: password, DialTimeout: time.Second, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	NewWithT(t).Eventually(func() error { return c.Ping(context.Background()).Err() }).Should(Succeed())
	return c
}

// nodeClients returns a client of each of the cluster's pods, at its pod
// IP, logged in as username (the default user when empty) with password
// (none when empty).
func nodeClients(t *testing.T, ns, name, username, password string) map[string]*redis.Client {
	t.Helper()
	out := map[string]*redis.Client{}
	for _, pod := range strings.Fields(kubectl(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance="+name, "-o", `jsonpath={range .items[*]}{.status.podIP}{" "}{end}`)) {
		c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort(pod, "6379"), Username: username, Password: password, MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		out[pod] = c
	}
	NewWithT(t).Expect(out).NotTo(BeEmpty())
	return out
}

// TestRedisKeepsEveryKeyOnTheRealNode writes keys through the client
// Service. One calendar window then drives two TDSets: one grows the
// cluster 3 -> 5 when the window opens and shrinks it back when it ends;
// the other scales a Deployment the team created itself, which no operator
// of ours made, from 1 to 2 and back, and gives it its own count back when
// the TDSet goes. Then a pod is deleted (it comes back with a new IP and
// its volume): every key stays readable throughout.
func TestRedisKeepsEveryKeyOnTheRealNode(t *testing.T) {
	requireRedisNode(t)
	// Parallel with the other test that waits for calendar windows
	// (TestPrometheusScrapesOnTheRealNode), after every serial test, which
	// may restart the manager: most of both is waiting.
	t.Parallel()
	g := NewWithT(t)
	ns := namespace(t)
	const name, web = "keys", "web"
	applyRedisCluster(t, ns, name, 3)
	applyExistingDeployment(t, ns, web, 3)
	template := templateOf(t, ns, web)
	c := redisClient(t, ns, name)
	redistest.WriteKeys(g, c)

	// A window of 3 minutes, every day in UTC, from the first minute
	// boundary at least 30 s away (TDSet windows are set in minutes).
	start := time.Now().UTC().Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute)
	end := start.Add(3 * time.Minute)
	applyWindowTDSet(t, ns, "business-hours", "cache.example.com/v1", "RedisCluster", name, "Keep", start, end, 3, 5)
	applyWindowTDSet(t, ns, "web-hours", "apps/v1", "Deployment", web, "Restore", start, end, 1, 2)
	g.Expect(time.Now()).To(BeTemporally("<", start), "the TDSets were Ready at the default count before the window")
	size := func() string {
		out, _ := run("get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.spec.size}")
		return strings.TrimSpace(out)
	}
	g.Expect(size()).To(Equal("3"))
	expectDeploymentAvailable(t, ns, web, 1)

	g.Eventually(size, time.Until(start)+30*time.Second, time.Second).Should(Equal("5"), "the window's count once it opened at %s", start)
	g.Expect(time.Now()).To(BeTemporally(">=", start.Add(-time.Second)), "no lead time was asked for")
	expectDeploymentAvailable(t, ns, web, 2)
	expectRedisReady(t, ns, name, 5)
	g.Expect(time.Now()).To(BeTemporally("<", end), "the cluster grew within the window, or this test's window is too short")
	redistest.ExpectKeys(g, c)
	for _, tdset := range []string{"business-hours", "web-hours"} {
		want := map[string]string{"business-hours": "5 True", "web-hours": "2 True"}[tdset]
		g.Eventually(func() string {
			out, _ := run("get", "tdset", "-n", ns, tdset, "-o", `jsonpath={.status.target.observedReplicas} {.status.conditions[?(@.type=="Ready")].status}`)
			return strings.TrimSpace(out)
		}, "30s").Should(Equal(want), "TDSet %s reports its target Ready at the window's count", tdset)
	}
	// The grow measured how fast the cluster moves its keys: the next
	// morning's scale-up starts that much early.
	g.Expect(kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.migration.slotsPerMinute}")).NotTo(BeEmpty())
	g.Eventually(func() string {
		out, _ := run("get", "tdset", "-n", ns, "business-hours", "-o", "jsonpath={.status.target.estimatedLeadTime}")
		return strings.TrimSpace(out)
	}, "30s").ShouldNot(BeEmpty(), "the TDSet estimates its lead time from the cluster's migration rate")

	g.Eventually(size, time.Until(end)+30*time.Second, time.Second).Should(Equal("3"), "the default count once the window ended at %s", end)
	expectDeploymentAvailable(t, ns, web, 1)
	expectRedisReady(t, ns, name, 3)
	redistest.ExpectKeys(g, c)
	// The cluster keeps its size when its TDSet goes (onDelete Keep); the
	// Deployment gets back the count it had before its TDSet (Restore), and
	// its pod template was never touched.
	kubectl(t, "delete", "tdset", "-n", ns, "business-hours", "web-hours", "--wait=true")
	g.Expect(size()).To(Equal("3"))
	expectDeploymentAvailable(t, ns, web, 3)
	g.Expect(templateOf(t, ns, web)).To(Equal(template), "the TDSet changed only the Deployment's replicas")

	before := kubectl(t, "get", "pod", "-n", ns, name+"-1", "-o", "jsonpath={.status.podIP}")
	kubectl(t, "delete", "pod", "-n", ns, name+"-1", "--wait=true")
	g.Eventually(func() string {
		out, _ := run("get", "pod", "-n", ns, name+"-1", "-o", "jsonpath={.status.podIP}")
		return strings.TrimSpace(out)
	}, "2m").ShouldNot(BeElementOf("", before), "the pod comes back with a new IP")
	expectRedisReady(t, ns, name, 3)
	redistest.ExpectKeys(g, c)
}
