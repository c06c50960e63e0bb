package rediscluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/samples"
	"github.com/multi-operator/multi-operator/test/framework/testclock"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, cachev1.AddToScheme)) }

// options are the controller's options in every test.
var options = reconciler.Options{Image: "redis:test", ExporterImage: "exporter:test"}

// kubelet plays the StatefulSet controller and the kubelet, which envtest
// lacks: for each ordinal below the StatefulSet's replicas it runs a real
// redis-server on its own loopback IP, port 6379 like a pod, and creates the
// Pod with that IP; above, it deletes the Pod and kills the process at once.
// So if the operator shrank the StatefulSet before draining, keys would be lost.
type kubelet struct {
	t        *testing.T
	c        client.Client
	ns, name string
	prefix   string
	// noServer creates Pods whose IP nothing listens on.
	noServer bool
	servers  map[int32]*redistest.Server
	// slotsAtRemoval records, per removed pod, the slots its node still
	// served when the StatefulSet shrank.
	slotsAtRemoval map[string]int
	// restarted records the pods the operator deleted, in order, with the
	// role their node had then.
	restarted []restart
	// held are ordinals whose deleted pods are not made again, as when an
	// image cannot be pulled.
	held map[int32]bool
	// unready are ordinals whose pods run their node but are not Ready, as
	// when the exporter's image cannot be pulled.
	unready map[int32]bool
	// wasMaster are the ordinals whose node sync saw as a master serving
	// slots.
	wasMaster map[int32]bool
	// cannotStart are ordinals whose pods are not Ready because a container
	// of theirs waits for good (its name and reason, such as exporter and
	// ImagePullBackOff), and has for a minute. When it is the redis
	// container, the node does not run.
	cannotStart map[int32]corev1.ContainerStatus
}

// restart is a pod the operator deleted.
type restart struct {
	pod, role string
	// wasMaster is whether sync had seen its node as a master serving
	// slots.
	wasMaster bool
}

// revision names the StatefulSet's pod template, as the StatefulSet
// controller's ControllerRevision does.
func revision(sts *appsv1.StatefulSet) string {
	raw, _ := json.Marshal(sts.Spec.Template)
	h := fnv.New32a()
	_, _ = h.Write(raw)
	return fmt.Sprintf("%s-%x", sts.Name, h.Sum32())
}

// syncRevision plays the StatefulSet controller's status: the revision
// that new pods get (OnDelete: existing pods keep theirs).
func (k *kubelet) syncRevision(g Gomega, sts *appsv1.StatefulSet) {
	rev := revision(sts)
	if sts.Status.UpdateRevision == rev && sts.Status.ObservedGeneration == sts.Generation {
		return
	}
	sts.Status.UpdateRevision, sts.Status.ObservedGeneration = rev, sts.Generation
	sts.Status.Replicas = *sts.Spec.Replicas
	g.Expect(k.c.Status().Update(context.Background(), sts)).To(Succeed())
}

// podGone reports whether the pod of ordinal i was deleted.
func (k *kubelet) podGone(g Gomega, i int32) bool {
	err := k.c.Get(context.Background(), client.ObjectKey{Namespace: k.ns, Name: k.podName(i)}, &corev1.Pod{})
	if apierrors.IsNotFound(err) {
		return true
	}
	g.Expect(err).NotTo(HaveOccurred())
	return false
}

// role is a node's replication role: master or slave.
func role(g Gomega, s *redistest.Server) string {
	info, err := s.PollingClient().Info(context.Background(), "replication").Result()
	g.Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "role:"); ok {
			return v
		}
	}
	return ""
}

// podNetworks are the kubelets' address prefixes given out so far: two
// kubelets of one test process never share one, or a node of one would
// take the other's address.
var podNetworks = struct {
	sync.Mutex
	used map[string]bool
}{used: map[string]bool{}}

// podNetwork is a loopback prefix, 127.a.b., that no other kubelet of
// this process has: random, so that parallel test processes rarely meet.
func podNetwork() string {
	podNetworks.Lock()
	defer podNetworks.Unlock()
	for {
		p := fmt.Sprintf("127.%d.%d.", 1+rand.IntN(250), 1+rand.IntN(250))
		if !podNetworks.used[p] {
			podNetworks.used[p] = true
			return p
		}
	}
}

func newKubelet(t *testing.T, c client.Client, ns, name string) *kubelet {
	redistest.Require(t)
	return &kubelet{
		t: t, c: c, ns: ns, name: name,
		prefix:         podNetwork(),
		servers:        map[int32]*redistest.Server{},
		slotsAtRemoval: map[string]int{},
		held:           map[int32]bool{},
		unready:        map[int32]bool{},
		wasMaster:      map[int32]bool{},
		cannotStart:    map[int32]corev1.ContainerStatus{},
	}
}

func (k *kubelet) ip(i int32) string { return fmt.Sprintf("%s%d", k.prefix, 10+i) }

func (k *kubelet) podName(i int32) string { return fmt.Sprintf("%s-%d", k.name, i) }

func (k *kubelet) sync(g Gomega) {
	ctx := context.Background()
	sts := &appsv1.StatefulSet{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: k.name}, sts); err != nil {
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		return
	}
	k.syncRevision(g, sts)
	n := *sts.Spec.Replicas
	for i := range n {
		gone := k.podGone(g, i)
		if s := k.servers[i]; s != nil && gone {
			// The operator deleted the pod: its process stops, and without
			// a volume its data and cluster identity go with it.
			k.restarted = append(k.restarted, restart{pod: k.podName(i), role: role(g, s), wasMaster: k.wasMaster[i]})
			s.Stop()
			delete(k.servers, i)
			delete(k.wasMaster, i)
		}
		// A node starts as a master without slots until it is made a
		// replica: only one serving slots counts.
		if s := k.servers[i]; s != nil && role(g, s) == "master" && servedSlots(g, s) > 0 {
			k.wasMaster[i] = true
		}
		if k.held[i] && k.servers[i] == nil {
			continue
		}
		if k.cannotStart[i].Name == "redis" {
			// Its node does not run, but its pod stays, not Ready.
			if s := k.servers[i]; s != nil {
				s.Stop()
				delete(k.servers, i)
			} else if gone {
				k.restarted = append(k.restarted, restart{pod: k.podName(i)})
			}
			k.ensurePod(g, sts, i, gone)
			continue
		}
		if !k.noServer && k.servers[i] == nil {
			k.servers[i] = redistest.StartWith(k.t, k.ip(i), 6379, k.mounts(g, sts))
		}
		k.ensurePod(g, sts, i, gone)
	}
	for i, s := range k.servers {
		if i < n {
			continue
		}
		k.slotsAtRemoval[k.podName(i)] = servedSlots(g, s)
		s.Stop()
		delete(k.servers, i)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: k.podName(i)}}
		g.Expect(client.IgnoreNotFound(k.c.Delete(ctx, pod, client.GracePeriodSeconds(0)))).To(Succeed())
	}
}

// mounts reads what a pod of sts mounts, as the kubelet projects Secret
// volumes: the users file from the acl volume and, with TLS, the
// certificate, or the bus certificate with the TLS port the arguments
// name. Clients log in with the password in the cluster's status.
func (k *kubelet) mounts(g Gomega, sts *appsv1.StatefulSet) redistest.Options {
	ctx := context.Background()
	var opts redistest.Options
	secret := func(name string) *corev1.Secret {
		s := &corev1.Secret{}
		g.Expect(k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, s)).To(Succeed())
		return s
	}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		switch {
		case v.Secret == nil:
		case v.Name == "acl":
			opts.Config = string(secret(v.Secret.SecretName).Data[rediscluster.ACLKey])
		case v.Name == "tls":
			opts.TLS = certificate(secret(v.Secret.SecretName))
		case v.Name == "bus":
			opts.BusTLS = certificate(secret(v.Secret.SecretName))
		}
	}
	g.Expect(opts.Config).NotTo(BeEmpty(), "every pod reads its users from the acl Secret")
	args := sts.Spec.Template.Spec.Containers[0].Args
	if opts.BusTLS != nil {
		tlsPort, _ := argValue(args, "--tls-port")
		port, err := strconv.Atoi(tlsPort)
		g.Expect(err).NotTo(HaveOccurred(), "a pod with the bus certificate has a TLS port")
		opts.BusTLSPort = port
		busPort, _ := argValue(args, "--cluster-port")
		g.Expect(busPort).To(Equal("16379"), "the bus stays at the client port plus 10000")
	}
	opts.Args = tuning(args)
	opts.Password = k.password(g)
	return opts
}

// certificate is a TLS Secret's files.
func certificate(s *corev1.Secret) *redistest.Certificate {
	return &redistest.Certificate{Cert: s.Data["tls.crt"], Key: s.Data["tls.key"], CA: s.Data["ca.crt"]}
}

// layoutArgs are the redis-server arguments that place a node in its pod
// (ports, files, cluster mode, TLS files); a test server sets its own.
var layoutArgs = []string{"--port", "--cluster-enabled", "--cluster-config-file", "--cluster-announce-ip",
	"--cluster-node-timeout", "--dir", "--appendonly", "--protected-mode", "--tls-port", "--tls-cluster",
	"--tls-replication", "--tls-auth-clients", "--tls-cert-file", "--tls-key-file", "--tls-ca-cert-file", "--cluster-port"}

// tuning returns the arguments of a pod's redis-server beyond the config
// file and the layout ones: those of spec.redisConfig.
func tuning(args []string) []string {
	var out []string
	for i := 1; i+1 < len(args); i += 2 {
		if !slices.Contains(layoutArgs, args[i]) {
			out = append(out, args[i], args[i+1])
		}
	}
	return out
}

// password is the clients' password, from the Secret the status names.
func (k *kubelet) password(g Gomega) string {
	ctx := context.Background()
	rc := &cachev1.RedisCluster{}
	g.Expect(k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: k.name}, rc)).To(Succeed())
	if rc.Status.Auth == nil {
		return ""
	}
	s := &corev1.Secret{}
	g.Expect(k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: rc.Status.Auth.SecretName}, s)).To(Succeed())
	return string(s.Data[rc.Status.Auth.SecretKey])
}

// withRevision are a new pod's labels: the template's and its revision.
func withRevision(sts *appsv1.StatefulSet) map[string]string {
	labels := maps.Clone(sts.Spec.Template.Labels)
	labels[appsv1.ControllerRevisionHashLabelKey] = sts.Status.UpdateRevision
	return labels
}

// ensurePod makes the pod of ordinal i exist and run at its server's IP.
// gone says that sync found the pod missing; a pod that goes missing only
// afterwards is left to the next sync.
func (k *kubelet) ensurePod(g Gomega, sts *appsv1.StatefulSet, i int32, gone bool) {
	ctx := context.Background()
	pod := &corev1.Pod{}
	err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: k.podName(i)}, pod)
	if apierrors.IsNotFound(err) && !gone {
		// Deleted since sync looked: the next sync restarts its server
		// first, so that the new pod's revision is the server's.
		return
	}
	if apierrors.IsNotFound(err) {
		pod = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: k.ns, Name: k.podName(i), Labels: withRevision(sts),
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true),
				}},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: sts.Spec.Template.Spec.Containers[0].Image}}},
		}
		g.Expect(k.c.Create(ctx, pod)).To(Succeed())
	} else {
		g.Expect(err).NotTo(HaveOccurred())
	}
	ready, since := corev1.ConditionTrue, metav1.Now()
	var statuses []corev1.ContainerStatus
	if k.unready[i] {
		ready = corev1.ConditionFalse
	}
	if waiting, ok := k.cannotStart[i]; ok {
		ready, since = corev1.ConditionFalse, metav1.NewTime(since.Add(-time.Minute))
		statuses = []corev1.ContainerStatus{waiting}
	}
	if pod.Status.PodIP == k.ip(i) && len(pod.Status.Conditions) == 1 && pod.Status.Conditions[0].Status == ready && len(pod.Status.ContainerStatuses) == len(statuses) {
		return
	}
	pod.Status = corev1.PodStatus{
		Phase:             corev1.PodRunning,
		PodIP:             k.ip(i),
		PodIPs:            []corev1.PodIP{{IP: k.ip(i)}},
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: since}},
		ContainerStatuses: statuses,
	}
	g.Expect(k.c.Status().Update(ctx, pod)).To(Succeed())
}

func (k *kubelet) cluster(t *testing.T) *redis.ClusterClient {
	var servers []*redistest.Server
	for _, s := range k.servers {
		servers = append(servers, s)
	}
	return redistest.ClusterClient(t, servers...)
}

// servedSlots counts the slots the node serves by its own account.
func servedSlots(g Gomega, s *redistest.Server) int {
	text, err := s.PollingClient().ClusterNodes(context.Background()).Result()
	g.Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "myself") {
			continue
		}
		count := 0
		for _, f := range strings.Fields(line)[8:] {
			if strings.HasPrefix(f, "[") {
				continue
			}
			var lo, hi int
			if n, _ := fmt.Sscanf(f, "%d-%d", &lo, &hi); n == 2 {
				count += hi - lo + 1
			} else {
				count++
			}
		}
		return count
	}
	return -1
}

// expectReady waits, running the kubelet, until rc is Ready with size
// masters and all their replicas.
func expectReady(g *WithT, k *kubelet, rc *cachev1.RedisCluster, size int32) {
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(k.c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(rc.Status.ObservedGeneration).To(Equal(rc.Generation))
		g.Expect(conditions.IsTrue(rc, conditions.Ready)).To(BeTrue(), "conditions: %+v", rc.Status.Conditions)
		g.Expect(rc.Status.ClusterState).To(Equal("ok"))
		g.Expect(rc.Status.SlotsAssigned).To(Equal(int32(16384)))
		g.Expect(rc.Status.Size).To(Equal(size))
		nodes := rediscluster.Replicas(rc)
		g.Expect(rc.Status.Nodes).To(HaveLen(int(nodes)))
		g.Expect(rc.Status.ReadyNodes).To(Equal(nodes))
		if !k.noServer {
			k.sync(g) // the StatefulSet may have shrunk with this status
			g.Expect(len(k.servers)).To(Equal(int(nodes)))
		}
	}, 120*time.Second, 200*time.Millisecond).Should(Succeed())
}

func patchSize(g *WithT, c client.Client, rc *cachev1.RedisCluster, size int32) {
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"size":%d}}`, size)))
	g.Expect(c.Patch(context.Background(), rc, patch)).To(Succeed())
}

func TestSampleScalesUpAndDownWithoutLosingKeys(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	rc := &cachev1.RedisCluster{}
	samples.Load(t, "rediscluster.yaml", rc)
	rc.Namespace = ns
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)

	// The sample gives the StatefulSet, the Services and the budget.
	g.Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "example-rediscluster"}, sts)).To(Succeed())
		g.Expect(*sts.Spec.Replicas).To(Equal(int32(3)))
		g.Expect(metav1.IsControlledBy(sts, rc)).To(BeTrue())
		g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("redis:test"))
		for _, name := range []string{"example-rediscluster", "example-rediscluster-headless"} {
			svc := &corev1.Service{}
			g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc)).To(Succeed())
			g.Expect(metav1.IsControlledBy(svc, rc)).To(BeTrue())
		}
		pdb := &policyv1.PodDisruptionBudget{}
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "example-rediscluster"}, pdb)).To(Succeed())
	}).Should(Succeed())

	expectReady(g, k, rc, 3)
	g.Expect(rc.Status.Selector).To(ContainSubstring("app.kubernetes.io/instance=example-rediscluster"))

	// Authentication is on: the password is generated into a Secret the
	// cluster owns, which the status names.
	g.Expect(rc.Status.Auth).To(Equal(&cachev1.AuthStatus{SecretName: "example-rediscluster-auth", SecretKey: "password"}))
	g.Expect(conditions.IsTrue(rc, cachev1.ConditionAuthEnabled)).To(BeTrue())
	auth := &corev1.Secret{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "example-rediscluster-auth"}, auth)).To(Succeed())
	g.Expect(metav1.IsControlledBy(auth, rc)).To(BeTrue())
	password := string(auth.Data["password"])
	g.Expect(len(password)).To(BeNumerically(">=", 32))
	for _, s := range k.servers {
		g.Expect(s.ClientAs("", "").Ping(context.Background()).Err()).To(MatchError(ContainSubstring("NOAUTH")))
		g.Expect(s.ClientAs("", password).Ping(context.Background()).Err()).To(Succeed())
	}
	expectNoSecretsIn(g, c, rc)

	data := k.cluster(t)
	redistest.WriteKeys(g, data)

	patchSize(g, c, rc, 5)
	expectReady(g, k, rc, 5)
	redistest.ExpectKeys(g, data)
	// The grow moved keys: the status says how fast, for a TDSet's lead time.
	m := rc.Status.Migration
	g.Expect(m).NotTo(BeNil())
	g.Expect(m.Slots).To(BeNumerically(">", 0))
	g.Expect(m.Keys).To(BeNumerically(">=", rediscluster.MinMeasuredKeys))
	g.Expect(m.Keys).To(BeNumerically("<=", redistest.NumKeys))
	g.Expect(m.KeysPerSecond).To(BeNumerically(">", 0))
	g.Expect(m.SlotsPerMinute).To(BeNumerically(">", 0))

	patchSize(g, c, rc, 3)
	// Drained, the leaving nodes stay a while and redirect clients whose
	// slot map is older than the move.
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(HavePrefix(
			"Normal " + cachev1.ReasonLeavingNodesDrained + ": example-rediscluster-3, example-rediscluster-4 serve no slot")))
	}, 120*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(k.servers[4].ClientAs("", password).Get(context.Background(), "a-key").Err()).To(MatchError(HavePrefix("MOVED")),
		"a drained node redirects, where a reset one would answer CLUSTERDOWN")
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(rc.Status.LeavingDrainedSince).NotTo(BeNil())
	}).Should(Succeed())
	expectReady(g, k, rc, 3)
	g.Expect(rc.Status.LeavingDrainedSince).To(BeNil(), "the scale-down is over")
	g.Expect(k.slotsAtRemoval).To(Equal(map[string]int{"example-rediscluster-3": 0, "example-rediscluster-4": 0}),
		"the StatefulSet shrank only after the leaving nodes were drained")
	g.Eventually(func(g Gomega) {
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(
			"Normal " + cachev1.ReasonStatefulSetScaledDown + ": Scaled StatefulSet example-rediscluster from 5 to 3 pods: the leaving nodes serve no slot and are forgotten"))
	}).Should(Succeed())
	for _, s := range k.servers {
		text, err := s.Client().ClusterNodes(context.Background()).Result()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.Count(strings.TrimSpace(text), "\n")+1).To(Equal(3), "removed nodes are forgotten:\n%s", text)
	}
	redistest.ExpectKeys(g, k.cluster(t))
}

func TestUnreachableNodesAreReportedNeverReady(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	rc := &cachev1.RedisCluster{ObjectMeta: metav1.ObjectMeta{Name: "dark", Namespace: ns}, Spec: cachev1.RedisClusterSpec{Size: 2}}
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	k.noServer = true
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		ready := conditions.Get(rc, conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(cachev1.ReasonNodesUnreachable))
		g.Expect(ready.Message).To(ContainSubstring("dark-0"))
		g.Expect(ready.Message).To(ContainSubstring("dark-1"))
		g.Expect(conditions.IsTrue(rc, cachev1.ConditionDegraded)).To(BeTrue())
		g.Expect(rc.Status.ClusterState).To(Equal("unknown"))
		g.Expect(rc.Status.ReadyNodes).To(BeZero())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(conditions.IsTrue(rc, conditions.Ready)).To(BeFalse())
	}, 2*time.Second).Should(Succeed())
}

func TestPodsNotReadyAreReportedNeverReady(t *testing.T) {
	clock := &testclock.Offset{}
	cfg, writes := testenv.CountWrites(testenv.Get(t).Config)
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(),
		reconciler.Options{Image: options.Image, ExporterImage: options.ExporterImage, Clock: clock}, testenv.ManagerOptions{Config: cfg})
	rc := builders.RedisCluster(ns, "unready").Size(1).ReplicasPerMaster(1).Obj()
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	deleteAtEnd(t, c, rc)
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 1)

	// The replica's node answers, but its pod is not Ready: the Services
	// leave it out. A moment after it turned so, that is waited for.
	k.unready[1] = true
	ready := func(g Gomega) *metav1.Condition {
		k.sync(g)
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		return conditions.Get(rc, conditions.Ready)
	}
	warnings := func(g Gomega) []string {
		return testenv.Warnings(g, c, ns, rc.Name, cachev1.ReasonNodesNotReady)
	}
	g.Eventually(func(g Gomega) {
		cond := ready(g)
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(cachev1.ReasonReconciling))
		g.Expect(cond.Message).To(Equal("waiting for the pods of unready-1 to be Ready"))
		g.Expect(rc.Status.ReadyNodes).To(Equal(int32(1)))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(warnings(g)).To(BeEmpty(), "no warning within the grace")

	// Past the grace, Ready and Degraded name the pod, and one Warning says so.
	clock.Set(time.Now().Add(time.Minute))
	pokePod(g, c, ns, "unready-0", "1")
	g.Eventually(func(g Gomega) {
		cond := ready(g)
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(cachev1.ReasonNodesNotReady))
		g.Expect(cond.Message).To(Equal("cluster_state is ok, but the pods of unready-1 are not Ready, so the Services do not route to them"))
		g.Expect(conditions.Get(rc, cachev1.ConditionDegraded).Reason).To(Equal(cachev1.ReasonNodesNotReady))
		g.Expect(rc.Status.ClusterState).To(Equal("ok"))
		g.Expect(rc.Status.ReadyNodes).To(Equal(int32(1)))
		g.Expect(warnings(g)).To(HaveLen(1), "%v", testenv.Events(g, c, ns, rc.Name))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	// It stays so without a write, or another warning, at each reconcile.
	testenv.ExpectSteadyState(g, writes, rediscluster.Name, ns, func() { pokePod(g, c, ns, "unready-0", "2") })
	g.Expect(warnings(g)).To(HaveLen(1))

	k.unready[1] = false
	expectReady(g, k, rc, 1)
}

// deleteAtEnd deletes rc when the test ends, before its manager stops:
// the managers of later tests watch every namespace, and would otherwise
// spend their workers on a cluster whose nodes are gone.
func deleteAtEnd(t *testing.T, c client.Client, rc *cachev1.RedisCluster) {
	t.Cleanup(func() { _ = c.Delete(context.Background(), rc) })
}

// pokePod changes an annotation of the named pod, which makes the
// controller reconcile its cluster.
func pokePod(g Gomega, c client.Client, ns, name, value string) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"touched":%q}}}`, value)
	g.Expect(c.Patch(context.Background(), pod, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	cfg, writes := testenv.CountWrites(testenv.Get(t).Config)
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{Config: cfg})
	rc := builders.RedisCluster(ns, "calm").Size(1).Obj()
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 1)

	// A pod change triggers a full reconcile, Redis included.
	testenv.ExpectSteadyState(g, writes, rediscluster.Name, ns, func() { pokePod(g, c, ns, "calm-0", "1") })
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
	g.Expect(conditions.IsTrue(rc, conditions.Ready)).To(BeTrue())
	// The NetworkPolicy as stored, with the default scrapers, is the one
	// desired: the steady state above holds for it.
	np := &networkingv1.NetworkPolicy{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), np)).To(Succeed())
	g.Expect(np.Spec.Ingress).To(ContainElement(networkingv1.NetworkPolicyIngressRule{
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(rediscluster.MetricsPort))}},
		From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"metrics": "enabled"}}}},
	}), "only namespaces labelled metrics=enabled reach the exporters")
}

func TestAdmissionRejectsInvalidSpecs(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	for name, spec := range map[string]cachev1.RedisClusterSpec{
		"zero-size":     {Size: 0},
		"many-replicas": {Size: 1, ReplicasPerMaster: 6},
		"disabled-with-password": {Size: 1, Auth: &cachev1.AuthSpec{
			Disabled: true, PasswordSecret: &cachev1.SecretKeyRef{Name: "s", Key: "password"}}},
		"previous-is-current": {Size: 1, Auth: &cachev1.AuthSpec{
			PasswordSecret: &cachev1.SecretKeyRef{Name: "s", Key: "password"}, PreviousPasswordKey: "password"}},
		"bad-key":                  {Size: 1, Auth: &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: "s", Key: "a/b"}}},
		"config-owned-by-operator": {Size: 1, RedisConfig: map[string]string{"cluster-node-timeout": "1"}},
		"config-dangerous":         {Size: 1, RedisConfig: map[string]string{"rename-command": "FLUSHALL x"}},
		"config-unknown":           {Size: 1, RedisConfig: map[string]string{"made-up": "1"}},
		// Named after the test case, so these name their own generated Secrets.
		"own-acl-as-password":      {Size: 1, Auth: &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: "own-acl-as-password-acl", Key: "users.conf"}}},
		"own-operator-as-password": {Size: 1, Auth: &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: "own-operator-as-password-operator", Key: "password"}}},
		"own-auth-as-tls":          {Size: 1, TLS: &cachev1.TLSSpec{SecretName: "own-auth-as-tls-auth"}},
		"own-bus-as-password":      {Size: 1, Auth: &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: "own-bus-as-password-bus", Key: "tls.key"}}},
		"own-bus-as-tls":           {Size: 1, TLS: &cachev1.TLSSpec{SecretName: "own-bus-as-tls-bus"}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), &cachev1.RedisCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec})
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		})
	}
	g := NewWithT(t)
	long := &cachev1.RedisCluster{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("r", 53), Namespace: ns}, Spec: cachev1.RedisClusterSpec{Size: 1}}
	g.Expect(apierrors.IsInvalid(env.Client.Create(context.Background(), long))).To(BeTrue())

	// A dangerous key is refused with a message that says why.
	bad := builders.RedisCluster(ns, "dangerous").Size(1).Obj()
	bad.Spec.RedisConfig = map[string]string{"requirepass": "x"}
	err := env.Client.Create(context.Background(), bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("the operator owns them"))
	tuned := builders.RedisCluster(ns, "tuned").Size(1).Obj()
	tuned.Spec.RedisConfig = map[string]string{"maxmemory": "100mb", "maxmemory-policy": "allkeys-lru"}
	g.Expect(env.Client.Create(context.Background(), tuned)).To(Succeed())

	// A running cluster serves plain text or TLS for good.
	plain := builders.RedisCluster(ns, "plain").Size(1).Obj()
	g.Expect(env.Client.Create(context.Background(), plain)).To(Succeed())
	err = env.Client.Patch(context.Background(), plain, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"tls":{"secretName":"t"}}}`)))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.tls cannot be added or removed"))
	secure := builders.RedisCluster(ns, "secure").Size(1).TLS("t").Obj()
	g.Expect(env.Client.Create(context.Background(), secure)).To(Succeed())
	err = env.Client.Patch(context.Background(), secure, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"tls":{"secretName":"u"}}}`)))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("renew the certificate in the same Secret"))
}
