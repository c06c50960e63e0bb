package builders

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
)

// ScaleTarget makes the TDSet scale an existing workload instead of
// creating a Deployment: spec.scaleTargetRef is set and spec.container
// cleared, as exactly one of them must be set.
func (w *TDSetWrapper) ScaleTarget(apiVersion, kind, name string) *TDSetWrapper {
	w.Spec.Container = schedulev2.ContainerSpec{}
	w.Spec.ScaleTargetRef = &schedulev2.ScaleTargetRef{APIVersion: apiVersion, Kind: kind, Name: name}
	return w
}

// OnDelete sets spec.onDelete.
func (w *TDSetWrapper) OnDelete(policy schedulev2.OnDeletePolicy) *TDSetWrapper {
	w.Spec.OnDelete = policy
	return w
}

// workloadPod is the pod template of the workloads below: one container
// that a test never runs (envtest has no kubelet), selected by app=name.
func workloadPod(name string) (*metav1.LabelSelector, corev1.PodTemplateSpec) {
	labels := map[string]string{"app": name}
	return &metav1.LabelSelector{MatchLabels: labels}, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
}

// Deployment is a user's Deployment of replicas pods, as a TDSet's
// scaleTargetRef names one: not created by any controller of this project.
func Deployment(ns, name string, replicas int32) *appsv1.Deployment {
	selector, template := workloadPod(name)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: selector, Template: template},
	}
}

// StatefulSet is a user's StatefulSet of replicas pods.
func StatefulSet(ns, name string, replicas int32) *appsv1.StatefulSet {
	selector, template := workloadPod(name)
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: selector, Template: template},
	}
}

// ReplicaSet is a user's bare ReplicaSet of replicas pods, owned by no
// Deployment.
func ReplicaSet(ns, name string, replicas int32) *appsv1.ReplicaSet {
	selector, template := workloadPod(name)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: selector, Template: template},
	}
}

// HPARef makes spec.autoscaling name an existing HPA (hpaRef), with
// maxReplicas when it is not 0.
func (w *TDSetWrapper) HPARef(name string, maxReplicas int32) *TDSetWrapper {
	w.Spec.Autoscaling = &schedulev2.Autoscaling{HPARef: &schedulev2.HPARef{Name: name}, MaxReplicas: maxReplicas}
	return w
}

// HPA is a user's autoscaling/v2 HorizontalPodAutoscaler of the workload
// apiVersion, kind and target, between minReplicas and maxReplicas: not
// created by any controller of this project.
func HPA(ns, name, apiVersion, kind, target string, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    maxReplicas,
		},
	}
}
