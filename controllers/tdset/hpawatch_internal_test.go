package tdset

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// The HPAs' cache keeps of an HPA only what the TDSet reads, and an
// update of what it drops (the HPA controller's metrics and conditions)
// reconciles no TDSet.
func TestHPACacheKeepsOnlyWhatTheTDSetReads(t *testing.T) {
	g := NewWithT(t)
	in := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "a", Name: "web", UID: "u1", ResourceVersion: "42", Generation: 3,
			Labels:        map[string]string{"app": "web"},
			Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 1<<16)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 8,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU}}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: 3, DesiredReplicas: 4,
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.ScalingActive}},
		},
	}
	out, err := hpaTransform(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(&autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", UID: "u1", ResourceVersion: "42", Generation: 3},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: in.Spec.ScaleTargetRef, MinReplicas: ptr.To[int32](2), MaxReplicas: 8,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4},
	}))
	g.Expect(indexHPATarget(out.(*autoscalingv2.HorizontalPodAutoscaler))).To(Equal([]string{"apps/Deployment/web"}))

	same := trimHPA(in)
	same.ResourceVersion = "43"
	g.Expect(hpaChanged.Update(event.UpdateEvent{ObjectOld: trimHPA(in), ObjectNew: same})).To(BeFalse(), "only the resourceVersion changed")
	raised := trimHPA(in)
	raised.Spec.MinReplicas = ptr.To[int32](1)
	g.Expect(hpaChanged.Update(event.UpdateEvent{ObjectOld: trimHPA(in), ObjectNew: raised})).To(BeTrue())
	g.Expect(hpaTransform("tombstone")).To(Equal("tombstone"))
}
