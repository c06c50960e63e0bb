package testenv

import (
	"context"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetDeploymentStatus plays the Deployment controller, which envtest does
// not run: it writes the status that controller would write for the
// Deployment's current spec, with available of its replicas available and
// the given conditions. It retries when a controller under test wrote the
// Deployment meanwhile.
func SetDeploymentStatus(g gomega.Gomega, c client.Client, key client.ObjectKey, available int32, conds ...appsv1.DeploymentCondition) {
	g.Eventually(func(g gomega.Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c.Get(context.Background(), key, dep)).To(gomega.Succeed())
		n := ptr.Deref(dep.Spec.Replicas, 1)
		dep.Status = appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation,
			Replicas:           n,
			UpdatedReplicas:    n,
			ReadyReplicas:      available,
			AvailableReplicas:  available,
			Conditions:         conds,
		}
		g.Expect(c.Status().Update(context.Background(), dep)).To(gomega.Succeed())
	}).Should(gomega.Succeed())
}

// MakeDeploymentAvailable is SetDeploymentStatus with every replica of the
// current spec available.
func MakeDeploymentAvailable(g gomega.Gomega, c client.Client, key client.ObjectKey) {
	dep := &appsv1.Deployment{}
	g.Expect(c.Get(context.Background(), key, dep)).To(gomega.Succeed())
	SetDeploymentStatus(g, c, key, ptr.Deref(dep.Spec.Replicas, 1))
}
