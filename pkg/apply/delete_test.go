package apply_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/apply"
)

// TestDeleteControlled deletes the object the caller read and nothing
// else: a replacement of the same name (which a cache that is behind still
// shows as the old object) stays, and a child already gone is done.
func TestDeleteControlled(t *testing.T) {
	configMap := func(ns string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}, Data: map[string]string{"v": "1"}}
	}
	for _, tc := range []struct {
		name string
		// read creates what the cluster holds and returns the object as
		// the caller read it, to be deleted.
		read func(g *WithT, ctx context.Context, c client.Client, ns string) client.Object
		// wantLeft says that an object other than the one read (or the one
		// read, when it has no UID) is left under the name.
		wantLeft bool
		wantErr  bool
	}{
		{
			name: "the object read is deleted",
			read: func(g *WithT, ctx context.Context, c client.Client, ns string) client.Object {
				cm := configMap(ns)
				g.Expect(c.Create(ctx, cm)).To(Succeed())
				return cm
			},
		},
		{
			name: "a replacement of the same name is not deleted",
			read: func(g *WithT, ctx context.Context, c client.Client, ns string) client.Object {
				stale := configMap(ns)
				g.Expect(c.Create(ctx, stale)).To(Succeed())
				g.Expect(c.Delete(ctx, stale.DeepCopy())).To(Succeed())
				replacement := configMap(ns)
				replacement.Data["v"] = "someone else's"
				g.Expect(c.Create(ctx, replacement)).To(Succeed())
				g.Expect(replacement.UID).NotTo(Equal(stale.UID))
				return stale
			},
			wantLeft: true,
		},
		{
			name: "a child already gone is done",
			read: func(g *WithT, ctx context.Context, c client.Client, ns string) client.Object {
				gone := configMap(ns)
				g.Expect(c.Create(ctx, gone)).To(Succeed())
				g.Expect(c.Delete(ctx, gone.DeepCopy())).To(Succeed())
				return gone
			},
		},
		{
			name: "an object without a UID is refused and not deleted by name",
			read: func(g *WithT, ctx context.Context, c client.Client, ns string) client.Object {
				cm := configMap(ns)
				g.Expect(c.Create(ctx, cm)).To(Succeed())
				return configMap(ns)
			},
			wantLeft: true,
			wantErr:  true,
		},
		{
			// batch/v1 orphans a Job's pods by default: the API server
			// then keeps the Job, with the orphan finalizer, until the
			// garbage collector (which envtest does not run) removes it.
			name: "a Job goes at once in the background",
			read: func(g *WithT, ctx context.Context, c client.Client, ns string) client.Object {
				job := &batchv1.Job{
					ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
					Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "c", Image: "example.com/c:1"}},
					}}},
				}
				g.Expect(c.Create(ctx, job)).To(Succeed())
				return job
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx, c, _, owner := setup(t)
			read := tc.read(g, ctx, c, owner.Namespace)

			err := apply.DeleteControlled(ctx, c, read)
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}

			left := read.DeepCopyObject().(client.Object)
			err = c.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "child"}, left)
			if !tc.wantLeft {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the object read is gone at once, got %v (finalizers left: %v)", err, left.GetFinalizers())
				return
			}
			g.Expect(err).NotTo(HaveOccurred(), "an object is left under the name")
			g.Expect(left.GetDeletionTimestamp()).To(BeNil(), "and it is not being deleted")
			if read.GetUID() != "" {
				g.Expect(left.GetUID()).NotTo(Equal(read.GetUID()), "it is the replacement")
			}
		})
	}
}
