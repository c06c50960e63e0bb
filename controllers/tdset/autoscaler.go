package tdset

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// defaultTargetCPU is the HPA's target when spec.autoscaling names none.
// The CRD does not default it (it would set it with hpaRef too, where it
// is refused); objects stored while it did hold 80 already.
const defaultTargetCPU = 80

// DesiredAutoscaler is the HorizontalPodAutoscaler that scales tds's
// Deployment between minReplicas (the schedule's count) and
// spec.autoscaling.maxReplicas on CPU utilization, or nil without
// spec.autoscaling or with hpaRef (an HPA the TDSet does not create). A nil minReplicas leaves an existing HPA's floor alone
// (suspended).
func DesiredAutoscaler(tds *schedulev2.TDSet, minReplicas *int32) *autoscalingv2.HorizontalPodAutoscaler {
	as := tds.Spec.Autoscaling
	if as == nil || as.HPARef != nil {
		return nil
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name:      tds.Name,
			Namespace: tds.Namespace,
			Labels:    ownership.Labels(appName, tds.Name),
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: tds.Name},
			MinReplicas:    minReplicas,
			MaxReplicas:    as.MaxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{
						Type:               autoscalingv2.UtilizationMetricType,
						AverageUtilization: ptr.To(ptr.Deref(as.TargetCPUUtilizationPercentage, defaultTargetCPU)),
					},
				},
			}},
		},
	}
}
