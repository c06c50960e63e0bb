package finalizers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/finalizers"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testapi.AddToScheme)) }

const finalizer = "test.multi-operator.io/finalizer"

func TestFinalizeRunsCleanupThenReleases(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	cfg, counter := testenv.CountWrites(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	obj := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "fin", Namespace: env.Namespace(t)}, Spec: testapi.WidgetSpec{Message: "hi"}}
	g.Expect(c.Create(ctx, obj)).To(Succeed())

	added, err := finalizers.Ensure(ctx, c, obj, finalizer)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeTrue())
	counter.Reset()
	added, err = finalizers.Ensure(ctx, c, obj, finalizer)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeFalse())
	g.Expect(counter.Requests()).To(BeEmpty(), "ensuring a present finalizer writes nothing")

	g.Expect(c.Delete(ctx, obj)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	g.Expect(obj.DeletionTimestamp).NotTo(BeNil())

	// A failing cleanup keeps the finalizer and is shown on the object.
	failures := 0
	done, err := finalizers.Finalize(ctx, c, events.Recorder{}, obj, finalizer, func(context.Context) error {
		failures++
		return errors.New("backend unreachable")
	})
	g.Expect(err).To(MatchError(ContainSubstring("backend unreachable")))
	g.Expect(done).To(BeFalse())
	g.Expect(failures).To(Equal(1))
	ready := conditions.Get(obj, conditions.Ready)
	g.Expect(ready.Reason).To(Equal(conditions.ReasonCleanupFailed))
	g.Expect(ready.Message).To(ContainSubstring("backend unreachable"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	g.Expect(obj.Finalizers).To(ContainElement(finalizer))

	// A cleanup that waits for work it started is no failure: no error, its
	// own reason, the finalizer stays.
	done, err = finalizers.Finalize(ctx, c, events.Recorder{}, obj, finalizer, func(context.Context) error {
		return fmt.Errorf("wrapped: %w", finalizers.Wait(time.Minute, "Draining", "draining %d items", 3))
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse())
	ready = conditions.Get(obj, conditions.Ready)
	g.Expect(ready.Reason).To(Equal("Draining"))
	g.Expect(ready.Message).To(Equal("draining 3 items"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	g.Expect(obj.Finalizers).To(ContainElement(finalizer))

	// Once it succeeds, the finalizer goes and so does the object.
	done, err = finalizers.Finalize(ctx, c, events.Recorder{}, obj, finalizer, func(context.Context) error { return nil })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(obj), obj))).To(BeTrue())

	// Without the finalizer there is nothing left to run.
	done, err = finalizers.Finalize(ctx, c, events.Recorder{}, obj, finalizer, func(context.Context) error {
		t.Fatal("cleanup ran without the finalizer")
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
}

// TestFinalizerPatchesKeepOtherClientsFinalizers: the finalizer list is
// sent whole, so a patch from a stale read must fail instead of dropping a
// finalizer another client added meanwhile; from a fresh read, the other
// finalizer is kept on add and on removal.
func TestFinalizerPatchesKeepOtherClientsFinalizers(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	c := env.Client
	const theirs = "other.example.com/finalizer"
	obj := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: env.Namespace(t)}, Spec: testapi.WidgetSpec{Message: "hi"}}
	g.Expect(c.Create(ctx, obj)).To(Succeed())
	t.Cleanup(func() {
		// The other client's finalizer would hold the namespace.
		_ = c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
	})
	stale := obj.DeepCopy()
	obj.Finalizers = []string{theirs}
	g.Expect(c.Update(ctx, obj)).To(Succeed())

	_, err := finalizers.Ensure(ctx, c, stale, finalizer)
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "a stale read conflicts: %v", err)
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	g.Expect(obj.Finalizers).To(Equal([]string{theirs}))

	_, err = finalizers.Ensure(ctx, c, obj, finalizer)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	g.Expect(obj.Finalizers).To(Equal([]string{theirs, finalizer}))

	g.Expect(c.Delete(ctx, obj)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	done, err := finalizers.Finalize(ctx, c, events.Recorder{}, obj, finalizer, func(context.Context) error { return nil })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	g.Expect(obj.Finalizers).To(Equal([]string{theirs}), "only our finalizer is removed")

	unread := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: obj.Name, Namespace: obj.Namespace}}
	_, err = finalizers.Ensure(ctx, c, unread, finalizer)
	g.Expect(err).To(MatchError(ContainSubstring("no resourceVersion")), "an object never read is not patched blindly")
}
