package rediscluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/rediscanary"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// Enabling the canary makes <name>-canary, which no pod mounts, and the
// canary user on every node; a rolling change, whose masters fail over
// coordinated, loses nothing; a master that loses its keys after the
// replica acknowledged them sets WritesLost, with a Warning event and the
// shard's counter.
func TestCanaryReportsLostWritesOnly(t *testing.T) {
	g, c, k, rc := readyCluster(t, "canary", 1, func(w *builders.RedisClusterWrapper) {
		w.ReplicasPerMaster(1).Canary(time.Second)
	})
	ctx := context.Background()
	ns := rc.Namespace
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rediscluster.CanarySecretName(rc)}, secret)).To(Succeed())
	password := string(secret.Data[rediscluster.PasswordKey])
	g.Expect(password).NotTo(BeEmpty())
	sts := &appsv1.StatefulSet{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
	g.Expect(sts.Spec.Template.String()).NotTo(ContainSubstring(rediscluster.CanarySecretName(rc)), "no pod mounts the canary's Secret")
	for _, s := range k.servers {
		g.Expect(s.ClientAs(redisadmin.CanaryUser, password).Ping(ctx).Err()).To(Succeed())
	}
	lost := func() float64 {
		return testutil.ToFloat64(rediscanary.WritesLost.WithLabelValues(ns, rc.Name, "0"))
	}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		cond := conditions.Get(rc, cachev1.ConditionWritesLost)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(BeEquivalentTo("False"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	// The rollout's status carries the canary's counts while it runs.
	sawRolloutCanary := make(chan bool, 1)
	stop := make(chan struct{})
	go func() {
		defer close(sawRolloutCanary)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			seen := &cachev1.RedisCluster{}
			if c.Get(ctx, client.ObjectKeyFromObject(rc), seen) == nil && seen.Status.Rollout != nil && seen.Status.Rollout.Canary != nil {
				sawRolloutCanary <- true
				return
			}
		}
	}()
	setRedisConfig(g, c, rc, "maxmemory-samples", "7")
	expectRolledOut(g, k, rc, "maxmemory-samples", "7")
	close(stop)
	g.Expect(<-sawRolloutCanary).To(BeTrue(), "status.rollout.canary during the rollout")
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
	g.Expect(conditions.IsTrue(rc, cachev1.ConditionWritesLost)).To(BeFalse(), "a coordinated failover loses nothing: %+v", rc.Status.Conditions)
	g.Expect(lost()).To(BeZero())

	// The master loses what its replica acknowledged.
	for _, s := range k.servers {
		if role(g, s) == "master" {
			g.Expect(s.Client().FlushAll(ctx).Err()).To(Succeed())
		}
	}
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		cond := conditions.Get(rc, cachev1.ConditionWritesLost)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(BeEquivalentTo("True"))
		g.Expect(cond.Reason).To(Equal(cachev1.ReasonAcknowledgedWritesLost))
		g.Expect(cond.Message).To(ContainSubstring("on shard 0"))
		events := strings.Join(testenv.Events(g, c, ns, rc.Name), "\n")
		g.Expect(events).To(ContainSubstring("Warning " + cachev1.ReasonAcknowledgedWritesLost))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(lost()).To(BeNumerically(">", 0))
	g.Expect(strings.Join(testenv.Events(g, c, ns, rc.Name), "\n")).NotTo(ContainSubstring(password))
	g.Expect(fmt.Sprintf("%+v", rc.Status)).NotTo(ContainSubstring(password))

	// Disabling the canary drops its condition, series and user.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
	rc.Spec.Monitoring.Canary.Enabled = false
	g.Expect(c.Update(ctx, rc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(conditions.Get(rc, cachev1.ConditionWritesLost)).To(BeNil())
		for _, s := range k.servers {
			g.Expect(s.ClientAs(redisadmin.CanaryUser, password).Ping(ctx).Err()).To(HaveOccurred())
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(rediscanary.WritesLost.DeleteLabelValues(ns, rc.Name, "0")).To(BeFalse())
}
