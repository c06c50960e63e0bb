package rediscluster_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/test/builders"
)

func rc(size, replicas int32) *cachev1.RedisCluster {
	return builders.RedisCluster("ns", "rc").Size(size).ReplicasPerMaster(replicas).Obj()
}

func TestTopology(t *testing.T) {
	for _, tc := range []struct {
		name         string
		size, per    int32
		running      int32
		wantShards   [][]string
		wantLeaving  []string
		wantReplicas int32
	}{
		{name: "masters only", size: 3, running: 3, wantReplicas: 3,
			wantShards: [][]string{{"rc-0"}, {"rc-1"}, {"rc-2"}}},
		{name: "with replicas", size: 2, per: 1, running: 4, wantReplicas: 4,
			wantShards: [][]string{{"rc-0", "rc-1"}, {"rc-2", "rc-3"}}},
		{name: "shrinking keeps the leaving pods", size: 3, running: 5, wantReplicas: 3,
			wantShards: [][]string{{"rc-0"}, {"rc-1"}, {"rc-2"}}, wantLeaving: []string{"rc-3", "rc-4"}},
		{name: "growing", size: 5, running: 3, wantReplicas: 5,
			wantShards: [][]string{{"rc-0"}, {"rc-1"}, {"rc-2"}, {"rc-3"}, {"rc-4"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(tc.size, tc.per)
			g.Expect(rediscluster.Replicas(c)).To(Equal(tc.wantReplicas))
			topo := rediscluster.Topology(c, tc.running)
			g.Expect(topo.Shards).To(Equal(tc.wantShards))
			g.Expect(topo.Leaving).To(Equal(tc.wantLeaving))
		})
	}
}

func TestServices(t *testing.T) {
	g := NewWithT(t)
	c := rc(3, 0)
	headless := rediscluster.DesiredHeadlessService(c)
	g.Expect(headless.Name).To(Equal("rc-headless"))
	g.Expect(headless.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
	g.Expect(headless.Spec.PublishNotReadyAddresses).To(BeTrue())
	g.Expect(headless.Spec.Ports).To(ConsistOf(
		corev1.ServicePort{Name: "redis", Port: 6379, TargetPort: intstr.FromInt32(6379), Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "bus", Port: 16379, TargetPort: intstr.FromInt32(16379), Protocol: corev1.ProtocolTCP},
	))
	client := rediscluster.DesiredClientService(c)
	g.Expect(client.Name).To(Equal("rc"))
	g.Expect(client.Spec.ClusterIP).To(BeEmpty())
	g.Expect(client.Spec.Ports).To(HaveLen(1))
	g.Expect(client.Spec.Ports[0].TargetPort).To(Equal(intstr.FromInt32(6379)))
	for _, s := range []*corev1.Service{headless, client} {
		g.Expect(s.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
		g.Expect(s.Spec.Selector).To(HaveKeyWithValue("app.kubernetes.io/instance", "rc"))
	}

	pdb := rediscluster.DesiredPodDisruptionBudget(c)
	g.Expect(*pdb.Spec.MaxUnavailable).To(Equal(intstr.FromInt32(1)))
	g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(client.Spec.Selector))
}

func TestStatefulSet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*cachev1.RedisCluster)
		image   string
		claim   bool
		memory  string
		replica int32
	}{
		{name: "defaults", image: "redis:test", memory: "512Mi", replica: 3},
		{name: "own image and resources", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Image = "my/redis:7"
			c.Spec.Resources = &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			}
		}, image: "my/redis:7", memory: "2Gi", replica: 3},
		{name: "storage", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Storage = &cachev1.StorageSpec{Size: resource.MustParse("5Gi"), StorageClassName: ptr.To("fast")}
		}, image: "redis:test", claim: true, memory: "512Mi", replica: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(3, 0)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			sts := rediscluster.DesiredStatefulSet(c, "redis:test", tc.replica)
			g.Expect(sts.Name).To(Equal("rc"))
			g.Expect(*sts.Spec.Replicas).To(Equal(tc.replica))
			g.Expect(sts.Spec.ServiceName).To(Equal("rc-headless"))
			g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(rediscluster.DesiredClientService(c).Spec.Selector))
			pod := sts.Spec.Template.Spec
			g.Expect(sts.Spec.Template.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
			g.Expect(*pod.SecurityContext.RunAsUser).To(Equal(int64(999)))
			g.Expect(pod.Containers).To(HaveLen(1))
			ctr := pod.Containers[0]
			g.Expect(ctr.Image).To(Equal(tc.image))
			g.Expect(ctr.Command).To(Equal([]string{"redis-server"}))
			g.Expect(ctr.Args).To(ContainElements("--cluster-enabled", "yes", "--cluster-config-file", "/data/nodes.conf", "--cluster-announce-ip", "$(POD_IP)"))
			g.Expect(ctr.Env).To(ContainElement(HaveField("ValueFrom.FieldRef.FieldPath", "status.podIP")))
			g.Expect(*ctr.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*ctr.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
			g.Expect(ctr.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(ctr.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromInt32(6379)))
			g.Expect(ctr.LivenessProbe).NotTo(BeNil())
			g.Expect(ctr.Resources.Requests).To(HaveKey(corev1.ResourceCPU))
			g.Expect(ctr.Resources.Limits.Memory().String()).To(Equal(tc.memory))
			g.Expect(ctr.VolumeMounts).To(ConsistOf(corev1.VolumeMount{Name: "data", MountPath: "/data"}))
			if tc.claim {
				g.Expect(pod.Volumes).To(BeEmpty())
				g.Expect(sts.Spec.VolumeClaimTemplates).To(HaveLen(1))
				claim := sts.Spec.VolumeClaimTemplates[0]
				g.Expect(claim.Name).To(Equal("data"))
				g.Expect(claim.Spec.Resources.Requests.Storage().String()).To(Equal("5Gi"))
				g.Expect(*claim.Spec.StorageClassName).To(Equal("fast"))
			} else {
				g.Expect(sts.Spec.VolumeClaimTemplates).To(BeEmpty())
				g.Expect(pod.Volumes).To(ConsistOf(HaveField("VolumeSource.EmptyDir", Not(BeNil()))))
			}
		})
	}
}
