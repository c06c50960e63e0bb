package tdset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/placement"
	"github.com/multi-operator/multi-operator/pkg/podsecurity"
)

const (
	// appName is the app.kubernetes.io/name of every child.
	appName = "tdset"
	// ContainerName names the one container of the Deployment's pods.
	ContainerName = "app"
	// PortName names the container's port; the Service targets it by name,
	// so a changed spec.container.port needs no Service change.
	PortName = "http"
	// runAsUser is "nobody". The TDSet API names no user, and images such
	// as crccheck/hello-world run as root upstream, which the restricted Pod
	// Security Standard forbids; 65534 exists in most base images and needs
	// no write access to serve from a read-only root file system.
	runAsUser = 65534
)

// resources suit a small web app such as crccheck/hello-world; the TDSet
// API, kept from the original, has no field for them.
var resources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("50m"),
		corev1.ResourceMemory: resource.MustParse("64Mi"),
	},
	Limits: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("500m"),
		corev1.ResourceMemory: resource.MustParse("256Mi"),
	},
}

// DesiredDeployment is the Deployment that runs tds's container with
// replicas pods; nil replicas leaves an existing Deployment's count alone
// (an HPA owns it). It is named after the TDSet; its selector uses only the
// labels that never change, since a Deployment's selector is immutable.
// spec.podTemplate places its pods.
func DesiredDeployment(tds *schedulev2.TDSet, replicas *int32) *appsv1.Deployment {
	labels := ownership.Labels(appName, tds.Name)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      tds.Name,
			Namespace: tds.Namespace,
			Labels:    labels,
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: ownership.SelectorLabels(appName, tds.Name)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext:              podsecurity.PodContext(runAsUser),
					Containers: []corev1.Container{{
						Name:  ContainerName,
						Image: tds.Spec.Container.Image,
						Ports: []corev1.ContainerPort{{
							Name:          PortName,
							ContainerPort: tds.Spec.Container.Port,
							Protocol:      corev1.ProtocolTCP,
						}},
						// A pod counts as available once it accepts connections,
						// so Ready means the scheduled count can serve.
						ReadinessProbe: &corev1.Probe{
							ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(PortName)}},
						},
						SecurityContext: podsecurity.ContainerContext(),
						Resources:       *resources.DeepCopy(),
					}},
				},
			},
		},
	}
	placement.Apply(dep, &dep.Spec.Template, tds.Spec.PodTemplate)
	return dep
}
