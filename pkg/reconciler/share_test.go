package reconciler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/multi-operator/multi-operator/pkg/reconciler"
	v1alpha1 "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestNamespaceShareBoundsEachNamespace(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	req := func(ns, name string) ctrl.Request { return ctrl.Request{NamespacedName: key(ns, name)} }
	s := reconciler.NewNamespaceShare(2)
	leaveA1, _, ok := s.Enter(req("a", "1"))
	g.Expect(ok).To(BeTrue())
	leaveA2, _, ok := s.Enter(req("a", "2"))
	g.Expect(ok).To(BeTrue())
	_, retry, ok := s.Enter(req("a", "3"))
	g.Expect(ok).To(BeFalse(), "a third reconcile of a waits")
	g.Expect(retry).To(Equal(time.Second), "tried again after a second while the share cannot wake it")
	leaveB, _, ok := s.Enter(req("b", "1"))
	g.Expect(ok).To(BeTrue(), "another namespace is not held up")
	leaveA1()
	leaveA3, _, ok := s.Enter(req("a", "3"))
	g.Expect(ok).To(BeTrue(), "a reconcile that ends makes room")
	leaveA2()
	leaveA3()
	leaveB()
	zero := reconciler.NewNamespaceShare(0)
	_, _, ok = zero.Enter(req("a", "1"))
	g.Expect(ok).To(BeTrue(), "a bound below 1 counts as 1")
	_, _, ok = zero.Enter(req("a", "2"))
	g.Expect(ok).To(BeFalse())
	g.Expect(reconciler.PerNamespaceShare(16)).To(Equal(4))
	g.Expect(reconciler.PerNamespaceShare(1)).To(Equal(1))
}

// Once its Source has started, the share keeps the reconciles it turns
// away in their namespace's line, each once, and the namespace's next
// reconcile to end puts the first still waiting back into the queue.
func TestNamespaceShareWakesTheFirstInLine(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	req := func(name string) ctrl.Request { return ctrl.Request{NamespacedName: key("a", name)} }
	s := reconciler.NewNamespaceShare(1)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[ctrl.Request]())
	defer queue.ShutDown()
	g.Expect(s.Source().Start(context.Background(), queue)).To(Succeed())

	leave1, _, ok := s.Enter(req("1"))
	g.Expect(ok).To(BeTrue())
	for _, name := range []string{"2", "3", "2"} {
		_, retry, ok := s.Enter(req(name))
		g.Expect(ok).To(BeFalse())
		g.Expect(retry).To(BeZero(), "%s waits in line instead of trying again later", name)
	}
	g.Expect(s.Waiting("a")).To(Equal(2), "2 waits once however often it was turned away")
	g.Expect(queue.Len()).To(BeZero())

	leave1()
	g.Expect(queue.Len()).To(Equal(1))
	woken, _ := queue.Get()
	g.Expect(woken).To(Equal(req("2")), "the first in line")
	queue.Done(woken)
	// 3 gets in by an event of its own before 2 runs: it no longer waits.
	leave3, _, ok := s.Enter(req("3"))
	g.Expect(ok).To(BeTrue())
	g.Expect(s.Waiting("a")).To(BeZero(), "3 left the line")
	_, _, ok = s.Enter(req("2"))
	g.Expect(ok).To(BeFalse(), "2 waits again while 3 runs")
	leave3()
	woken, _ = queue.Get()
	g.Expect(woken).To(Equal(req("2")))
	queue.Done(woken)
	leave2, _, ok := s.Enter(req("2"))
	g.Expect(ok).To(BeTrue())
	leave2()
	g.Expect(queue.Len()).To(BeZero(), "nobody left in line")
	g.Expect(s.Waiting("a")).To(BeZero())
}

// A burst of one namespace's objects runs at its share without waiting a
// second per turn: each is reconciled once, never more than the share at
// a time, and the burst takes about its objects' own time.
func TestFlowRunsABurstAtItsNamespacesShare(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	const objects, share, phaseTime = 12, 2, 100 * time.Millisecond
	var mu sync.Mutex
	ran, running, most := map[string]int{}, 0, 0
	f := &reconciler.Flow[*v1alpha1.Widget, *v1alpha1.Widget]{
		Client:    env.Client,
		NewObject: func() *v1alpha1.Widget { return &v1alpha1.Widget{} },
		NewScope:  func(w *v1alpha1.Widget) *v1alpha1.Widget { return w },
		Phases: []reconciler.NamedPhase[*v1alpha1.Widget]{{Name: "work", Run: func(_ context.Context, w *v1alpha1.Widget) (reconciler.Result, error) {
			if w.Namespace != ns {
				return reconciler.Result{}, nil
			}
			mu.Lock()
			ran[w.Name]++
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(phaseTime)
			mu.Lock()
			running--
			mu.Unlock()
			return reconciler.Result{}, nil
		}}},
	}
	f.ShareWorkers(reconciler.NewNamespaceShare(share))
	env.StartManager(t, testenv.ManagerOptions{}, func(mgr manager.Manager) error {
		return reconciler.NewControllerBuilder(mgr, "burst", f, &v1alpha1.Widget{}, nil, nil).
			WithOptions(controller.Options{MaxConcurrentReconciles: 8}).Complete(f)
	})
	start := time.Now()
	for i := range objects {
		g.Expect(env.Client.Create(ctx, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w-%d", i), Namespace: ns}})).To(Succeed())
	}
	g.Eventually(func() int { mu.Lock(); defer mu.Unlock(); return len(ran) }, "20s", "20ms").Should(Equal(objects))
	elapsed := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	for name, n := range ran {
		g.Expect(n).To(Equal(1), "%s reconciled once", name)
	}
	g.Expect(most).To(Equal(share), "never more than the share at a time, and the share used")
	// At the share, the burst takes objects/share phase times; a turned-away
	// reconcile that waited a second would add at least one per turn.
	g.Expect(elapsed).To(BeNumerically("<", time.Duration(objects/share)*phaseTime+2*time.Second),
		"%d objects at %d at a time, %s each", objects, share, phaseTime)
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
