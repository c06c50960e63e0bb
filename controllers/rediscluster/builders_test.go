package rediscluster_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// testImages are the images the builder tests run; defaultImages the
// manager's defaults.
var (
	testImages    = rediscluster.Images{Redis: "redis:test", Exporter: "exporter:test"}
	defaultImages = rediscluster.Images{Redis: rediscluster.DefaultImage, Exporter: rediscluster.DefaultExporterImage}
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

// argValue returns the value following flag in args.
func argValue(args []string, flag string) (string, bool) {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1], true
		}
	}
	return "", false
}

// secretMount finds the container's mount at path and the pod's Secret
// volume behind it.
func secretMount(g Gomega, pod corev1.PodSpec, ctr corev1.Container, path string) (corev1.VolumeMount, *corev1.SecretVolumeSource) {
	var mounts []corev1.VolumeMount
	for _, m := range ctr.VolumeMounts {
		if m.MountPath == path {
			mounts = append(mounts, m)
		}
	}
	g.ExpectWithOffset(1, mounts).To(HaveLen(1), "one mount at %s", path)
	var secrets []*corev1.SecretVolumeSource
	for _, v := range pod.Volumes {
		if v.Name == mounts[0].Name {
			secrets = append(secrets, v.Secret)
		}
	}
	g.ExpectWithOffset(1, secrets).To(HaveLen(1), "one volume named %s", mounts[0].Name)
	g.ExpectWithOffset(1, secrets[0]).NotTo(BeNil(), "the volume at %s is a Secret", path)
	return mounts[0], secrets[0]
}

// expectTLSMount checks that the container mounts tls.crt, tls.key and
// ca.crt of the Secret name read-only at dir.
func expectTLSMount(g *WithT, pod corev1.PodSpec, ctr corev1.Container, dir, name string) {
	mount, secret := secretMount(g, pod, ctr, dir)
	g.ExpectWithOffset(1, mount.ReadOnly).To(BeTrue())
	g.ExpectWithOffset(1, secret.SecretName).To(Equal(name))
	g.ExpectWithOffset(1, secret.Items).To(ConsistOf(
		corev1.KeyToPath{Key: "tls.crt", Path: "tls.crt"},
		corev1.KeyToPath{Key: "tls.key", Path: "tls.key"},
		corev1.KeyToPath{Key: "ca.crt", Path: "ca.crt"},
	))
	g.ExpectWithOffset(1, secret.DefaultMode).To(Equal(ptr.To[int32](0o440)), "the key is readable by owner and group only")
}

func TestStatefulSet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*cachev1.RedisCluster)
		image  string
		claim  bool
		tls    bool
		// plainBus is an older cluster's StatefulSet, without a TLS bus.
		plainBus bool
		memory   string
		replica  int32
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
		{name: "auth disabled still mounts the acl", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Auth = &cachev1.AuthSpec{Disabled: true}
		}, image: "redis:test", memory: "512Mi", replica: 3},
		{name: "own password secret", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Auth = &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: "mine", Key: "pw"}, PreviousPasswordKey: "old"}
		}, image: "redis:test", memory: "512Mi", replica: 3},
		{name: "tls", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.TLS = &cachev1.TLSSpec{SecretName: "rc-cert"}
		}, image: "redis:test", tls: true, memory: "512Mi", replica: 3},
		{name: "plain bus of an older cluster", image: "redis:test", plainBus: true, memory: "512Mi", replica: 3},
		{name: "plain bus with storage", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Storage = &cachev1.StorageSpec{Size: resource.MustParse("5Gi"), StorageClassName: ptr.To("fast")}
		}, image: "redis:test", plainBus: true, claim: true, memory: "512Mi", replica: 3},
		{name: "tls with storage", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.TLS = &cachev1.TLSSpec{SecretName: "rc-cert"}
			c.Spec.Storage = &cachev1.StorageSpec{Size: resource.MustParse("5Gi"), StorageClassName: ptr.To("fast")}
		}, image: "redis:test", tls: true, claim: true, memory: "512Mi", replica: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(3, 0)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			busTLS := !tc.tls && !tc.plainBus
			sts := rediscluster.DesiredStatefulSet(c, testImages, tc.replica, busTLS)
			g.Expect(sts.Name).To(Equal("rc"))
			g.Expect(*sts.Spec.Replicas).To(Equal(tc.replica))
			g.Expect(sts.Spec.ServiceName).To(Equal("rc-headless"))
			g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(rediscluster.DesiredClientService(c).Spec.Selector))
			pod := sts.Spec.Template.Spec
			g.Expect(sts.Spec.Template.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
			g.Expect(*pod.SecurityContext.RunAsUser).To(Equal(int64(999)))
			g.Expect(pod.Containers).To(HaveLen(2), "redis-server and the exporter sidecar")
			ctr := pod.Containers[0]
			g.Expect(ctr.Image).To(Equal(tc.image))
			g.Expect(ctr.Command).To(Equal([]string{"redis-server"}))
			g.Expect(sts.Spec.UpdateStrategy.Type).To(Equal(appsv1.OnDeleteStatefulSetStrategyType), "the operator rolls changes out")
			anti := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			g.Expect(anti).To(HaveLen(1))
			g.Expect(anti[0].PodAffinityTerm.TopologyKey).To(Equal(corev1.LabelHostname))
			g.Expect(anti[0].PodAffinityTerm.LabelSelector.MatchLabels).To(Equal(sts.Spec.Selector.MatchLabels))
			g.Expect(pod.TopologySpreadConstraints).To(ConsistOf(HaveField("TopologyKey", corev1.LabelTopologyZone)))
			g.Expect(ctr.Args).To(ContainElements("--cluster-enabled", "yes", "--cluster-config-file", "/data/nodes.conf", "--cluster-announce-ip", "$(POD_IP)"))
			// redis-server reads its first argument as its config file: the
			// users and masterauth, so no secret is on the command line.
			g.Expect(ctr.Args).NotTo(BeEmpty())
			g.Expect(ctr.Args[0]).To(Equal("/etc/redis/acl/users.conf"))
			g.Expect(ctr.Args).NotTo(ContainElement(ContainSubstring("requirepass")))
			g.Expect(ctr.Args).NotTo(ContainElement(ContainSubstring("masterauth")))

			// Secrets never appear in the pod spec: the only variable is the
			// pod IP, from the downward API.
			g.Expect(ctr.Env).To(ConsistOf(HaveField("Name", "POD_IP")))
			g.Expect(ctr.Env).To(ContainElement(HaveField("ValueFrom.FieldRef.FieldPath", "status.podIP")))
			for _, e := range ctr.Env {
				g.Expect(e.Value).To(BeEmpty(), "env %s has a literal value", e.Name)
				g.Expect(e.ValueFrom).NotTo(BeNil())
				g.Expect(e.ValueFrom.SecretKeyRef).To(BeNil(), "env %s reads a Secret", e.Name)
			}
			g.Expect(ctr.EnvFrom).To(BeEmpty())

			g.Expect(*ctr.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*ctr.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
			g.Expect(ctr.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(ctr.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromInt32(6379)))
			g.Expect(ctr.LivenessProbe).NotTo(BeNil())
			g.Expect(ctr.Resources.Requests).To(HaveKey(corev1.ResourceCPU))
			g.Expect(ctr.Resources.Limits.Memory().String()).To(Equal(tc.memory))

			// Every pod reads <name>-acl, read-only, whatever spec.auth says.
			mountPaths := []string{"/data", "/etc/redis/acl"}
			aclMount, acl := secretMount(g, pod, ctr, "/etc/redis/acl")
			g.Expect(aclMount.ReadOnly).To(BeTrue())
			g.Expect(acl.SecretName).To(Equal("rc-acl"))
			g.Expect(acl.DefaultMode).To(Equal(ptr.To[int32](0o440)))
			g.Expect(acl.Items).To(ConsistOf(corev1.KeyToPath{Key: "users.conf", Path: "users.conf"}))
			g.Expect(ctr.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "data", MountPath: "/data"}))

			port, ok := argValue(ctr.Args, "--port")
			g.Expect(ok).To(BeTrue(), "--port is set")
			expectArgs := func(want map[string]string) {
				for flag, value := range want {
					got, ok := argValue(ctr.Args, flag)
					g.Expect(ok).To(BeTrue(), "%s is set", flag)
					g.Expect(got).To(Equal(value), flag)
				}
			}
			switch {
			case tc.tls:
				g.Expect(port).To(Equal("0"), "no plain-text port with TLS")
				expectArgs(map[string]string{
					"--tls-port":         "6379",
					"--tls-cluster":      "yes",
					"--tls-replication":  "yes",
					"--tls-auth-clients": "optional",
					"--tls-cert-file":    "/etc/redis/tls/tls.crt",
					"--tls-key-file":     "/etc/redis/tls/tls.key",
					"--tls-ca-cert-file": "/etc/redis/tls/ca.crt",
				})
				g.Expect(ctr.Args).NotTo(ContainElement("--cluster-port"), "the bus is the TLS port plus 10000")
				mountPaths = append(mountPaths, "/etc/redis/tls")
				expectTLSMount(g, pod, ctr, "/etc/redis/tls", "rc-cert")
			case busTLS:
				// Clients keep the plain port; the bus and replication speak
				// TLS and require the cluster's own certificate.
				g.Expect(port).To(Equal("6379"))
				expectArgs(map[string]string{
					"--tls-port":         "6380",
					"--cluster-port":     "16379",
					"--tls-cluster":      "yes",
					"--tls-replication":  "yes",
					"--tls-auth-clients": "yes",
					"--tls-cert-file":    "/etc/redis/bus/tls.crt",
					"--tls-key-file":     "/etc/redis/bus/tls.key",
					"--tls-ca-cert-file": "/etc/redis/bus/ca.crt",
				})
				g.Expect(ctr.Ports).To(ContainElement(corev1.ContainerPort{Name: "bus-tls", ContainerPort: 6380, Protocol: corev1.ProtocolTCP}))
				mountPaths = append(mountPaths, "/etc/redis/bus")
				expectTLSMount(g, pod, ctr, "/etc/redis/bus", "rc-bus")
			default:
				g.Expect(port).To(Equal("6379"))
				g.Expect(ctr.Args).NotTo(ContainElement(HavePrefix("--tls")))
				g.Expect(ctr.Args).NotTo(ContainElement("--cluster-port"))
				g.Expect(ctr.Ports).To(HaveLen(2), "the client port and the bus")
			}
			var gotPaths []string
			for _, m := range ctr.VolumeMounts {
				gotPaths = append(gotPaths, m.MountPath)
			}
			g.Expect(gotPaths).To(ConsistOf(mountPaths))

			// The users file and the exporter's password file.
			secretVolumes := 2
			if tc.tls || busTLS {
				secretVolumes = 3
			}
			if tc.claim {
				g.Expect(pod.Volumes).To(HaveLen(secretVolumes))
				g.Expect(pod.Volumes).NotTo(ContainElement(HaveField("Name", "data")), "data comes from the claim")
				g.Expect(sts.Spec.VolumeClaimTemplates).To(HaveLen(1))
				claim := sts.Spec.VolumeClaimTemplates[0]
				g.Expect(claim.Name).To(Equal("data"))
				g.Expect(claim.Spec.Resources.Requests.Storage().String()).To(Equal("5Gi"))
				g.Expect(*claim.Spec.StorageClassName).To(Equal("fast"))
			} else {
				g.Expect(sts.Spec.VolumeClaimTemplates).To(BeEmpty())
				g.Expect(pod.Volumes).To(HaveLen(secretVolumes + 1))
				g.Expect(pod.Volumes).To(ContainElement(And(
					HaveField("Name", "data"),
					HaveField("VolumeSource.EmptyDir", Not(BeNil())),
				)))
			}
		})
	}
}

func TestRedisConfigBecomesArguments(t *testing.T) {
	g := NewWithT(t)
	c := rc(3, 0)
	c.Spec.RedisConfig = map[string]string{"maxmemory-policy": "allkeys-lru", "maxmemory": "100mb"}
	args := rediscluster.DesiredStatefulSet(c, testImages, 3, true).Spec.Template.Spec.Containers[0].Args
	// Sorted by key, so the template, and the revision, do not change
	// with the map's order.
	g.Expect(strings.Join(args, " ")).To(ContainSubstring("--maxmemory 100mb --maxmemory-policy allkeys-lru"))
}

func TestBusTLSOnlyForNewOrAlreadyTLSBuses(t *testing.T) {
	withArgs := func(busTLS bool) *appsv1.StatefulSet {
		return rediscluster.DesiredStatefulSet(rc(3, 0), testImages, 3, busTLS)
	}
	tlsSpec := rc(3, 0)
	tlsSpec.Spec.TLS = &cachev1.TLSSpec{SecretName: "rc-cert"}
	for _, tc := range []struct {
		name     string
		rc       *cachev1.RedisCluster
		existing *appsv1.StatefulSet
		want     bool
	}{
		{name: "new cluster", rc: rc(3, 0), want: true},
		{name: "running a TLS bus", rc: rc(3, 0), existing: withArgs(true), want: true},
		// Its nodes cannot move to a TLS bus one by one.
		{name: "running a plain bus", rc: rc(3, 0), existing: withArgs(false), want: false},
		{name: "spec.tls, new", rc: tlsSpec, want: false},
		{name: "spec.tls, running", rc: tlsSpec, existing: rediscluster.DesiredStatefulSet(tlsSpec, testImages, 3, false), want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(rediscluster.BusTLS(tc.rc, tc.existing)).To(Equal(tc.want))
		})
	}
}

func TestNetworkPolicyAdmitsOnlyTheClustersPodsToTheBusAndTheScrapersToTheExporter(t *testing.T) {
	tcp := ptr.To(corev1.ProtocolTCP)
	port := func(p int32) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: tcp, Port: ptr.To(intstr.FromInt32(p))}
	}
	selector := rediscluster.DesiredClientService(rc(3, 0)).Spec.Selector
	// The bus and replication from this cluster's pods only, of this
	// namespace (no namespace selector).
	bus := networkingv1.NetworkPolicyIngressRule{
		Ports: []networkingv1.NetworkPolicyPort{port(16379), port(6380)},
		From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: selector}}},
	}
	monitoring := &metav1.LabelSelector{MatchLabels: map[string]string{"metrics": "enabled"}}
	for _, tc := range []struct {
		name     string
		disabled bool
		scrapers *metav1.LabelSelector
		want     []networkingv1.NetworkPolicyIngressRule
	}{
		{name: "scrapers from the selected namespaces", scrapers: monitoring, want: []networkingv1.NetworkPolicyIngressRule{
			// Clients, the operator among them, from anywhere.
			{Ports: []networkingv1.NetworkPolicyPort{port(6379)}},
			bus,
			{Ports: []networkingv1.NetworkPolicyPort{port(9121)}, From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: monitoring}}},
		}},
		{name: "scrapers from anywhere", want: []networkingv1.NetworkPolicyIngressRule{
			{Ports: []networkingv1.NetworkPolicyPort{port(6379), port(9121)}},
			bus,
		}},
		{name: "no exporter", disabled: true, scrapers: monitoring, want: []networkingv1.NetworkPolicyIngressRule{
			{Ports: []networkingv1.NetworkPolicyPort{port(6379)}},
			bus,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(3, 0)
			if tc.disabled {
				c.Spec.Monitoring = &cachev1.RedisClusterMonitoring{Monitoring: shared.Monitoring{Exporter: &shared.Exporter{Disabled: true}}}
			}
			np := rediscluster.DesiredNetworkPolicy(c, tc.scrapers)
			g.Expect(np.Name).To(Equal("rc"))
			g.Expect(np.Namespace).To(Equal(c.Namespace))
			g.Expect(np.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(np.Spec.PodSelector.MatchLabels).To(Equal(selector))
			g.Expect(np.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
			g.Expect(np.Spec.Ingress).To(Equal(tc.want))
		})
	}
}

func TestParseScrapers(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    *metav1.LabelSelector
		wantErr string
	}{
		{in: "metrics=enabled", want: &metav1.LabelSelector{MatchLabels: map[string]string{"metrics": "enabled"}}},
		{in: " kubernetes.io/metadata.name=monitoring ", want: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}},
		{in: "team in (monitoring,sre)", want: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"monitoring", "sre"}}}}},
		{in: "*"},
		{in: "", wantErr: "REDIS_EXPORTER_SCRAPERS is empty"},
		{in: "=enabled", wantErr: "REDIS_EXPORTER_SCRAPERS: "},
		{in: "metrics in", wantErr: "REDIS_EXPORTER_SCRAPERS: "},
	} {
		t.Run(tc.in, func(t *testing.T) {
			g := NewWithT(t)
			got, err := rediscluster.ParseScrapers(tc.in)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(HavePrefix(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestTopologyEvacuatesTheRolloutsMaster(t *testing.T) {
	g := NewWithT(t)
	c := rc(3, 0)
	c.Status.Rollout = &cachev1.RolloutStatus{Evacuating: "rc-1"}
	topo := rediscluster.Topology(c, 3)
	g.Expect(topo.Shards).To(Equal([][]string{{"rc-0"}, {"rc-2"}}))
	g.Expect(topo.Leaving).To(Equal([]string{"rc-1"}))
}

// Without spec.podTemplate the pods keep the default anti-affinity and
// zone spread; a podTemplate with neither affinity nor spread keeps them
// too; one with both replaces them and reaches every pod.
func TestStatefulSetPlacement(t *testing.T) {
	g := NewWithT(t)
	defaults := rediscluster.DesiredStatefulSet(rc(3, 1), defaultImages, 6, true).Spec.Template.Spec
	g.Expect(defaults.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution).To(HaveLen(1))
	g.Expect(defaults.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey).To(Equal(corev1.LabelHostname))
	g.Expect(defaults.TopologySpreadConstraints).To(HaveLen(1))
	g.Expect(defaults.TopologySpreadConstraints[0].TopologyKey).To(Equal(corev1.LabelTopologyZone))

	nodesOnly := rc(3, 1)
	nodesOnly.Spec.PodTemplate = &shared.PodTemplate{NodeSelector: map[string]string{"pool": "redis"}, PriorityClassName: "high"}
	kept := rediscluster.DesiredStatefulSet(nodesOnly, defaultImages, 6, true).Spec.Template.Spec
	g.Expect(kept.Affinity).To(Equal(defaults.Affinity), "the default anti-affinity stays")
	g.Expect(kept.TopologySpreadConstraints).To(Equal(defaults.TopologySpreadConstraints), "the default zone spread stays")
	g.Expect(kept.NodeSelector).To(Equal(map[string]string{"pool": "redis"}))
	g.Expect(kept.PriorityClassName).To(Equal("high"))

	placed := rc(3, 1)
	placed.Spec.PodTemplate = builders.PodTemplate()
	sts := rediscluster.DesiredStatefulSet(placed, defaultImages, 6, true)
	builders.ExpectPodTemplate(g, sts.Spec.Template, sts.Spec.Selector.MatchLabels)
	g.Expect(sts.Spec.Template.Spec.Containers[0].Args).To(Equal(rediscluster.DesiredStatefulSet(rc(3, 1), defaultImages, 6, true).Spec.Template.Spec.Containers[0].Args), "placement changes nothing else")
}

func TestDrainGrace(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	for _, tc := range []struct {
		name  string
		since *metav1.Time
		keep  bool
		left  time.Duration
	}{
		{name: "not drained yet: kept, the grace not started", keep: true},
		{name: "just drained", since: at(0), keep: true, left: rediscluster.DrainGrace},
		{name: "within the grace", since: at(rediscluster.DrainGrace - time.Second), keep: true, left: time.Second},
		{name: "the grace is over", since: at(rediscluster.DrainGrace)},
		{name: "long over", since: at(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			keep, left := rediscluster.DrainGraceAt(tc.since, now)
			g.Expect(keep).To(Equal(tc.keep))
			g.Expect(left).To(Equal(tc.left))
		})
	}
}

// A cluster whose nodes stay unreachable is looked at ever less often, so
// that many of them cannot keep the shared workers dialling.
func TestUnreachableRetryBacksOff(t *testing.T) {
	for _, tc := range []struct {
		since, want time.Duration
	}{
		{0, 15 * time.Second},
		{20 * time.Second, 15 * time.Second},
		{time.Minute, 30 * time.Second},
		{3 * time.Minute, 90 * time.Second},
		{time.Hour, 2 * time.Minute},
		{-time.Minute, 15 * time.Second}, // a clock behind the condition's
	} {
		t.Run(tc.since.String(), func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(rediscluster.UnreachableRetryAfter(tc.since)).To(Equal(tc.want))
		})
	}
}
