package tdset

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
)

func TestDesiredService(t *testing.T) {
	for _, tc := range []struct {
		name    string
		service *schedulev2.ServiceSpec
		port    int32 // 0: no Service
	}{
		{name: "no service", service: nil},
		{name: "service without a port", service: &schedulev2.ServiceSpec{}},
		{name: "port 80", service: &schedulev2.ServiceSpec{Port: 80}, port: 80},
		{name: "port 65535", service: &schedulev2.ServiceSpec{Port: 65535}, port: 65535},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tds := tdset("web", func(t *schedulev2.TDSet) { t.Spec.Service = tc.service })
			svc := DesiredService(tds)
			if tc.port == 0 {
				g.Expect(svc).To(BeNil())
				return
			}
			g.Expect(svc.Name).To(Equal("web"))
			g.Expect(svc.Namespace).To(Equal("ns"))
			g.Expect(svc.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
			g.Expect(svc.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "http", Port: tc.port, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}))
			g.Expect(svc.Spec.Selector).To(Equal(DesiredDeployment(tds, ptr.To[int32](1)).Spec.Selector.MatchLabels), "selects the Deployment's pods")
		})
	}
}
