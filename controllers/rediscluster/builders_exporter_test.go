package rediscluster_test

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
)

// container returns the pod's container named name, and whether it has one.
func container(pod corev1.PodSpec, name string) (corev1.Container, bool) {
	for _, c := range pod.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return corev1.Container{}, false
}

func TestExporterSidecar(t *testing.T) {
	ownResources := &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("48Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("96Mi")},
	}
	for _, tc := range []struct {
		name   string
		mutate func(*cachev1.RedisCluster)
		// off: no sidecar.
		off       bool
		image     string
		addr      string
		skipCheck bool
		memory    string
	}{
		{name: "on by default", image: "exporter:test", addr: "redis://localhost:6379", memory: "64Mi"},
		{name: "monitoring without exporter settings", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Monitoring = &cachev1.RedisClusterMonitoring{Monitoring: shared.Monitoring{PodMonitor: &shared.PodMonitor{Disabled: true}}}
		}, image: "exporter:test", addr: "redis://localhost:6379", memory: "64Mi"},
		{name: "tls scrapes the TLS client port", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.TLS = &cachev1.TLSSpec{SecretName: "rc-cert"}
		}, image: "exporter:test", addr: "rediss://localhost:6379", skipCheck: true, memory: "64Mi"},
		{name: "auth disabled keeps the exporter's own user", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Auth = &cachev1.AuthSpec{Disabled: true}
		}, image: "exporter:test", addr: "redis://localhost:6379", memory: "64Mi"},
		{name: "own image and resources", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Monitoring = &cachev1.RedisClusterMonitoring{Monitoring: shared.Monitoring{Exporter: &shared.Exporter{Image: "mirror/redis_exporter:1", Resources: ownResources}}}
		}, image: "mirror/redis_exporter:1", addr: "redis://localhost:6379", memory: "96Mi"},
		{name: "disabled", mutate: func(c *cachev1.RedisCluster) {
			c.Spec.Monitoring = &cachev1.RedisClusterMonitoring{Monitoring: shared.Monitoring{Exporter: &shared.Exporter{Disabled: true}}}
		}, off: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(3, 0)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			pod := rediscluster.DesiredStatefulSet(c, testImages, 3, c.Spec.TLS == nil).Spec.Template.Spec
			redis, ok := container(pod, "redis")
			g.Expect(ok).To(BeTrue())
			for _, m := range redis.VolumeMounts {
				g.Expect(m.Name).NotTo(Equal("exporter"), "redis-server never reads the exporter's password")
			}
			exp, ok := container(pod, rediscluster.ExporterContainerName)
			np := rediscluster.DesiredNetworkPolicy(c, nil)
			metricsAdmitted := ContainElement(HaveField("Ports", ContainElement(HaveField("Port", ptr.To(intstr.FromInt32(9121))))))
			if tc.off {
				g.Expect(ok).To(BeFalse(), "a disabled exporter has no container")
				g.Expect(pod.Containers).To(HaveLen(1))
				g.Expect(pod.Volumes).NotTo(ContainElement(HaveField("Name", "exporter")), "nor the volume of its password")
				g.Expect(np.Spec.Ingress).NotTo(metricsAdmitted)
				return
			}
			g.Expect(ok).To(BeTrue())
			g.Expect(np.Spec.Ingress).To(metricsAdmitted)
			g.Expect(exp.Image).To(Equal(tc.image))
			g.Expect(exp.Command).To(BeEmpty(), "the image's entrypoint is redis_exporter")
			g.Expect(exp.Args).To(ContainElements(
				"--redis.addr="+tc.addr, "--redis.user=exporter",
				"--redis.password-file=/etc/redis-exporter/redis-passwords.json",
				"--config-command=-", "--web.listen-address=:9121"))
			if tc.skipCheck {
				g.Expect(exp.Args).To(ContainElement("--skip-tls-verification"))
			} else {
				g.Expect(exp.Args).NotTo(ContainElement(ContainSubstring("tls")))
			}
			for _, a := range exp.Args {
				g.Expect(a).NotTo(HavePrefix("--redis.password="), "no password on the command line")
			}
			g.Expect(exp.Env).To(BeEmpty(), "no password in the environment")
			g.Expect(exp.EnvFrom).To(BeEmpty())
			g.Expect(exp.Ports).To(ConsistOf(corev1.ContainerPort{Name: "metrics", ContainerPort: 9121, Protocol: corev1.ProtocolTCP}))
			g.Expect(exp.LivenessProbe.HTTPGet.Path).To(Equal("/-/reload"), "the kubelet has the exporter read a rotated password file")
			g.Expect(exp.LivenessProbe.HTTPGet.Port).To(Equal(intstr.FromString("metrics")))
			g.Expect(exp.ReadinessProbe).To(BeNil(), "the exporter never takes redis-server out of the Services")
			g.Expect(exp.Resources.Limits.Memory().String()).To(Equal(tc.memory))
			g.Expect(exp.Resources.Requests).To(HaveKey(corev1.ResourceMemory))

			sc := exp.SecurityContext
			g.Expect(*sc.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*sc.ReadOnlyRootFilesystem).To(BeTrue())
			g.Expect(*sc.RunAsNonRoot).To(BeTrue())
			g.Expect(sc.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(sc.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))

			// The exporter mounts its password file alone: not the users
			// file, nor any certificate or key.
			g.Expect(exp.VolumeMounts).To(HaveLen(1))
			mount, secret := secretMount(g, pod, exp, "/etc/redis-exporter")
			g.Expect(mount.ReadOnly).To(BeTrue())
			g.Expect(secret.SecretName).To(Equal("rc-exporter"))
			g.Expect(secret.Items).To(ConsistOf(corev1.KeyToPath{Key: "redis-passwords.json", Path: "redis-passwords.json"}))
			g.Expect(secret.DefaultMode).To(Equal(ptr.To[int32](0o440)))
		})
	}
}

func TestExporterSecretHoldsThePasswordFile(t *testing.T) {
	g := NewWithT(t)
	c := rc(3, 0)
	s := rediscluster.DesiredPasswordSecret(c, rediscluster.ExporterSecretName(c), "exporter-pw", map[string][]byte{
		rediscluster.ExporterPasswordFileKey: []byte(`{"redis://localhost:6379":"stale"}`),
	})
	g.Expect(s.Name).To(Equal("rc-exporter"))
	g.Expect(s.Data).To(HaveKeyWithValue("password", []byte("exporter-pw")))
	var file map[string]string
	g.Expect(json.Unmarshal(s.Data["redis-passwords.json"], &file)).To(Succeed())
	g.Expect(file).To(Equal(map[string]string{
		rediscluster.ExporterRedisAddr(false): "exporter-pw",
		rediscluster.ExporterRedisAddr(true):  "exporter-pw",
	}), "the file follows the password, for both addresses the exporter may scrape")

	auth := rediscluster.DesiredPasswordSecret(c, rediscluster.AuthSecretName(c), "clients-pw", nil)
	g.Expect(auth.Data).NotTo(HaveKey("redis-passwords.json"), "only the exporter's Secret holds a password file")
}
