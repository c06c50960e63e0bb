package memcached_test

import (
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

func TestDesiredChildren(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mc       *cachev1alpha1.Memcached
		image    string
		replicas int32
		port     int32
	}{
		{
			name:     "tutorial sample",
			mc:       &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "memcached-sample", Namespace: "ns"}, Spec: cachev1alpha1.MemcachedSpec{Size: 1, ContainerPort: 11211}},
			image:    memcached.DefaultImage,
			replicas: 1,
			port:     11211,
		},
		{
			name:     "three servers on another port with the tutorial's image",
			mc:       &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "ns"}, Spec: cachev1alpha1.MemcachedSpec{Size: 3, ContainerPort: 12345}},
			image:    "memcached:1.4.36-alpine",
			replicas: 3,
			port:     12345,
		},
		{
			name:     "port not yet defaulted",
			mc:       &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "unset", Namespace: "ns"}, Spec: cachev1alpha1.MemcachedSpec{Size: 2}},
			image:    "registry.example/memcached:x",
			replicas: 2,
			port:     11211,
		},
		{
			name:     "longest name",
			mc:       &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("m", 63), Namespace: "ns"}, Spec: cachev1alpha1.MemcachedSpec{Size: 1, ContainerPort: 11211}},
			image:    memcached.DefaultImage,
			replicas: 1,
			port:     11211,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			dep := memcached.DesiredDeployment(tc.mc, tc.image, memcached.DefaultExporterImage)
			svc := memcached.DesiredService(tc.mc)

			// Both are named after the Memcached, in its namespace, with the standard labels.
			for _, meta := range []metav1.Object{dep, svc} {
				g.Expect(meta.GetName()).To(Equal(tc.mc.Name))
				g.Expect(meta.GetNamespace()).To(Equal(tc.mc.Namespace))
				g.Expect(meta.GetLabels()).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy))
				g.Expect(meta.GetLabels()).To(HaveKeyWithValue(ownership.LabelName, "memcached"))
				g.Expect(len(meta.GetLabels()[ownership.LabelInstance])).To(BeNumerically("<=", 63))
			}

			g.Expect(*dep.Spec.Replicas).To(Equal(tc.replicas))
			selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(selector.Matches(labels.Set(dep.Spec.Template.Labels))).To(BeTrue(), "the Deployment selects its own pods")
			g.Expect(selector.String()).To(Equal(memcached.Selector(tc.mc)), "status.selector names the same pods")
			g.Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels))).To(BeTrue(), "the Service lists the pods")

			pod := dep.Spec.Template.Spec
			g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
			g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
			g.Expect(*pod.SecurityContext.RunAsUser).To(Equal(int64(1001)))
			g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			g.Expect(pod.Containers).To(HaveLen(2), "memcached and the exporter, on unless disabled")
			ctr := pod.Containers[0]
			g.Expect(ctr.Image).To(Equal(tc.image))
			g.Expect(ctr.Command).To(Equal([]string{"memcached"}))
			g.Expect(ctr.Args).To(ContainElements("-m", "64"))
			g.Expect(strings.Join(ctr.Args, " ")).To(ContainSubstring("-m 64 -o modern -v"))
			g.Expect(ctr.Args).To(ContainElements("-p", strconv.Itoa(int(tc.port))))
			g.Expect(ctr.Ports).To(Equal([]corev1.ContainerPort{{Name: "memcached", ContainerPort: tc.port, Protocol: corev1.ProtocolTCP}}))
			for _, probe := range []*corev1.Probe{ctr.ReadinessProbe, ctr.LivenessProbe} {
				g.Expect(probe).NotTo(BeNil())
				g.Expect(probe.TCPSocket).NotTo(BeNil())
				g.Expect(probe.TCPSocket.Port).To(Equal(intstr.FromString("memcached")))
			}
			sc := ctr.SecurityContext
			g.Expect(*sc.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*sc.RunAsNonRoot).To(BeTrue())
			g.Expect(sc.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(sc.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				g.Expect(ctr.Resources.Requests).To(HaveKey(res))
				g.Expect(ctr.Resources.Limits).To(HaveKey(res))
			}
			cacheMemory := resource.MustParse("64Mi")
			g.Expect(ctr.Resources.Limits.Memory().Cmp(cacheMemory)).To(Equal(1), "the memory limit leaves room above -m 64")

			g.Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone), "headless")
			g.Expect(svc.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "memcached", Port: tc.port, TargetPort: intstr.FromString("memcached"), Protocol: corev1.ProtocolTCP}}))
		})
	}
}

// memcached reads a short option's value from the next argument: "-m=64"
// is the value "=64", which memcached 1.6 parses as 0 MB and refuses.
func TestArgsNeverJoinAShortOptionToItsValue(t *testing.T) {
	g := NewWithT(t)
	mc := &cachev1alpha1.Memcached{Spec: cachev1alpha1.MemcachedSpec{Size: 1, ContainerPort: 11211}}
	for _, arg := range memcached.Args(mc) {
		g.Expect(arg).NotTo(MatchRegexp(`^-[a-zA-Z]=`))
	}
}

// spec.podTemplate reaches the Deployment's pods and replaces the default
// anti-affinity; without it the default stays.
func TestDesiredDeploymentPlacement(t *testing.T) {
	g := NewWithT(t)
	m := builders.Memcached("ns", "placed").Size(1).Obj()
	dep := memcached.DesiredDeployment(m, memcached.DefaultImage, memcached.DefaultExporterImage)
	g.Expect(dep.Spec.Template.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution).To(HaveLen(1), "the default")
	g.Expect(dep.Spec.Template.Spec.NodeSelector).To(BeNil())

	m.Spec.PodTemplate = builders.PodTemplate()
	dep = memcached.DesiredDeployment(m, memcached.DefaultImage, memcached.DefaultExporterImage)
	builders.ExpectPodTemplate(g, dep.Spec.Template, dep.Spec.Selector.MatchLabels)
	g.Expect(dep.Labels).NotTo(HaveKey("team"), "pod labels are the pods' only")
}

// The exporter sidecar: on by default with small resources, the image and
// resources of spec.monitoring.exporter when set, gone when disabled, and
// always restricted.
func TestExporterSidecar(t *testing.T) {
	own := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("48Mi")}}
	for _, tc := range []struct {
		name       string
		monitoring *shared.Monitoring
		port       int32
		want       bool
		image      string
		resources  *corev1.ResourceRequirements
	}{
		{name: "absent: on", want: true, image: "mgr:1", port: 11211},
		{name: "empty: on", monitoring: &shared.Monitoring{}, want: true, image: "mgr:1", port: 11211},
		{name: "on another port", monitoring: &shared.Monitoring{}, want: true, image: "mgr:1", port: 12345},
		{name: "PodMonitor disabled keeps the exporter", monitoring: &shared.Monitoring{PodMonitor: &shared.PodMonitor{Disabled: true}}, want: true, image: "mgr:1", port: 11211},
		{name: "own image and resources", monitoring: &shared.Monitoring{Exporter: &shared.Exporter{Image: "exp:2", Resources: &own}}, want: true, image: "exp:2", resources: &own, port: 11211},
		{name: "disabled", monitoring: &shared.Monitoring{Exporter: &shared.Exporter{Disabled: true, Image: "exp:2"}}, port: 11211},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := builders.Memcached("ns", "mc").Size(1).Obj()
			m.Spec.ContainerPort = tc.port
			m.Spec.Monitoring = tc.monitoring
			pod := memcached.DesiredDeployment(m, "memcached:1", "mgr:1").Spec.Template.Spec
			if !tc.want {
				g.Expect(pod.Containers).To(HaveLen(1))
				g.Expect(pod.Containers[0].Name).To(Equal("memcached"))
				return
			}
			g.Expect(pod.Containers).To(HaveLen(2))
			ctr := pod.Containers[1]
			g.Expect(ctr.Name).To(Equal(memcached.ExporterContainerName))
			g.Expect(ctr.Image).To(Equal(tc.image))
			g.Expect(ctr.Command).To(Equal([]string{"/manager"}))
			g.Expect(ctr.Args).To(Equal([]string{"memcached-exporter", "--listen", ":9150", "--address", "127.0.0.1:" + strconv.Itoa(int(tc.port))}))
			g.Expect(ctr.Ports).To(Equal([]corev1.ContainerPort{{Name: "metrics", ContainerPort: 9150, Protocol: corev1.ProtocolTCP}}))
			g.Expect(ctr.LivenessProbe.HTTPGet.Port).To(Equal(intstr.FromString("metrics")))
			sc := ctr.SecurityContext
			g.Expect(*sc.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*sc.ReadOnlyRootFilesystem).To(BeTrue())
			g.Expect(*sc.RunAsNonRoot).To(BeTrue())
			g.Expect(sc.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(sc.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			if tc.resources != nil {
				g.Expect(ctr.Resources).To(Equal(*tc.resources))
			} else {
				g.Expect(ctr.Resources.Limits.Memory().String()).To(Equal("64Mi"))
				g.Expect(ctr.Resources.Requests.Cpu().String()).To(Equal("10m"))
			}
		})
	}
}

// The PodMonitor selects exactly the Memcached's pods, scrapes their
// "metrics" port, and takes the spec's interval and labels without letting
// them replace the operator's own.
func TestDesiredPodMonitor(t *testing.T) {
	g := NewWithT(t)
	m := builders.Memcached("ns", "mc").Size(1).Obj()
	pm := memcached.DesiredPodMonitor(m)
	g.Expect(pm.GroupVersionKind().String()).To(Equal("monitoring.coreos.com/v1, Kind=PodMonitor"))
	g.Expect(pm.GetName()).To(Equal("mc"))
	g.Expect(pm.GetNamespace()).To(Equal("ns"))
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	dep := memcached.DesiredDeployment(m, "a", "b")
	g.Expect(sel).To(Equal(dep.Spec.Selector.MatchLabels))
	g.Expect(labels.SelectorFromSet(sel).Matches(labels.Set(dep.Spec.Template.Labels))).To(BeTrue())
	endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	g.Expect(endpoints).To(Equal([]any{map[string]any{"port": "metrics", "path": "/metrics"}}))

	m.Spec.Monitoring = &shared.Monitoring{PodMonitor: &shared.PodMonitor{Interval: "15s", Labels: map[string]string{"release": "prom", ownership.LabelManagedBy: "someone"}}}
	pm = memcached.DesiredPodMonitor(m)
	endpoints, _, _ = unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	g.Expect(endpoints).To(Equal([]any{map[string]any{"port": "metrics", "path": "/metrics", "interval": "15s"}}))
	g.Expect(pm.GetLabels()).To(HaveKeyWithValue("release", "prom"))
	g.Expect(pm.GetLabels()).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy), "the operator's labels win")
}
