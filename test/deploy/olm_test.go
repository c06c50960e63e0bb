package deploy

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// olmTargetNamespaces is the pod template annotation in which OLM passes
// the OperatorGroup's target namespaces to the operator.
const olmTargetNamespaces = "olm.targetNamespaces"

// TestNamespacedBundleNeedsOnlyItsPermissions installs the CSV of
// dist/bundle-namespaced the way OLM does for a MultiNamespace
// OperatorGroup with two target namespaces (its permissions as Roles and
// RoleBindings in the operator's namespace and copied into each target,
// its clusterPermissions as ClusterRoles and ClusterRoleBindings, the
// targets in the pod's olm.targetNamespaces) and runs its controllers as
// its ServiceAccount: the samples in the targets are reconciled, one in a
// third namespace is never touched, and no request is Forbidden.
func TestNamespacedBundleNeedsOnlyItsPermissions(t *testing.T) {
	env := testenv.Get(t)
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "dist", "bundle-namespaced"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.CSV).NotTo(BeNil())
	targets := []string{env.Namespace(t), env.Namespace(t)}

	objs := append([]*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}}},
		olmRBAC(g, b.CSV, namespace, targets)...)
	spec := b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0]
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Namespace: namespace}, Spec: spec.Spec}
	metav1.SetMetaDataAnnotation(&dep.Spec.Template.ObjectMeta, olmTargetNamespaces, strings.Join(targets, ","))
	objs = append(objs, toUnstructured(g, dep))
	o := decode(t, filepath.Join(root, "dist", "bundle-namespaced"), objs)
	g.Expect(o.Manager.Spec.Template.Spec.ServiceAccountName).To(Equal(serviceAcount), "asManager impersonates it")
	applyRBAC(t, env, o)
	g.Expect(managerWatchNamespaces(o.Manager)).To(Equal(targets), "the manager reads OLM's target namespaces from WATCH_NAMESPACE")

	enabled, _, err := manager.Select(controllers.All(), o.Components)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manager.Names(enabled)).To(ConsistOf("memcached", "rediscluster", "redisclusterbackup", "redisclusterbackupschedule", "whalesay"))
	expectWatchesOnly(t, env, enabled, targets, env.Namespace(t))
}

// olmRBAC are the roles and bindings OLM makes of csv installed in
// operatorNS for the OperatorGroup's targets (operator-lifecycle-manager:
// the install strategy creates each permissions entry as a Role and
// RoleBinding in the operator's namespace and each clusterPermissions
// entry as a ClusterRole and ClusterRoleBinding; the OperatorGroup
// controller's ensureTenantRBAC copies the Roles and RoleBindings into
// every target namespace, or for all namespaces ensureSingletonRBAC lifts
// them to ClusterRoles and ClusterRoleBindings).
func olmRBAC(g Gomega, csv *v1alpha1.ClusterServiceVersion, operatorNS string, targets []string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	strategy := csv.Spec.InstallStrategy.StrategySpec
	subject := func(sa string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: operatorNS}}
	}
	for i, p := range strategy.Permissions {
		name := fmt.Sprintf("%s-%d", csv.Name, i)
		for _, ns := range append([]string{operatorNS}, targets...) {
			meta := metav1.ObjectMeta{Name: name, Namespace: ns}
			out = append(out,
				toUnstructured(g, &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta, Rules: p.Rules}),
				toUnstructured(g, &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: subject(p.ServiceAccountName)}))
		}
	}
	for i, p := range strategy.ClusterPermissions {
		meta := metav1.ObjectMeta{Name: fmt.Sprintf("%s-cluster-%d", csv.Name, i)}
		out = append(out,
			toUnstructured(g, &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: meta, Rules: p.Rules}),
			toUnstructured(g, &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: meta,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}, Subjects: subject(p.ServiceAccountName)}))
	}
	return out
}

// toUnstructured converts a typed object, as decode takes them.
func toUnstructured(g Gomega, obj runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(HaveOccurred())
	return &unstructured.Unstructured{Object: m}
}
