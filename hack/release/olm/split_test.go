package olm

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// TestSplitFollowsTheDeploymentsNamespace: the ServiceAccount a binding
// folds into the CSV is the Deployment's, in the Deployment's namespace,
// whatever namespace the overlay installs to.
func TestSplitFollowsTheDeploymentsNamespace(t *testing.T) {
	const objs = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: mgr, namespace: ops}
spec: {template: {spec: {serviceAccountName: mgr, containers: [{name: manager, image: m}]}}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: mgr, namespace: ops}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: mgr, namespace: ops}]
`
	for _, tc := range []struct {
		name, extra string
		// elsewhere is the fate of the extra binding.
		elsewhere Fate
	}{
		{name: "the Deployment's ServiceAccount"},
		{name: "a namesake in another namespace", elsewhere: AsManifest, extra: `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: elsewhere}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: mgr, namespace: other}]
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in, err := overlay.Decode([]byte(objs + tc.extra))
			g.Expect(err).NotTo(HaveOccurred())
			s, err := splitOverlay(in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.clusterPermissions).To(HaveLen(1))
			g.Expect(s.clusterPermissions[0].ServiceAccountName).To(Equal("mgr"))
			g.Expect(s.clusterPermissions[0].Rules[0].Resources).To(Equal([]string{"pods"}))
			fates := map[string]Fate{}
			for _, p := range s.placements {
				fates[p.Key] = p.Fate
			}
			g.Expect(fates).To(HaveKeyWithValue("ServiceAccount/ops/mgr", Omitted))
			g.Expect(fates).To(HaveKeyWithValue("ClusterRoleBinding//reader", InCSV), "folded into clusterPermissions")
			if tc.elsewhere != "" {
				g.Expect(fates).To(HaveKeyWithValue("ClusterRoleBinding//elsewhere", tc.elsewhere), "a binding of someone else's account stays a binding")
			}
		})
	}
}
