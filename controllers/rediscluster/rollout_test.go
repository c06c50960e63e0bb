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
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8sevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testclock"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// setRedisConfig changes spec.redisConfig: a pod template change.
func setRedisConfig(g *WithT, c client.Client, rc *cachev1.RedisCluster, key, value string) {
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"redisConfig":{"`+key+`":"`+value+`"}}}`))
	g.Expect(c.Patch(context.Background(), rc, patch)).To(Succeed())
}

// expectRolledOut waits, running the kubelet, until every pod runs the
// StatefulSet's current revision, the rollout is over and the cluster is
// Ready, and every node runs with key = value.
func expectRolledOut(g *WithT, k *kubelet, rc *cachev1.RedisCluster, key, value string) {
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		k.sync(g)
		sts := &appsv1.StatefulSet{}
		g.Expect(k.c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
		g.Expect(sts.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--"+key, value), "the template has the change")
		pods := &corev1.PodList{}
		g.Expect(k.c.List(ctx, pods, client.InNamespace(rc.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": rc.Name})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(int(rediscluster.Replicas(rc))))
		for _, p := range pods.Items {
			g.Expect(p.Labels).To(HaveKeyWithValue(appsv1.ControllerRevisionHashLabelKey, revision(sts)), p.Name)
		}
		g.Expect(k.c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(rc.Status.Rollout).To(BeNil())
	}, 3*time.Minute, 200*time.Millisecond).Should(Succeed())
	expectReady(g, k, rc, rc.Spec.Size)
	for _, s := range k.servers {
		got, err := s.Client().ConfigGet(ctx, key).Result()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got[key]).To(Equal(value), s.Addr())
	}
}

func TestRollingChangeRestartsReplicasOnlyAndLosesNothing(t *testing.T) {
	g, c, k, rc := readyCluster(t, "rolling", 2, func(w *builders.RedisClusterWrapper) { w.ReplicasPerMaster(1) })
	ns := rc.Namespace
	g.Expect(rc.Status.Masters).To(HaveLen(2))
	sts := &appsv1.StatefulSet{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), sts)).To(Succeed())
	g.Expect(sts.Spec.UpdateStrategy.Type).To(Equal(appsv1.OnDeleteStatefulSetStrategyType))

	data := k.cluster(t)
	load := redistest.StartLoad(data, "rolling")
	created := testenv.Events(g, c, ns, rc.Name)
	g.Expect(created).NotTo(ContainElement(ContainSubstring("Rollout")), "creating the cluster rolls nothing out")
	before := len(created)
	setRedisConfig(g, c, rc, "maxmemory-policy", "allkeys-lru")
	expectRolledOut(g, k, rc, "maxmemory-policy", "allkeys-lru")

	// Every node restarted once, and each was a replica when its pod went:
	// the masters had failed over first.
	g.Expect(k.restarted).To(HaveLen(4))
	demoted := 0
	for _, r := range k.restarted {
		g.Expect(r.role).To(Equal("slave"), "%s was deleted as a %s", r.pod, r.role)
		if r.wasMaster {
			demoted++
		}
	}
	g.Expect(demoted).To(Equal(2), "both masters were failed over before they went")
	// Their clients had the grace to follow MOVED to the new masters. The
	// events carry the moments of the failover (once every node saw it)
	// and of the deletion; the simulated kubelet's polls, slowed by a
	// loaded machine, could not time them.
	// Events are sent on their own, after the action: the last restart's
	// may still be on its way.
	g.Eventually(func(g Gomega) { expectHandoverGrace(g, testenv.EventObjects(g, c, ns, rc.Name), 2) }, 10*time.Second, 200*time.Millisecond).Should(Succeed())
	events := strings.Join(testenv.Events(g, c, ns, rc.Name)[before:], "\n")
	g.Expect(strings.Count(events, "Normal FailedOver")).To(Equal(2), events)
	g.Expect(strings.Count(events, "Normal PodRestarted")).To(Equal(4), events)
	g.Expect(events).To(ContainSubstring("Normal RolloutFinished"))
	g.Expect(testutil.ToFloat64(rediscluster.Failovers.WithLabelValues(ns, rc.Name, "rollout"))).To(Equal(2.0))
	g.Expect(testutil.ToFloat64(rediscluster.Failovers.WithLabelValues(ns, rc.Name, "redis"))).To(BeZero(), "the operator's own failovers are not Redis's")
	g.Expect(testutil.ToFloat64(rediscluster.ClusterState.WithLabelValues(ns, rc.Name, "ok"))).To(Equal(1.0))
	g.Expect(seriesOf(g, rediscluster.RolloutStep, ns, rc.Name)).To(BeZero(), "no rollout in progress")
	g.Expect(events).NotTo(ContainSubstring("Warning"))
	g.Expect(load.ExpectNoLoss(g, k.cluster(t))).To(BeNumerically(">", 0))
	t.Logf("longest time in which writes failed: %s", load.LongestOutage())
	g.Expect(load.LongestOutage()).To(BeNumerically("<", 5*time.Second))
}

// TestRolloutRestartsPodsThatCannotStartFirst: a replica's pod cannot
// start a container, so it is not Ready; fixing the template rolls out,
// and that pod, which serves nothing, is restarted first instead of waited
// for. An exporter that cannot start leaves the node reachable and the
// cluster settled; a redis container that keeps crashing leaves the node
// unreachable, and the cluster cannot settle without the restart.
func TestRolloutRestartsPodsThatCannotStartFirst(t *testing.T) {
	for _, tc := range []struct {
		name, container, why, readyReason, event string
	}{
		{name: "unpulled", container: "exporter", why: "ImagePullBackOff", readyReason: cachev1.ReasonNodesNotReady,
			event: "Normal PodRestarted: Restarting replica unpulled-1"},
		{name: "crashing", container: "redis", why: "CrashLoopBackOff", readyReason: cachev1.ReasonNodesUnreachable,
			event: "Normal PodRestarted: Restarting crashing-1, which cannot start (redis: CrashLoopBackOff)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, c, k, rc := readyCluster(t, tc.name, 1, func(w *builders.RedisClusterWrapper) { w.ReplicasPerMaster(1) })
			stuck := rc.Name + "-1"
			g.Expect(rc.Status.Masters).NotTo(ContainElement(stuck), "the stuck pod is a replica's")
			k.cannotStart[1] = corev1.ContainerStatus{Name: tc.container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: tc.why}}}
			g.Eventually(func(g Gomega) {
				k.sync(g)
				g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
				g.Expect(conditions.Get(rc, conditions.Ready).Reason).To(Equal(tc.readyReason))
			}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

			setRedisConfig(g, c, rc, "maxmemory-policy", "allkeys-lru")
			g.Eventually(func(g Gomega) {
				k.sync(g)
				g.Expect(k.restarted).NotTo(BeEmpty())
			}, time.Minute, 200*time.Millisecond).Should(Succeed())
			g.Expect(k.restarted[0].pod).To(Equal(stuck), "the pod that cannot start goes first")
			// The new template's pod starts.
			delete(k.cannotStart, 1)
			expectRolledOut(g, k, rc, "maxmemory-policy", "allkeys-lru")
			g.Expect(k.restarted).To(HaveLen(2), "each pod restarted once")
			g.Expect(testenv.Events(g, c, rc.Namespace, rc.Name)).To(ContainElement(HavePrefix(tc.event)))
		})
	}
}

// readyCluster starts the controller and a RedisCluster of size masters
// named name, built by with, and waits until it is Ready.
func readyCluster(t *testing.T, name string, size int32, with func(*builders.RedisClusterWrapper)) (*WithT, client.Client, *kubelet, *cachev1.RedisCluster) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	w := builders.RedisCluster(ns, name).Size(size)
	if with != nil {
		with(w)
	}
	rc := w.Obj()
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, size)
	return g, c, k, rc
}

func TestRollingChangeEvacuatesMastersWithoutReplicaOrVolume(t *testing.T) {
	g, c, k, rc := readyCluster(t, "evacuating", 2, nil)
	ns := rc.Namespace
	data := k.cluster(t)
	redistest.WriteKeys(g, data)

	setRedisConfig(g, c, rc, "maxmemory-policy", "volatile-lru")
	expectRolledOut(g, k, rc, "maxmemory-policy", "volatile-lru")
	g.Expect(k.restarted).To(HaveLen(2))
	events := strings.Join(testenv.Events(g, c, ns, rc.Name), "\n")
	g.Expect(events).To(ContainSubstring("Moving the slots of evacuating-0 to the other masters"))
	g.Expect(events).NotTo(ContainSubstring("DataLost"))
	g.Expect(testutil.ToFloat64(rediscluster.SlotsMigrated.WithLabelValues(ns, rc.Name))).To(BeNumerically(">=", 16384), "every slot moved away and back")
	redistest.ExpectKeys(g, k.cluster(t))
}

func TestDataLossIsReportedNotHidden(t *testing.T) {
	g, c, k, rc := readyCluster(t, "fragile", 2, nil)
	ns := rc.Namespace

	// Every pod goes at once, without volumes: the data is gone.
	g.Expect(c.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns))).To(Succeed())
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Warning DataLost")))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	expectReady(g, k, rc, 2)
	lost := conditions.Get(rc, cachev1.ConditionDataLost)
	g.Expect(lost).NotTo(BeNil())
	g.Expect(lost.Message).To(ContainSubstring("keys are lost"))
}

func TestStatefulSetScaledToZeroIsCorrected(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	rc := builders.RedisCluster(ns, "stubborn").Size(2).Obj()
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	sts := &appsv1.StatefulSet{}
	g.Eventually(func() error { return c.Get(context.Background(), client.ObjectKeyFromObject(rc), sts) }).Should(Succeed())
	// kubectl scale --replicas=0 on the StatefulSet.
	g.Expect(c.SubResource("scale").Update(context.Background(), sts, client.WithSubResourceBody(&autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: sts.Name, Namespace: ns},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 0},
	}))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), sts)).To(Succeed())
		g.Expect(*sts.Spec.Replicas).To(Equal(int32(2)))
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Normal StatefulSetUpdated")))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestStalledRolloutIsReportedAndResumes(t *testing.T) {
	clock := &testclock.Offset{}
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), reconciler.Options{Image: options.Image, Clock: clock}, testenv.ManagerOptions{})
	rc := builders.RedisCluster(ns, "stalling").Size(1).ReplicasPerMaster(1).Obj()
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 1)

	// The first pod the rollout restarts does not come back.
	k.held[0], k.held[1] = true, true
	setRedisConfig(g, c, rc, "maxmemory-policy", "allkeys-lru")
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(k.restarted).To(HaveLen(1))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	clock.Set(time.Now().Add(10 * time.Minute))
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		ready := conditions.Get(rc, conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(cachev1.ReasonRolloutStalled))
		g.Expect(ready.Message).To(ContainSubstring(k.restarted[0].pod))
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Warning RolloutStalled")))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())

	// The cause goes away: the rollout resumes and finishes.
	k.held = map[int32]bool{}
	expectRolledOut(g, k, rc, "maxmemory-policy", "allkeys-lru")
}

// expectHandoverGrace checks that the rollout failed n masters over, each
// recorded by the operator as its own (not as Redis's), and that each
// one's pod was deleted no sooner than the handover grace after its
// failover. The pod is each event's related object: two events about
// different pods are never counted as one, shown with the first one's note.
func expectHandoverGrace(g Gomega, events []eventsv1.Event, n int) {
	failedOver := map[string]time.Time{}
	for _, e := range events {
		if e.Reason != cachev1.ReasonFailedOver {
			continue
		}
		g.Expect(e.Note).To(HavePrefix("Failed over "), "the rollout's failovers are the operator's, not Redis's")
		g.Expect(e.Related).NotTo(BeNil(), e.Note)
		failedOver[e.Related.Name] = e.EventTime.Time
	}
	g.Expect(failedOver).To(HaveLen(n), "events:\n%s", describeEvents(events))
	restarted := 0
	for _, e := range events {
		if e.Reason != cachev1.ReasonPodRestarted {
			continue
		}
		g.Expect(e.Related).NotTo(BeNil(), e.Note)
		g.Expect(e.Related.Kind).To(Equal("Pod"), e.Note)
		pod := e.Related.Name
		at, ok := failedOver[pod]
		if !ok {
			continue // a replica's restart
		}
		g.Expect(e.Note).To(ContainSubstring("after its failover"), "%s is restarted as a failed-over master", pod)
		g.Expect(e.EventTime.Sub(at)).To(BeNumerically(">=", rediscluster.HandoverGrace), "%s ran as a replica before it went", pod)
		restarted++
	}
	g.Expect(restarted).To(Equal(n), "each failed-over master restarted after its failover; events:\n%s", describeEvents(events))
}

// describeEvents lists events one a line, for a failure message.
func describeEvents(events []eventsv1.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "%s %s %s %s\n", e.EventTime.Format("15:04:05.000"), e.Reason, e.Action, e.Note)
	}
	return b.String()
}

// A restart deletes exactly the pod the rollout read: one made again under
// the same name since then, which the rollout has not looked at, stays.
func TestRollingRestartDeletesOnlyThePodItRead(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	rc := &cachev1.RedisCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc"},
		Status:     cachev1.RedisClusterStatus{Rollout: &cachev1.RolloutStatus{Total: 3}},
	}
	newPod := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rediscluster.PodName(rc, 0)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis"}}},
		}
	}
	key := types.NamespacedName{Namespace: ns, Name: rediscluster.PodName(rc, 0)}
	read := newPod()
	g.Expect(env.Client.Create(ctx, read)).To(Succeed())
	// The pod is made again (a pod on no node goes at once) after the
	// rollout read it.
	g.Expect(env.Client.Delete(ctx, read.DeepCopy())).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(ctx, key, &corev1.Pod{}) }).Should(Satisfy(apierrors.IsNotFound))
	replacement := newPod()
	g.Expect(env.Client.Create(ctx, replacement)).To(Succeed())
	rec := k8sevents.NewFakeRecorder(10)

	g.Expect(rediscluster.Restart(ctx, env.Client, events.NewRecorder(rec), rc, read)).To(Succeed(), "the pod read is gone: done")
	current := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, key, current)).To(Succeed())
	g.Expect(current.UID).To(Equal(replacement.UID))
	g.Expect(current.DeletionTimestamp).To(BeNil(), "the replacement is not deleted")

	g.Expect(rediscluster.Restart(ctx, env.Client, events.NewRecorder(rec), rc, current)).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(ctx, key, &corev1.Pod{}) }).Should(Satisfy(apierrors.IsNotFound), "the pod read is deleted")
	g.Expect(rec.Events).To(HaveLen(2), "each restart is recorded")
}
