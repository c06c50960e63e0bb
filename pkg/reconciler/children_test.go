package reconciler_test

import (
	"context"
	"maps"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
)

// recorded returns the events rec has recorded so far, as "Type Reason Note".
func recorded(rec *k8sevents.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// TestChildrenApplyRecordsEventsAndStopsOnFailure: a create or an update
// is recorded on the owner in the one wording, nothing else is, and a
// child that cannot be applied is shown on the owner and stops the
// reconcile, looked at again later when its name is someone else's.
func TestChildrenApplyRecordsEventsAndStopsOnFailure(t *testing.T) {
	configMap := func(ns string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}, Data: maps.Clone(data)}
	}
	one, two := map[string]string{"v": "1"}, map[string]string{"v": "2"}
	owned := func(g *WithT, c client.Client, owner *testapi.Widget) {
		_, err := apply.Apply(context.Background(), c, owner, configMap(owner.Namespace, one))
		g.Expect(err).NotTo(HaveOccurred())
	}
	foreign := func(g *WithT, c client.Client, owner *testapi.Widget) {
		g.Expect(c.Create(context.Background(), configMap(owner.Namespace, two))).To(Succeed())
	}
	for _, tc := range []struct {
		name string
		// existing makes what is there before the apply; nil for nothing.
		existing func(g *WithT, c client.Client, owner *testapi.Widget)
		desired  map[string]string
		// quiet leaves the Child's reasons empty.
		quiet bool
		want  apply.Result
		// wantPrevious is the value the child had before an update.
		wantPrevious string
		wantEvents   []any
		// wantReady is Ready's reason after a failure; empty: no failure.
		wantReady   string
		wantRequeue time.Duration
		wantErr     bool
	}{
		{name: "a create is recorded with the kind and the note", desired: one, want: apply.Created,
			wantEvents: []any{"Normal ChildCreated Created ConfigMap child with one key"}},
		{name: "an update is recorded and the child as it was is returned", existing: owned, desired: two, want: apply.Updated,
			wantPrevious: "1", wantEvents: []any{"Normal ChildUpdated Updated ConfigMap child to the new value"}},
		{name: "a child as it should be records nothing", existing: owned, desired: one, want: apply.Unchanged},
		{name: "an empty reason records nothing", desired: one, quiet: true, want: apply.Created},
		{name: "a name taken by someone else's object is shown and looked at again", existing: foreign, desired: one, want: apply.Unchanged,
			wantEvents: []any{HavePrefix("Warning " + conditions.ReasonResourceConflict + " ")}, wantReady: conditions.ReasonResourceConflict, wantRequeue: conditions.ConflictRetryInterval},
		{name: "any other failure is shown and returned for backoff", desired: map[string]string{"not a key!": "1"}, want: apply.Unchanged,
			wantEvents: []any{HavePrefix("Warning " + conditions.ReasonApplyFailed + " ")}, wantReady: conditions.ReasonApplyFailed, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, c, _, owner := setup(t)
			if tc.existing != nil {
				tc.existing(g, c, owner)
			}
			rec := k8sevents.NewFakeRecorder(10)
			children := &reconciler.Children{Client: c, Events: events.NewRecorder(rec)}
			ch := reconciler.Child{Object: configMap(owner.Namespace, tc.desired)}
			if !tc.quiet {
				ch.Created, ch.CreatedNote = "ChildCreated", " with one key"
				ch.Updated, ch.UpdatedNote = "ChildUpdated", " to the new value"
			}

			applied, result, err := children.Apply(context.Background(), owner, ch)
			g.Expect(applied.Result).To(Equal(tc.want))
			if tc.wantPrevious != "" {
				g.Expect(applied.Previous).To(BeAssignableToTypeOf(&corev1.ConfigMap{}))
				g.Expect(applied.Previous.(*corev1.ConfigMap).Data).To(HaveKeyWithValue("v", tc.wantPrevious))
			} else {
				g.Expect(applied.Previous).To(BeNil())
			}
			g.Expect(recorded(rec)).To(HaveExactElements(tc.wantEvents...))
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			if tc.wantReady == "" {
				g.Expect(result).To(Equal(reconciler.Result{}), "a child in place goes on to the next phase")
				g.Expect(conditions.Get(owner, conditions.Ready)).To(BeNil())
				g.Expect(ch.Object.GetUID()).NotTo(BeEmpty(), "the child is as the API server has it")
				return
			}
			g.Expect(result).To(Equal(reconciler.Result{Stop: true, RequeueAfter: tc.wantRequeue}), "a failure stops the phases")
			g.Expect(conditions.Get(owner, conditions.Ready).Reason).To(Equal(tc.wantReady))
		})
	}
}
