//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestRedisBusIsolationOnTheRealNode plays a tenant who controls one
// RedisCluster and tells its node to CLUSTER MEET another namespace's
// cluster: the victim's nodes never list the stranger, keep their slots and
// stay Ready, whether or not the CNI enforces the NetworkPolicy each
// cluster gets.
func TestRedisBusIsolationOnTheRealNode(t *testing.T) {
	requireRedisNode(t)
	g := NewWithT(t)
	victimNS := namespace(t)
	attackerNS := namespaceNamed(t, victimNS+"-attacker")
	applyRedisClusterSpec(t, victimNS, "victim", 1, `{"size":1}`)
	applyRedisClusterSpec(t, attackerNS, "attacker", 1, `{"size":1}`)
	g.Expect(kubectl(t, "get", "rediscluster", "-n", victimNS, "victim", "-o",
		`jsonpath={.status.conditions[?(@.type=="BusIsolated")].status}`)).To(Equal("True"))
	g.Expect(kubectl(t, "get", "networkpolicy", "-n", victimNS, "victim", "-o", "name")).To(Equal("networkpolicy.networking.k8s.io/victim"))

	victims := nodeClients(t, victimNS, "victim", "", redisPassword(t, victimNS, "victim"))
	attackers := nodeClients(t, attackerNS, "attacker", "", redisPassword(t, attackerNS, "attacker"))
	ctx := context.Background()
	var victimIP string
	for ip := range victims {
		victimIP = ip
	}
	var attackerID string
	for _, c := range attackers {
		attackerID = c.ClusterMyID(ctx).Val()
		g.Expect(c.Do(ctx, "CLUSTER", "MEET", victimIP, "6379", "16379").Err()).To(Succeed())
	}
	g.Expect(attackerID).NotTo(BeEmpty())
	g.Consistently(func(g Gomega) {
		for ip, c := range victims {
			nodes, err := c.ClusterNodes(ctx).Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nodes).NotTo(ContainSubstring(attackerID), "%s lists the attacker's node", ip)
			g.Expect(strings.Count(strings.TrimSpace(nodes), "\n")+1).To(Equal(len(victims)), "%s lists a stranger:\n%s", ip, nodes)
			g.Expect(c.ClusterInfo(ctx).Val()).To(ContainSubstring("cluster_slots_assigned:16384"))
		}
	}, 15*time.Second, time.Second).Should(Succeed())
	expectRedisReady(t, victimNS, "victim", 1)
}
