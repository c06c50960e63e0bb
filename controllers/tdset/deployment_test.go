package tdset

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

func tdset(name string, mutate ...func(*schedulev2.TDSet)) *schedulev2.TDSet {
	tds := builders.TDSet("ns", name).Windows(builders.Window("09:00", "17:00", 5)).Obj()
	for _, m := range mutate {
		m(tds)
	}
	return tds
}

func TestDesiredDeployment(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tds      *schedulev2.TDSet
		replicas *int32 // nil: left to the HPA
		image    string
		port     int32
	}{
		{name: "the original's sample", tds: tdset("tdset-hello-world"), replicas: ptr.To[int32](5), image: "crccheck/hello-world", port: 8000},
		{name: "zero replicas", tds: tdset("night"), replicas: ptr.To[int32](0), image: "crccheck/hello-world", port: 8000},
		{name: "another image and port", tds: tdset("other", func(t *schedulev2.TDSet) {
			t.Spec.Container = schedulev2.ContainerSpec{Image: "registry.example/app:2", Port: 65535}
		}), replicas: ptr.To[int32](2), image: "registry.example/app:2", port: 65535},
		{name: "replicas left to the HPA", tds: tdset("scaled", func(t *schedulev2.TDSet) { t.Spec.Autoscaling = &schedulev2.Autoscaling{MaxReplicas: 10} }), image: "crccheck/hello-world", port: 8000},
		{name: "a name longer than a label value", tds: tdset(strings.Repeat("n", 200)), replicas: ptr.To[int32](1), image: "crccheck/hello-world", port: 8000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			dep := DesiredDeployment(tc.tds, tc.replicas)
			g.Expect(dep.Name).To(Equal(tc.tds.Name))
			g.Expect(dep.Namespace).To(Equal("ns"))
			g.Expect(dep.Spec.Replicas).To(Equal(tc.replicas))
			g.Expect(dep.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(dep.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "tdset"))
			for k, v := range dep.Labels {
				g.Expect(len(v)).To(BeNumerically("<=", 63), k)
			}
			selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(selector.Matches(labels.Set(dep.Spec.Template.Labels))).To(BeTrue(), "the selector matches the pods")
			g.Expect(dep.Spec.Selector.MatchLabels).NotTo(HaveKey("app.kubernetes.io/part-of"), "only labels that never change")

			pod := dep.Spec.Template.Spec
			g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
			g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
			g.Expect(*pod.SecurityContext.RunAsUser).To(Equal(int64(65534)))
			g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			g.Expect(pod.Containers).To(HaveLen(1))
			ctr := pod.Containers[0]
			g.Expect(ctr.Image).To(Equal(tc.image))
			g.Expect(ctr.Ports).To(Equal([]corev1.ContainerPort{{Name: "http", ContainerPort: tc.port, Protocol: corev1.ProtocolTCP}}))
			g.Expect(ctr.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromString("http")))
			g.Expect(*ctr.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*ctr.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
			g.Expect(ctr.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				g.Expect(ctr.Resources.Requests).To(HaveKey(r))
				g.Expect(ctr.Resources.Limits).To(HaveKey(r))
				req, limit := ctr.Resources.Requests[r], ctr.Resources.Limits[r]
				g.Expect(req.Cmp(limit)).To(BeNumerically("<=", 0), "request <= limit for %s", r)
			}
		})
	}
}

func TestDesiredDeploymentsDoNotShareResources(t *testing.T) {
	g := NewWithT(t)
	a := DesiredDeployment(tdset("a"), ptr.To[int32](1))
	a.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = a.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	b := DesiredDeployment(tdset("b"), ptr.To[int32](1))
	g.Expect(b.Spec.Template.Spec.Containers[0].Resources.Limits.Cpu().String()).To(Equal("500m"))
}

// spec.podTemplate reaches the Deployment's pods, which have no default
// placement otherwise.
func TestDesiredDeploymentPlacement(t *testing.T) {
	g := NewWithT(t)
	plain := DesiredDeployment(tdset("plain"), ptr.To[int32](1)).Spec.Template.Spec
	g.Expect(plain.Affinity).To(BeNil())
	g.Expect(plain.Tolerations).To(BeNil())

	dep := DesiredDeployment(tdset("placed", func(t *schedulev2.TDSet) { t.Spec.PodTemplate = builders.PodTemplate() }), ptr.To[int32](1))
	builders.ExpectPodTemplate(g, dep.Spec.Template, dep.Spec.Selector.MatchLabels)
}
