package status_test

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/status"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testapi.AddToScheme)) }

// Phases the tests write, as a controller would.
const (
	phaseRunning   = "Running"
	phaseSucceeded = "Succeeded"
)

// TestPatchWritesOnlyChanges counts the requests that reach the API server.
func TestPatchWritesOnlyChanges(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	cfg, counter := testenv.CountWrites(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	obj := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "obj1", Namespace: env.Namespace(t)}, Spec: testapi.WidgetSpec{Message: "hi"}}
	g.Expect(c.Create(ctx, obj)).To(Succeed())
	counter.Reset()

	read := func() *testapi.Widget {
		fresh := &testapi.Widget{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), fresh)).To(Succeed())
		return fresh
	}

	// A reconcile that computes the same status writes nothing.
	w := read()
	p := status.NewPatcher(c, w)
	wrote, err := p.Patch(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wrote).To(BeFalse())
	g.Expect(counter.Requests()).To(BeEmpty())

	// A change is one write to the status subresource.
	w.Status.Phase = phaseRunning
	w.Status.ObservedGeneration = w.Generation
	conditions.MarkFalse(w, conditions.Ready, "Running", "running")
	wrote, err = p.Patch(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wrote).To(BeTrue())
	g.Expect(counter.Requests()).To(ConsistOf(HaveSuffix("/widgets/obj1/status")))
	g.Expect(read().Status.Phase).To(Equal(phaseRunning))

	// Setting the same values again, in place or on a fresh read, writes nothing.
	counter.Reset()
	conditions.MarkFalse(w, conditions.Ready, "Running", "running")
	wrote, err = p.Patch(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wrote).To(BeFalse())
	w = read()
	p = status.NewPatcher(c, w)
	w.Status.Phase = phaseRunning
	conditions.MarkFalse(w, conditions.Ready, "Running", "running")
	_, err = p.Patch(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counter.Requests()).To(BeEmpty())

	// A cleared field is removed on the server, not left behind by the merge patch.
	w.Status.ObservedGeneration = 0
	_, err = p.Patch(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(read().Status.ObservedGeneration).To(BeZero())
	g.Expect(read().Status.Phase).To(Equal(phaseRunning))

	// A spec change made in memory never leaks through the status write.
	w.Spec.Message = "changed in memory only"
	w.Status.Phase = phaseSucceeded
	_, err = p.Patch(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(read().Spec.Message).To(Equal("hi"))
	g.Expect(read().Status.Phase).To(Equal(phaseSucceeded))
}

// TestWritesTellStaleReads: an object read before the controller's own
// status write is stale; one read after it is not.
func TestWritesTellStaleReads(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	obj := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "stale", Namespace: env.Namespace(t)}, Spec: testapi.WidgetSpec{Message: "hi"}}
	g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
	old := obj.DeepCopy()

	var writes status.Writes
	g.Expect(writes.Stale(old)).To(BeFalse(), "nothing written yet")
	p := writes.NewPatcher(env.Client, obj)
	obj.Status.Phase = phaseRunning
	wrote, err := p.Patch(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wrote).To(BeTrue())

	g.Expect(writes.Stale(old)).To(BeTrue(), "read before our write")
	fresh := &testapi.Widget{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), fresh)).To(Succeed())
	g.Expect(writes.Stale(fresh)).To(BeFalse(), "read after our write")

	// A write by someone else moves the object on; it is not stale either.
	fresh.Labels = map[string]string{"touched": "yes"}
	g.Expect(env.Client.Update(ctx, fresh)).To(Succeed())
	g.Expect(writes.Stale(fresh)).To(BeFalse())

	writes.Forget(client.ObjectKeyFromObject(obj))
	g.Expect(writes.Stale(old)).To(BeFalse(), "forgotten")
	old.ResourceVersion = "not-a-number"
	g.Expect(writes.Stale(old)).To(BeFalse())
}

// TestFetchSkipsGoneAndStaleObjects: a reconcile proceeds only on an object
// that exists and is not older than our own last status write.
func TestFetchSkipsGoneAndStaleObjects(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	obj := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "fetch", Namespace: env.Namespace(t)}, Spec: testapi.WidgetSpec{Message: "hi"}}
	g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
	key := client.ObjectKeyFromObject(obj)
	var writes status.Writes

	result, proceed, err := writes.Fetch(ctx, env.Client, key, &testapi.Widget{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeTrue())
	g.Expect(result.RequeueAfter).To(BeZero())

	// A stale reader: one that still returns the object as it was before our write.
	before := obj.DeepCopy()
	p := writes.NewPatcher(env.Client, obj)
	obj.Status.Phase = phaseRunning
	_, err = p.Patch(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	stale := staleReader{obj: before}
	result, proceed, err = writes.Fetch(ctx, stale, key, &testapi.Widget{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeFalse())
	g.Expect(result.RequeueAfter).To(Equal(status.StaleRetry))

	g.Expect(env.Client.Delete(ctx, obj)).To(Succeed())
	result, proceed, err = writes.Fetch(ctx, env.Client, key, &testapi.Widget{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeFalse())
	g.Expect(result.RequeueAfter).To(BeZero())
	g.Expect(writes.Stale(before)).To(BeFalse(), "a gone object is forgotten")
}

// staleReader answers every Get with one fixed, old copy of an object.
type staleReader struct {
	client.Reader
	obj *testapi.Widget
}

func (s staleReader) Get(_ context.Context, _ client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	s.obj.DeepCopyInto(out.(*testapi.Widget))
	return nil
}
