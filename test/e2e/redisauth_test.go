//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// clientPod runs redis-cli in a pod of the Redis image, as an application
// would: with the cluster's password from its Secret when secret is set,
// without one otherwise. Each command runs in its own container, in order;
// clientPod returns the output of each.
func clientPod(t *testing.T, ns, name, pod, secret string, commands ...[]string) []string {
	t.Helper()
	image := os.Getenv("REDIS_IMAGE")
	if image == "" {
		t.Fatal("REDIS_IMAGE is not set: run the e2e suite through make test-e2e")
	}
	env := "[]"
	if secret != "" {
		env = fmt.Sprintf(`[{"name":"REDISCLI_AUTH","valueFrom":{"secretKeyRef":{"name":%q,"key":"password"}}}]`, secret)
	}
	security := `{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"readOnlyRootFilesystem":true,"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}`
	var containers []string
	for i, args := range commands {
		full := append([]string{"redis-cli", "-c", "-h", name}, args...)
		quoted := make([]string, len(full))
		for j, a := range full {
			quoted[j] = fmt.Sprintf("%q", a)
		}
		containers = append(containers, fmt.Sprintf(`{"name":"step-%d","image":%q,"command":[%s],"env":%s,"securityContext":%s}`,
			i, image, strings.Join(quoted, ","), env, security))
	}
	last := containers[len(containers)-1]
	manifest := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q},"spec":{"restartPolicy":"Never","automountServiceAccountToken":false,"securityContext":{"runAsUser":999,"runAsNonRoot":true},"initContainers":[%s],"containers":[%s]}}`,
		pod, ns, strings.Join(containers[:len(containers)-1], ","), last)
	applyJSON(t, manifest)
	NewWithT(t).Eventually(func() string {
		out, _ := run("get", "pod", "-n", ns, pod, "-o", "jsonpath={.status.phase}")
		return out
	}, "2m").Should(BeElementOf("Succeeded", "Failed"), "client pod %s finishes", pod)
	var outputs []string
	for i := range commands {
		out, _ := run("logs", "-n", ns, pod, "-c", fmt.Sprintf("step-%d", i))
		outputs = append(outputs, strings.TrimSpace(out))
	}
	return outputs
}

// TestRedisAuthOnTheRealNode: a cluster comes up with authentication on; a
// pod with the Secret reads and writes through the client Service, a pod
// without it gets NOAUTH; the password rotates under load with no write
// lost and replication intact; the operator's own user cannot read keys.
func TestRedisAuthOnTheRealNode(t *testing.T) {
	requireRedisNode(t)
	g := NewWithT(t)
	ns := namespace(t)
	const name = "guarded"
	applyRedisClusterSpec(t, ns, name, 2, `{"size":2,"replicasPerMaster":1}`)
	secret := kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.auth.secretName}")
	g.Expect(secret).To(Equal(name + "-auth"))
	kubectl(t, "wait", "--for=condition=AuthEnabled", "-n", ns, "rediscluster/"+name, "--timeout=10s")

	t.Run("a pod with the Secret reads and writes, one without gets NOAUTH", func(t *testing.T) {
		g := NewWithT(t)
		out := clientPod(t, ns, name, "with-secret", secret, []string{"SET", "from-pod", "hello"}, []string{"GET", "from-pod"})
		g.Expect(out).To(Equal([]string{"OK", "hello"}))
		out = clientPod(t, ns, name, "without-secret", "", []string{"GET", "from-pod"})
		g.Expect(out[0]).To(ContainSubstring("NOAUTH"))
	})

	oldPassword := redisPassword(t, ns, name)
	for _, c := range nodeClients(t, ns, name, "", "") {
		g.Expect(c.Ping(context.Background()).Err()).To(MatchError(ContainSubstring("NOAUTH")))
	}

	t.Run("the password rotates under load", func(t *testing.T) {
		g := NewWithT(t)
		load := redistest.StartLoad(redisClientWith(t, ns, name, oldPassword), "rotation")
		time.Sleep(2 * time.Second)
		newPassword := "rotated-" + oldPassword[:16]
		// The old password stays valid as the previous one while clients move.
		kubectl(t, "patch", "secret", "-n", ns, secret, "--type=merge", "-p", fmt.Sprintf(`{"stringData":{"previous":%q}}`, oldPassword))
		kubectl(t, "patch", "rediscluster", "-n", ns, name, "--type=merge", "-p", `{"spec":{"auth":{"previousPasswordKey":"previous"}}}`)
		kubectl(t, "patch", "secret", "-n", ns, secret, "--type=merge", "-p", fmt.Sprintf(`{"stringData":{"password":%q}}`, newPassword))
		g.Eventually(func() string {
			out, _ := run("events", "-n", ns, "--for", "rediscluster/"+name)
			return out
		}, "1m").Should(ContainSubstring("PasswordRotated"))
		for _, password := range []string{oldPassword, newPassword} {
			for ip, c := range nodeClients(t, ns, name, "", password) {
				g.Expect(c.Ping(context.Background()).Err()).To(Succeed(), "%s accepts both passwords", ip)
			}
		}
		acked := load.ExpectNoLoss(g, redisClientWith(t, ns, name, newPassword))
		g.Expect(load.Errors()).To(BeEmpty())
		t.Logf("%d acknowledged writes during the rotation, none lost", acked)

		kubectl(t, "patch", "rediscluster", "-n", ns, name, "--type=json", "-p", `[{"op":"remove","path":"/spec/auth/previousPasswordKey"}]`)
		g.Eventually(func(g Gomega) {
			for ip, c := range nodeClients(t, ns, name, "", oldPassword) {
				g.Expect(c.Ping(context.Background()).Err()).To(MatchError(ContainSubstring("WRONGPASS")), "%s refuses the old password", ip)
			}
		}, "1m").Should(Succeed())

		// Replication never broke, and reconnects with the new password.
		replicas := 0
		for _, c := range nodeClients(t, ns, name, "", newPassword) {
			info := c.Info(context.Background(), "replication").Val()
			if !strings.Contains(info, "role:slave") {
				continue
			}
			replicas++
			g.Expect(info).To(ContainSubstring("master_link_status:up"))
			g.Expect(c.Do(context.Background(), "CLIENT", "KILL", "TYPE", "master").Err()).To(Succeed())
			g.Eventually(func() string { return c.Info(context.Background(), "replication").Val() }, "1m").Should(ContainSubstring("master_link_status:up"))
		}
		g.Expect(replicas).To(Equal(2))
		g.Expect(kubectl(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance="+name, "-o", "jsonpath={.items[*].status.containerStatuses[0].restartCount}")).To(Equal("0 0 0 0"), "no pod restarted")
		expectRedisReady(t, ns, name, 2)
	})

	t.Run("the operator's user cannot read keys or flush", func(t *testing.T) {
		g := NewWithT(t)
		operator := secretValue(t, ns, name+"-operator", "password")
		for ip, admin := range nodeClients(t, ns, name, "multi-operator", operator) {
			g.Expect(admin.ClusterInfo(context.Background()).Err()).To(Succeed(), ip)
			g.Expect(admin.Get(context.Background(), "from-pod").Err()).To(MatchError(ContainSubstring("NOPERM")), ip)
			g.Expect(admin.FlushAll(context.Background()).Err()).To(MatchError(ContainSubstring("NOPERM")), ip)
		}
	})

	t.Run("the operator's user cannot widen itself, and a lost one is replaced", func(t *testing.T) {
		g := NewWithT(t)
		lost := secretValue(t, ns, name+"-operator", "password")
		for ip, admin := range nodeClients(t, ns, name, "multi-operator", lost) {
			g.Expect(admin.Do(context.Background(), "ACL", "SETUSER", "multi-operator", "+@all").Err()).To(MatchError(ContainSubstring("NOPERM")), ip)
		}
		kubectl(t, "delete", "secret", "-n", ns, name+"-operator")
		g.Eventually(func() string {
			out, _ := run("events", "-n", ns, "--for", "rediscluster/"+name)
			return out
		}, "1m").Should(ContainSubstring("OperatorUserReset"))
		made := secretValue(t, ns, name+"-operator", "password")
		g.Expect(made).NotTo(Equal(lost))
		for ip, admin := range nodeClients(t, ns, name, "multi-operator", made) {
			g.Expect(admin.ClusterInfo(context.Background()).Err()).To(Succeed(), ip)
		}
		for ip, admin := range nodeClients(t, ns, name, "multi-operator", lost) {
			g.Expect(admin.Ping(context.Background()).Err()).To(MatchError(ContainSubstring("WRONGPASS")), ip)
		}
		expectRedisReady(t, ns, name, 2)
	})

	t.Run("another cluster may not use this one's generated Secrets", func(t *testing.T) {
		g := NewWithT(t)
		const deputy = "deputy"
		manifest := fmt.Sprintf(`{"apiVersion":"cache.example.com/v1","kind":"RedisCluster","metadata":{"name":%q,"namespace":%q},"spec":{"size":1,"auth":{"passwordSecret":{"name":%q,"key":"password"}}}}`, deputy, ns, secret)
		applyJSON(t, manifest)
		g.Eventually(func() string {
			out, _ := run("get", "rediscluster", "-n", ns, deputy, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`)
			return out
		}, "1m").Should(Equal("SecretGenerated"))
		_, err := run("get", "secret", "-n", ns, deputy+"-acl")
		g.Expect(err).To(HaveOccurred(), "no users file is written for the refused cluster")
		_, err = run("get", "statefulset", "-n", ns, deputy)
		g.Expect(err).To(HaveOccurred(), "no node runs with another cluster's password")
		kubectl(t, "delete", "rediscluster", "-n", ns, deputy)
	})
}
