package tdset

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// wantsService reports whether tds asks for a Service: spec.service.port is set.
func wantsService(tds *schedulev2.TDSet) bool {
	return tds.Spec.Service != nil && tds.Spec.Service.Port != 0
}

// DesiredService is the ClusterIP Service, named after the TDSet, that
// forwards spec.service.port to the container's http port; nil when the
// TDSet asks for none.
func DesiredService(tds *schedulev2.TDSet) *corev1.Service {
	if !wantsService(tds) {
		return nil
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      tds.Name,
			Namespace: tds.Namespace,
			Labels:    ownership.Labels(appName, tds.Name),
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: ownership.SelectorLabels(appName, tds.Name),
			Ports: []corev1.ServicePort{{
				Name:       PortName,
				Port:       tds.Spec.Service.Port,
				TargetPort: intstr.FromString(PortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}
