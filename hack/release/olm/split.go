package olm

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// Fate is where an object of the overlay ends up in the bundle.
type Fate string

// The fates of overlay objects.
const (
	// InCSV: the Deployment, the roles and bindings of its ServiceAccount
	// (as permissions and clusterPermissions) and the webhook
	// configurations (as webhookdefinitions).
	InCSV Fate = "csv"
	// AsCRD: a CRD, owned by the CSV.
	AsCRD Fate = "crd"
	// AsManifest: a plain manifest of a kind registry+v1 bundles carry.
	AsManifest Fate = "manifest"
	// Omitted: OLM makes it itself, or a bundle cannot carry it.
	Omitted Fate = "omitted"
)

// Placement says what became of one overlay object, and why.
type Placement struct {
	// Key is overlay.Key of the object.
	Key string
	// Fate is where it went.
	Fate Fate
	// Why explains an omission.
	Why string
}

// plainKinds are the kinds besides CRDs, roles, bindings, ServiceAccounts
// and Services that OLM installs from a bundle (operator-lifecycle-manager,
// pkg/controller/operators/catalog/supportedresources.go, and the kinds the
// catalog operator handles by name).
var plainKinds = map[string]bool{
	"ConfigMap": true, "PodDisruptionBudget": true, "PriorityClass": true, "VerticalPodAutoscaler": true,
	"PrometheusRule": true, "ServiceMonitor": true, "NetworkPolicy": true, "ConsoleYAMLSample": true,
	"ConsoleQuickStart": true, "ConsoleCLIDownload": true, "ConsoleLink": true, "ConsolePlugin": true,
	"ClusterRole": true, "Role": true, "ClusterRoleBinding": true, "RoleBinding": true,
	"Service": true, "ServiceAccount": true,
}

// omittedKinds are kinds the overlay has that a bundle leaves out, and why.
var omittedKinds = map[string]string{
	"Namespace": "OLM installs into the namespace of the OperatorGroup the user picks",
	"Secret": "a bundle ships no Secret: the overlay's is the manager's own webhook certificate, " +
		"and under OLM the manager serves the certificate OLM issues and mounts",
	"MutatingAdmissionPolicy": "registry+v1 bundles cannot carry admission policies; " +
		"the Memcached controller then adds its finalizer itself",
	"MutatingAdmissionPolicyBinding":   "registry+v1 bundles cannot carry admission policies (see MutatingAdmissionPolicy)",
	"ValidatingAdmissionPolicy":        "registry+v1 bundles cannot carry admission policies",
	"ValidatingAdmissionPolicyBinding": "registry+v1 bundles cannot carry admission policies",
}

// split is the overlay sorted by fate.
type split struct {
	deployments, crds, manifests, webhookConfigs []*unstructured.Unstructured
	// permissions and clusterPermissions are the rules of the roles bound
	// to the Deployments' ServiceAccounts, per ServiceAccount.
	permissions, clusterPermissions []v1alpha1.StrategyDeploymentPermissions
	placements                      []Placement
}

// splitOverlay decides the fate of every overlay object.
func splitOverlay(objs []*unstructured.Unstructured) (*split, error) {
	s := &split{}
	// The Deployments' ServiceAccounts, by namespace/name.
	serviceAccounts := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			sa, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
			serviceAccounts[o.GetNamespace()+"/"+cmp.Or(sa, "default")] = true
		}
	}
	bound, clusterWide, err := boundRoles(objs, serviceAccounts)
	if err != nil {
		return nil, err
	}
	webhookServices, err := webhookServiceKeys(objs)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		fate, why, err := s.place(o, serviceAccounts, bound, webhookServices)
		if err != nil {
			return nil, err
		}
		s.placements = append(s.placements, Placement{Key: overlay.Key(o), Fate: fate, Why: why})
	}
	if len(s.deployments) == 0 {
		return nil, fmt.Errorf("the overlay has no Deployment to install")
	}
	s.permissions, s.clusterPermissions, err = permissionsOf(objs, bound, clusterWide)
	return s, err
}

// place files o under its fate.
func (s *split) place(o *unstructured.Unstructured, serviceAccounts map[string]bool, bound map[string][]string, webhookServices map[string]bool) (Fate, string, error) {
	kind := o.GetKind()
	switch {
	case kind == "Deployment":
		s.deployments = append(s.deployments, o)
		return InCSV, "", nil
	case kind == "CustomResourceDefinition":
		s.crds = append(s.crds, o)
		return AsCRD, "", nil
	case kind == "ValidatingWebhookConfiguration" || kind == "MutatingWebhookConfiguration":
		s.webhookConfigs = append(s.webhookConfigs, o)
		return InCSV, "", nil
	case kind == "ServiceAccount" && serviceAccounts[o.GetNamespace()+"/"+o.GetName()]:
		return Omitted, "OLM creates the ServiceAccount the Deployment names and grants it the CSV's permissions", nil
	case kind == "Service" && webhookServices[serviceKey(o.GetNamespace(), o.GetName())]:
		return Omitted, "OLM creates a Service <deployment>-service in front of the webhook port", nil
	case len(bound[roleKey(o)]) > 0 || isFoldedBinding(o, serviceAccounts):
		return InCSV, "", nil
	case omittedKinds[kind] != "":
		return Omitted, omittedKinds[kind], nil
	case plainKinds[kind]:
		s.manifests = append(s.manifests, withoutNamespace(o))
		return AsManifest, "", nil
	}
	return "", "", fmt.Errorf("%s: registry+v1 bundles cannot carry kind %s; leave it out of the overlay or add it to omittedKinds with the reason", overlay.Key(o), kind)
}

// withoutNamespace is o without metadata.namespace: OLM puts a bundle's
// namespaced objects into the namespace it installs to.
func withoutNamespace(o *unstructured.Unstructured) *unstructured.Unstructured {
	c := o.DeepCopy()
	c.SetNamespace("")
	return c
}

// roleKey names a role as bindings refer to it: kind/namespace/name (no
// namespace for a ClusterRole).
func roleKey(o *unstructured.Unstructured) string {
	if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
		return ""
	}
	return overlay.Key(o)
}

// binding is a RoleBinding or ClusterRoleBinding of the overlay.
func binding(o *unstructured.Unstructured) (*rbacv1.RoleBinding, bool) {
	if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
		return nil, false
	}
	b := &rbacv1.RoleBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, b); err != nil {
		return nil, false
	}
	return b, true
}

// isFoldedBinding tells whether o binds a role to the Deployments'
// ServiceAccounts only, so that the CSV's permissions say the same.
func isFoldedBinding(o *unstructured.Unstructured, serviceAccounts map[string]bool) bool {
	b, ok := binding(o)
	if !ok || len(b.Subjects) == 0 {
		return false
	}
	for _, s := range b.Subjects {
		if !isServiceAccountOf(s, b, serviceAccounts) {
			return false
		}
	}
	return true
}

// isServiceAccountOf tells whether a subject of b is one of the
// Deployments' ServiceAccounts (a RoleBinding's subject without a
// namespace is in the binding's).
func isServiceAccountOf(s rbacv1.Subject, b *rbacv1.RoleBinding, serviceAccounts map[string]bool) bool {
	return s.Kind == rbacv1.ServiceAccountKind && serviceAccounts[cmp.Or(s.Namespace, b.Namespace)+"/"+s.Name]
}

// boundRoles maps the key of every role bound to the Deployments'
// ServiceAccounts to those ServiceAccounts, and tells which ClusterRoles a
// ClusterRoleBinding grants (the others only a RoleBinding in the
// ServiceAccounts' namespace). A binding of one of them together with
// other subjects cannot be expressed in a CSV.
func boundRoles(objs []*unstructured.Unstructured, serviceAccounts map[string]bool) (bound map[string][]string, clusterWide map[string]bool, err error) {
	bound, clusterWide = map[string][]string{}, map[string]bool{}
	for _, o := range objs {
		b, ok := binding(o)
		if !ok {
			continue
		}
		if !isFoldedBinding(o, serviceAccounts) {
			for _, s := range b.Subjects {
				if isServiceAccountOf(s, b, serviceAccounts) {
					return nil, nil, fmt.Errorf("%s binds the manager's ServiceAccount with other subjects; a CSV cannot express that", overlay.Key(o))
				}
			}
			continue
		}
		key := overlay.KeyOf(b.RoleRef.Kind, b.Namespace, b.RoleRef.Name)
		switch {
		case b.Kind == "ClusterRoleBinding":
			key = overlay.KeyOf(b.RoleRef.Kind, "", b.RoleRef.Name)
			clusterWide[key] = true
		case b.RoleRef.Kind == "ClusterRole":
			// The namespace-scoped mode: the rules in the manager's
			// namespace, which the CSV's permissions say (and OLM copies
			// into every target namespace). Elsewhere no CSV can say it.
			key = overlay.KeyOf(b.RoleRef.Kind, "", b.RoleRef.Name)
			for _, s := range b.Subjects {
				if cmp.Or(s.Namespace, b.Namespace) != b.Namespace {
					return nil, nil, fmt.Errorf("%s grants a ClusterRole outside the manager's namespace; a CSV's permissions hold only there and in the target namespaces", overlay.Key(o))
				}
			}
		}
		for _, s := range b.Subjects {
			if !slices.Contains(bound[key], s.Name) {
				bound[key] = append(bound[key], s.Name)
			}
		}
	}
	return bound, clusterWide, nil
}

// permissionsOf turns the bound roles into the CSV's permissions (Roles,
// and ClusterRoles that only RoleBindings grant) and clusterPermissions
// (ClusterRoles a ClusterRoleBinding grants), one entry per ServiceAccount
// (sorted), rules in the overlay's order of the roles.
func permissionsOf(objs []*unstructured.Unstructured, bound map[string][]string, clusterWide map[string]bool) (perms, clusterPerms []v1alpha1.StrategyDeploymentPermissions, err error) {
	ns, cluster := map[string][]rbacv1.PolicyRule{}, map[string][]rbacv1.PolicyRule{}
	for _, o := range objs {
		sas := bound[roleKey(o)]
		if len(sas) == 0 {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", overlay.Key(o), err)
		}
		into := ns
		if clusterWide[roleKey(o)] {
			into = cluster
		}
		for _, sa := range sas {
			into[sa] = append(into[sa], role.Rules...)
		}
	}
	return perServiceAccount(ns), perServiceAccount(cluster), nil
}

// perServiceAccount lists rules by ServiceAccount in name order.
func perServiceAccount(rules map[string][]rbacv1.PolicyRule) []v1alpha1.StrategyDeploymentPermissions {
	names := slices.Sorted(maps.Keys(rules))
	out := make([]v1alpha1.StrategyDeploymentPermissions, 0, len(names))
	for _, sa := range names {
		out = append(out, v1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: rules[sa]})
	}
	return out
}
