package reconciler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/multi-operator/multi-operator/pkg/reconciler"
	v1alpha1 "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestNamespaceShareBoundsEachNamespace(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	s := reconciler.NewNamespaceShare(2)
	leaveA1, ok := s.Enter("a")
	g.Expect(ok).To(BeTrue())
	leaveA2, ok := s.Enter("a")
	g.Expect(ok).To(BeTrue())
	_, ok = s.Enter("a")
	g.Expect(ok).To(BeFalse(), "a third reconcile of a waits")
	leaveB, ok := s.Enter("b")
	g.Expect(ok).To(BeTrue(), "another namespace is not held up")
	leaveA1()
	leaveA3, ok := s.Enter("a")
	g.Expect(ok).To(BeTrue(), "a reconcile that ends makes room")
	leaveA2()
	leaveA3()
	leaveB()
	zero := reconciler.NewNamespaceShare(0)
	_, ok = zero.Enter("a")
	g.Expect(ok).To(BeTrue(), "a bound below 1 counts as 1")
	_, ok = zero.Enter("a")
	g.Expect(ok).To(BeFalse())
	g.Expect(reconciler.PerNamespaceShare(16)).To(Equal(4))
	g.Expect(reconciler.PerNamespaceShare(1)).To(Equal(1))
}

// A namespace whose reconciles hang holds only its share of the workers:
// its next reconcile is put back at once, without running, and another
// namespace's runs.
func TestFlowPutsBackAReconcileOverItsNamespacesShare(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	release := make(chan struct{})
	var mu sync.Mutex
	ran := map[string]int{}
	f := &reconciler.Flow[*v1alpha1.Widget, *v1alpha1.Widget]{
		Client:    env.Client,
		NewObject: func() *v1alpha1.Widget { return &v1alpha1.Widget{} },
		NewScope:  func(w *v1alpha1.Widget) *v1alpha1.Widget { return w },
		Phases: []reconciler.NamedPhase[*v1alpha1.Widget]{{Name: "hang", Run: func(_ context.Context, w *v1alpha1.Widget) (reconciler.Result, error) {
			mu.Lock()
			ran[w.Namespace+"/"+w.Name]++
			mu.Unlock()
			if w.Name == "slow" {
				<-release
			}
			return reconciler.Result{}, nil
		}}},
	}
	f.ShareWorkers(reconciler.NewNamespaceShare(1))
	tenant, other := env.Namespace(t), env.Namespace(t)
	for _, w := range []*v1alpha1.Widget{
		{ObjectMeta: metav1.ObjectMeta{Name: "slow", Namespace: tenant}},
		{ObjectMeta: metav1.ObjectMeta{Name: "next", Namespace: tenant}},
		{ObjectMeta: metav1.ObjectMeta{Name: "fast", Namespace: other}},
	} {
		g.Expect(env.Client.Create(ctx, w)).To(Succeed())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = f.Reconcile(ctx, ctrl.Request{NamespacedName: key(tenant, "slow")})
	}()
	g.Eventually(func() int { mu.Lock(); defer mu.Unlock(); return ran[tenant+"/slow"] }).Should(Equal(1))

	start := time.Now()
	res, err := f.Reconcile(ctx, ctrl.Request{NamespacedName: key(tenant, "next")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeNumerically(">", 0), "put back")
	g.Expect(time.Since(start)).To(BeNumerically("<", time.Second), "at once")
	res, err = f.Reconcile(ctx, ctrl.Request{NamespacedName: key(other, "fast")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeZero())
	mu.Lock()
	g.Expect(ran).To(Equal(map[string]int{tenant + "/slow": 1, other + "/fast": 1}))
	mu.Unlock()

	close(release)
	<-done
	_, err = f.Reconcile(ctx, ctrl.Request{NamespacedName: key(tenant, "next")})
	g.Expect(err).NotTo(HaveOccurred())
	mu.Lock()
	g.Expect(ran[tenant+"/next"]).To(Equal(1), "runs once the slow one ended")
	mu.Unlock()
}

func key(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}
