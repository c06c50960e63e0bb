package rediscluster_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// nodeIDs are the IDs a node lists in CLUSTER NODES, and what each serves.
func nodeIDs(g Gomega, s *redistest.Server) map[string]string {
	text, err := s.Client().ClusterNodes(context.Background()).Result()
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		out[f[0]] = strings.Join(f[8:], " ")
	}
	return out
}

// expectBusIsolated waits for BusIsolated with status and reason.
func expectBusIsolated(g *WithT, c client.Client, rc *cachev1.RedisCluster, status metav1.ConditionStatus, reason string) {
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		cond := conditions.Get(rc, cachev1.ConditionBusIsolated)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(status))
		g.Expect(cond.Reason).To(Equal(reason))
	}).Should(Succeed())
}

// A tenant controls its own cluster's image and default user: it tells
// one of its nodes to MEET a node of another namespace's cluster. The
// victim's bus requires a certificate of its own CA, so it never lists
// the intruder, and its slots stay where they were.
func TestAnotherClustersNodeCannotJoinTheBus(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	victim := builders.RedisCluster(ns, "victim").Size(1).ReplicasPerMaster(1).Obj()
	g.Expect(c.Create(ctx, victim)).To(Succeed())
	otherNS := testenv.Get(t).Namespace(t)
	attacker := builders.RedisCluster(otherNS, "attacker").Size(1).Obj()
	g.Expect(c.Create(ctx, attacker)).To(Succeed())
	kv, ka := newKubelet(t, c, ns, victim.Name), newKubelet(t, c, otherNS, attacker.Name)
	expectReady(g, kv, victim, 1)
	expectReady(g, ka, attacker, 1)
	for _, rc := range []*cachev1.RedisCluster{victim, attacker} {
		expectBusIsolated(g, c, rc, metav1.ConditionTrue, cachev1.ReasonBusCertificate)
		bus := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: rc.Name + "-bus"}, bus)).To(Succeed())
		g.Expect(metav1.IsControlledBy(bus, rc)).To(BeTrue())
		np := &networkingv1.NetworkPolicy{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), np)).To(Succeed())
		g.Expect(metav1.IsControlledBy(np, rc)).To(BeTrue())
	}

	// The replica follows its master over the TLS replication link.
	g.Eventually(func(g Gomega) {
		info, err := kv.servers[1].Client().Info(ctx, "replication").Result()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(info).To(ContainSubstring("role:slave"))
		g.Expect(info).To(ContainSubstring("master_link_status:up"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	data := kv.cluster(t)
	redistest.WriteKeys(g, data)

	before := map[int32]map[string]string{}
	for i, s := range kv.servers {
		before[i] = nodeIDs(g, s)
	}
	// The attacker's tenant logs in as its default user; Redis 7 takes
	// the bus port as MEET's third argument.
	intruder := ka.servers[0].ClientAs("", ka.password(g))
	for _, target := range []int32{0, 1} {
		g.Expect(intruder.Do(ctx, "CLUSTER", "MEET", kv.ip(target), 6379, 16379).Err()).To(Succeed())
	}
	g.Consistently(func(g Gomega) {
		for i, s := range kv.servers {
			g.Expect(nodeIDs(g, s)).To(Equal(before[i]), "node %d lists only its own cluster, slots unchanged", i)
		}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(victim), victim)).To(Succeed())
		g.Expect(conditions.IsTrue(victim, conditions.Ready)).To(BeTrue())
	}, 8*time.Second, 250*time.Millisecond).Should(Succeed())
	redistest.ExpectKeys(g, data)
}

// A cluster whose StatefulSet runs a plain bus keeps it: its nodes cannot
// move to a TLS bus one by one. BusIsolated says so and how to get it.
func TestPlainBusClusterKeepsItsBus(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	rc := builders.RedisCluster(ns, "older").Size(1).Obj()
	g.Expect(env.Client.Create(ctx, rc)).To(Succeed())
	// As an operator without bus isolation left it.
	sts := rediscluster.DesiredStatefulSet(rc, rediscluster.Images{Redis: options.Image, Exporter: options.ExporterImage}, rediscluster.Replicas(rc), false)
	g.Expect(controllerutil.SetControllerReference(rc, sts, env.Scheme)).To(Succeed())
	g.Expect(env.Client.Create(ctx, sts)).To(Succeed())
	args := slices.Clone(sts.Spec.Template.Spec.Containers[0].Args)

	d := rediscluster.Descriptor()
	env.StartManager(t, testenv.ManagerOptions{Controllers: []reconciler.Descriptor{d}}, func(mgr ctrl.Manager) error { return d.Setup(mgr, options) })
	// The StatefulSet exists from the start: the kubelet starts nodes once
	// the status names the clients' password they must accept.
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(rc.Status.Auth).NotTo(BeNil())
	}).Should(Succeed())
	k := newKubelet(t, env.Client, ns, rc.Name)
	expectReady(g, k, rc, 1)
	expectBusIsolated(g, env.Client, rc, metav1.ConditionFalse, cachev1.ReasonBusPlainSinceCreation)
	g.Expect(conditions.Get(rc, cachev1.ConditionBusIsolated).Message).To(ContainSubstring("create a new RedisCluster"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
	g.Expect(sts.Spec.Template.Spec.Containers[0].Args).To(Equal(args))
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "older-bus"}, &corev1.Secret{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no bus certificate is made: %v", err)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rc), &networkingv1.NetworkPolicy{})).To(Succeed(), "the NetworkPolicy is its isolation")
}

// With spec.tls the bus uses the user's certificate: BusIsolated says it
// trusts the user's CA, even before that Secret exists.
func TestUserTLSBusTrustsTheUsersCA(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	rc := builders.RedisCluster(ns, "usertls").Size(1).TLS("usertls-cert").Obj()
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	expectBusIsolated(g, c, rc, metav1.ConditionFalse, cachev1.ReasonBusTrustsUserCA)
}

// Running nodes trust only the bus CA they started with, whose key is not
// kept. A deleted <name>-bus is made again from the copy in
// <name>-operator, so that a node that restarts still joins the others;
// a deleted <name>-operator gets the copy back.
func TestDeletedBusSecretIsMadeAgainFromItsCopy(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	rc := builders.RedisCluster(ns, "kept-bus").Size(1).Obj()
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	expectReady(g, newKubelet(t, c, ns, rc.Name), rc, 1)
	busKey := client.ObjectKey{Namespace: ns, Name: rediscluster.BusSecretName(rc)}
	operatorKey := client.ObjectKey{Namespace: ns, Name: rediscluster.OperatorSecretName(rc)}
	original := &corev1.Secret{}
	g.Expect(c.Get(ctx, busKey, original)).To(Succeed())
	expectCopy := func(g Gomega, bus map[string][]byte) {
		operator := &corev1.Secret{}
		g.Expect(c.Get(ctx, operatorKey, operator)).To(Succeed())
		kept, ok := rediscluster.BusCopy(operator)
		g.Expect(ok).To(BeTrue(), "%s keeps a copy of %s", operatorKey.Name, busKey.Name)
		g.Expect(kept).To(Equal(bus))
	}
	g.Eventually(func(g Gomega) { expectCopy(g, original.Data) }).Should(Succeed())

	g.Expect(c.Delete(ctx, original)).To(Succeed())
	g.Eventually(func(g Gomega) {
		made := &corev1.Secret{}
		g.Expect(c.Get(ctx, busKey, made)).To(Succeed())
		g.Expect(made.UID).NotTo(Equal(original.UID))
		g.Expect(made.Data).To(Equal(original.Data), "the same CA, certificate and key")
		g.Expect(metav1.IsControlledBy(made, rc)).To(BeTrue())
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Normal " + cachev1.ReasonBusCertificateRecovered)))
	}).Should(Succeed())

	operator := &corev1.Secret{}
	g.Expect(c.Get(ctx, operatorKey, operator)).To(Succeed())
	g.Expect(c.Delete(ctx, operator)).To(Succeed())
	g.Eventually(func(g Gomega) {
		made := &corev1.Secret{}
		g.Expect(c.Get(ctx, operatorKey, made)).To(Succeed())
		g.Expect(made.UID).NotTo(Equal(operator.UID))
		expectCopy(g, original.Data)
	}).Should(Succeed())
	g.Expect(testenv.Events(g, c, ns, rc.Name)).NotTo(ContainElement(ContainSubstring(cachev1.ReasonBusCertificateReplaced)))
}
