package deploy

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// admissionKinds are the objects of an overlay that mutate requests.
var admissionKinds = map[string]bool{"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true}

// TestMemcachedOverlayAddsTheFinalizerAtAdmission installs the memcached
// overlay's admission policy, as built, and creates Memcacheds with no
// controller running: each comes back from its create with the finalizer
// exactly once, next to the finalizers it was created with.
func TestMemcachedOverlayAddsTheFinalizerAtAdmission(t *testing.T) {
	env := testenv.Get(t)
	g := NewWithT(t)
	policy := schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}
	if _, err := env.Client.RESTMapper().RESTMapping(policy, "v1"); meta.IsNoMatchError(err) {
		// Before Kubernetes 1.36: the controller adds the finalizer
		// itself there (controllers/memcached's TestSampleGivesExactChildren
		// runs without the policy).
		t.Skipf("the API server serves no %s v1 (GA since Kubernetes 1.36): the chart leaves the policy out there", policy)
	}
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	o := build(t, filepath.Join(root, "config", "overlays", "memcached"))
	installed := 0
	for _, obj := range o.Objects {
		if !admissionKinds[obj["kind"].(string)] {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		// kustomize does not know these kinds are cluster-scoped and gives
		// them the overlay's namespace, which the API server drops.
		u.SetNamespace("")
		g.Expect(env.Client.Create(context.Background(), u)).To(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		installed++
	}
	g.Expect(installed).To(Equal(2), "the overlay has the policy and its binding")

	ns := env.Namespace(t)
	create := func(g Gomega, finalizers ...string) []string {
		m := &cachev1alpha1.Memcached{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "admitted-", Namespace: ns, Finalizers: finalizers},
			Spec:       cachev1alpha1.MemcachedSpec{Size: 1},
		}
		g.Expect(env.Client.Create(context.Background(), m)).To(Succeed())
		// No controller runs here to remove the finalizer.
		t.Cleanup(func() {
			_ = env.Client.Patch(context.Background(), m, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			_ = env.Client.Delete(context.Background(), m)
		})
		return m.Finalizers
	}
	// The policy takes effect once the API server has loaded it.
	g.Eventually(func(g Gomega) {
		g.Expect(create(g)).To(Equal([]string{memcached.Finalizer}))
	}).Should(Succeed())
	g.Expect(create(g, "example.com/other")).To(Equal([]string{"example.com/other", memcached.Finalizer}))
	g.Expect(create(g, memcached.Finalizer)).To(Equal([]string{memcached.Finalizer}))
}
