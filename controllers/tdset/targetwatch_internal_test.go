package tdset

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The scale targets' cache keeps of an object only what the watch reads:
// no labels, annotations, ownerReferences or managed fields.
func TestTargetCacheKeepsOnlyWhatTheWatchReads(t *testing.T) {
	g := NewWithT(t)
	opts := targetCacheOptions(runtime.NewScheme(), nil, []string{"a", "b"})
	g.Expect(opts.DefaultNamespaces).To(HaveLen(2))
	g.Expect(opts.DefaultTransform).NotTo(BeNil())

	in := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "a", Name: "web", UID: types.UID("u1"), ResourceVersion: "42", Generation: 7,
			Labels:          map[string]string{"app": "web", "app.kubernetes.io/managed-by": "multi-operator"},
			Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 1<<16)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u2", Controller: ptr.To(true)}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Finalizers:      []string{"f"},
		},
	}
	out, err := opts.DefaultTransform(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(&metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", UID: types.UID("u1"), ResourceVersion: "42", Generation: 7},
	}))
	g.Expect(in.Annotations).To(HaveLen(1), "the informer's object is not changed in place")

	// Anything else (a tombstone) passes unchanged.
	other := "tombstone"
	out, err = opts.DefaultTransform(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(other))
}
