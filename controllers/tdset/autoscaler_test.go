package tdset

import (
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

func TestDesiredAutoscaler(t *testing.T) {
	for _, tc := range []struct {
		name        string
		autoscaling *schedulev2.Autoscaling
		minReplicas *int32
		wantNil     bool
		max         int32
		target      int32
	}{
		{name: "no autoscaling, no HPA", minReplicas: ptr.To[int32](3), wantNil: true},
		{name: "the schedule's count is the floor", autoscaling: &schedulev2.Autoscaling{MaxReplicas: 10}, minReplicas: ptr.To[int32](5), max: 10, target: 80},
		{name: "a target of its own", autoscaling: &schedulev2.Autoscaling{MaxReplicas: 4, TargetCPUUtilizationPercentage: ptr.To[int32](50)}, minReplicas: ptr.To[int32](4), max: 4, target: 50},
		{name: "suspended: the floor is left alone", autoscaling: &schedulev2.Autoscaling{MaxReplicas: 10, TargetCPUUtilizationPercentage: ptr.To[int32](1000)}, max: 10, target: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tds := builders.TDSet("ns", "web").Obj()
			tds.Spec.Autoscaling = tc.autoscaling
			hpa := DesiredAutoscaler(tds, tc.minReplicas)
			if tc.wantNil {
				g.Expect(hpa).To(BeNil())
				return
			}
			g.Expect(hpa.Name).To(Equal("web"))
			g.Expect(hpa.Namespace).To(Equal("ns"))
			g.Expect(hpa.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(hpa.Labels).To(Equal(DesiredDeployment(tds, nil).Labels), "labelled like the other children, so the cache sees it")
			g.Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}))
			g.Expect(hpa.Spec.MinReplicas).To(Equal(tc.minReplicas))
			g.Expect(hpa.Spec.MaxReplicas).To(Equal(tc.max))
			g.Expect(hpa.Spec.Metrics).To(Equal([]autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(tc.target)},
				},
			}}))
			g.Expect(hpa.Spec.Behavior).To(BeNil(), "the HPA's own defaults")
			if as := tc.autoscaling.TargetCPUUtilizationPercentage; as != nil {
				g.Expect(hpa.Spec.Metrics[0].Resource.Target.AverageUtilization).NotTo(BeIdenticalTo(as), "shares no pointer with the spec")
			}
		})
	}
}
