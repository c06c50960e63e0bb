package apply

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

// DeploymentChange is what an update of a Deployment changed, as its
// owner's events report it: a scale, a new pod template, or both.
type DeploymentChange struct {
	// FromReplicas and ToReplicas are the replica counts before and after,
	// 1 where unset as the API server defaults it.
	FromReplicas, ToReplicas int32
	// TemplateChanged is true when the pod template changed, which rolls
	// out new pods.
	TemplateChanged bool
}

// Scaled reports whether the replica count changed.
func (c DeploymentChange) Scaled() bool { return c.FromReplicas != c.ToReplicas }

// DiffDeployment compares a Deployment before and after Apply updated it.
func DiffDeployment(before, after *appsv1.Deployment) DeploymentChange {
	return DeploymentChange{
		FromReplicas:    ptr.Deref(before.Spec.Replicas, 1),
		ToReplicas:      ptr.Deref(after.Spec.Replicas, 1),
		TemplateChanged: !equality.Semantic.DeepEqual(before.Spec.Template, after.Spec.Template),
	}
}
