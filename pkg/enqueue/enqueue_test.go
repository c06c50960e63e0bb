package enqueue_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/multi-operator/multi-operator/pkg/enqueue"
)

// childEvents builds the handler under test for ReplicaSets controlled by
// a Deployment, and a ReplicaSet of Deployment "owner" at resourceVersion rv.
func childEvents(t *testing.T) (handler.EventHandler, func(rv string) *appsv1.ReplicaSet) {
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(appsv1.AddToScheme(scheme)).To(Succeed())
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	child := func(rv string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "owner-abc", ResourceVersion: rv,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: "owner", UID: types.UID("uid"), Controller: ptr.To(true),
			}},
		}}
	}
	return enqueue.Owner(scheme, mapper, &appsv1.Deployment{}), child
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func TestEnqueueOwnerPutsChildUpdatesFirst(t *testing.T) {
	h, child := childEvents(t)
	cases := []struct {
		name         string
		send         func(q workqueue.TypedRateLimitingInterface[reconcile.Request])
		wantFirst    string
		wantPriority int
	}{
		{
			name: "a child's change goes ahead of work queued before it",
			send: func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				h.Update(context.Background(), event.UpdateEvent{ObjectOld: child("1"), ObjectNew: child("2")}, q)
			},
			wantFirst: "owner", wantPriority: enqueue.ChildUpdatePriority,
		},
		{
			name: "a resync, which changes nothing, stays behind",
			send: func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				h.Update(context.Background(), event.UpdateEvent{ObjectOld: child("1"), ObjectNew: child("1")}, q)
			},
			wantFirst: "other", wantPriority: 0,
		},
		{
			name: "a child's create waits its turn",
			send: func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				h.Create(context.Background(), event.CreateEvent{Object: child("1")}, q)
			},
			wantFirst: "other", wantPriority: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			q := priorityqueue.New[reconcile.Request](tc.name)
			defer q.ShutDown()
			q.Add(request("other"))
			tc.send(q)
			g.Eventually(q.Len).Should(Equal(2))

			first, priority, _ := q.GetWithPriority()
			g.Expect(first).To(Equal(request(tc.wantFirst)))
			g.Expect(priority).To(Equal(tc.wantPriority))
		})
	}
}

func TestEnqueueOwnerWorksWithAPlainQueue(t *testing.T) {
	g := NewWithT(t)
	h, child := childEvents(t)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()

	h.Update(context.Background(), event.UpdateEvent{ObjectOld: child("1"), ObjectNew: child("2")}, q)

	g.Expect(q.Len()).To(Equal(1))
	item, _ := q.Get()
	g.Expect(item).To(Equal(request("owner")))
}
