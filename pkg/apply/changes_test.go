package apply_test

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/multi-operator/multi-operator/pkg/apply"
)

func TestDiffDeployment(t *testing.T) {
	dep := func(replicas *int32, image string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Spec.Replicas = replicas
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: image}}
		return d
	}
	for _, tc := range []struct {
		name          string
		before, after *appsv1.Deployment
		want          apply.DeploymentChange
		scaled        bool
	}{
		{"nothing", dep(ptr.To[int32](2), "a"), dep(ptr.To[int32](2), "a"), apply.DeploymentChange{FromReplicas: 2, ToReplicas: 2}, false},
		{"scale", dep(ptr.To[int32](5), "a"), dep(ptr.To[int32](2), "a"), apply.DeploymentChange{FromReplicas: 5, ToReplicas: 2}, true},
		{"template", dep(ptr.To[int32](2), "a"), dep(ptr.To[int32](2), "b"), apply.DeploymentChange{FromReplicas: 2, ToReplicas: 2, TemplateChanged: true}, false},
		{"both", dep(ptr.To[int32](0), "a"), dep(ptr.To[int32](3), "b"), apply.DeploymentChange{FromReplicas: 0, ToReplicas: 3, TemplateChanged: true}, true},
		{"unset replicas count as 1", dep(nil, "a"), dep(ptr.To[int32](1), "a"), apply.DeploymentChange{FromReplicas: 1, ToReplicas: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := apply.DiffDeployment(tc.before, tc.after)
			g.Expect(got).To(Equal(tc.want))
			g.Expect(got.Scaled()).To(Equal(tc.scaled))
		})
	}
}
