package apis

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// A custom resource stored before a podTemplate rule existed (as after an
// upgrade) may still be updated in its other fields: the API server
// ratchets the rules of an atomic list that the update leaves as it was,
// as docs/upgrading.md promises. Changing the list checks it again.
func TestPodTemplateRulesRatchet(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	g := NewWithT(t)

	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "memcacheds." + cachev1alpha1.GroupVersion.Group}, crd)).To(Succeed())
	original, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	setVersions := func(versions []any) {
		g.Eventually(func() error {
			fresh := crd.DeepCopy()
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), fresh); err != nil {
				return err
			}
			if err := unstructured.SetNestedSlice(fresh.Object, versions, "spec", "versions"); err != nil {
				return err
			}
			return env.Client.Update(ctx, fresh)
		}, 30*time.Second).Should(Succeed())
	}
	t.Cleanup(func() { setVersions(original) })

	// The schema of the time before: the tolerations' item rules gone.
	relaxed, _, _ := unstructured.NestedSlice(crd.DeepCopy().Object, "spec", "versions")
	for _, v := range relaxed {
		unstructured.RemoveNestedField(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties",
			"podTemplate", "properties", "tolerations", "items", "x-kubernetes-validations")
	}
	setVersions(relaxed)

	keyless := func(name string) *cachev1alpha1.Memcached {
		m := builders.Memcached(ns, name).Size(1).Obj()
		m.Spec.PodTemplate = &shared.PodTemplate{Tolerations: []shared.Toleration{{Operator: "Equal", Value: "v"}}}
		return m
	}
	const rule = "a toleration without a key must have operator Exists"
	old := keyless("stored-before")
	g.Eventually(func() error { return env.Client.Create(ctx, old.DeepCopy()) }, 30*time.Second).Should(Succeed(),
		"created while the schema had no toleration rules")

	setVersions(original)
	g.Eventually(func() error { return env.Client.Create(ctx, keyless("created-after")) }, 30*time.Second).Should(
		MatchError(ContainSubstring(rule)), "the restored rule refuses a new custom resource")

	stored := &cachev1alpha1.Memcached{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(old), stored)).To(Succeed())
	stored.Spec.Size = 2
	g.Expect(env.Client.Update(ctx, stored)).To(Succeed(), "an update of another field is ratcheted")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(old), stored)).To(Succeed())
	stored.Spec.PodTemplate.Tolerations[0].Value = "w"
	err := env.Client.Update(ctx, stored)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a changed toleration list is checked again, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(rule))
}
