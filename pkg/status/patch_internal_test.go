package status

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
)

// TestStatusPatchOfTypedObjectsIsTheWholeObjectsStatusPart: the patch made
// from the two statuses alone is the status part of the patch between the
// whole objects, which unstructured objects still get.
func TestStatusPatchOfTypedObjectsIsTheWholeObjectsStatusPart(t *testing.T) {
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Done", Message: "done", LastTransitionTime: metav1.Unix(1700000000, 0)}
	notReady := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Running", Message: "running", LastTransitionTime: metav1.Unix(1700000000, 0)}
	for name, change := range map[string]struct {
		before, after testapi.WidgetStatus
		spec          string // the spec after, changed in memory only
		unchanged     bool
	}{
		"nothing":                  {before: testapi.WidgetStatus{Phase: "Running"}, after: testapi.WidgetStatus{Phase: "Running"}, unchanged: true},
		"a spec change only":       {before: testapi.WidgetStatus{Phase: "Running"}, after: testapi.WidgetStatus{Phase: "Running"}, spec: "other", unchanged: true},
		"a first status":           {after: testapi.WidgetStatus{Phase: "Running", ObservedGeneration: 1, Conditions: []metav1.Condition{notReady}}},
		"a field cleared":          {before: testapi.WidgetStatus{Phase: "Running", ObservedGeneration: 3}, after: testapi.WidgetStatus{Phase: "Running"}},
		"a condition changed":      {before: testapi.WidgetStatus{Conditions: []metav1.Condition{notReady}}, after: testapi.WidgetStatus{Conditions: []metav1.Condition{ready}}},
		"all conditions removed":   {before: testapi.WidgetStatus{Phase: "Done", Conditions: []metav1.Condition{ready}}, after: testapi.WidgetStatus{Phase: "Done"}},
		"the status cleared whole": {before: testapi.WidgetStatus{Phase: "Done", ObservedGeneration: 2, Conditions: []metav1.Condition{ready}}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			before := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", ResourceVersion: "7"}, Spec: testapi.WidgetSpec{Message: "hi"}, Status: change.before}
			after := before.DeepCopy()
			after.Status = change.after
			if change.spec != "" {
				after.Spec.Message = change.spec
			}

			typed, err := statusPatch(before, after)
			g.Expect(err).NotTo(HaveOccurred())
			whole, err := statusPatch(toUnstructured(g, before), toUnstructured(g, after))
			g.Expect(err).NotTo(HaveOccurred())
			if change.unchanged {
				g.Expect(typed).To(BeNil())
				g.Expect(whole).To(BeNil())
				return
			}
			g.Expect(typed).NotTo(BeNil())
			g.Expect(typed).To(MatchJSON(whole))
		})
	}
}

func toUnstructured(g *WithT, obj client.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(HaveOccurred())
	return &unstructured.Unstructured{Object: m}
}
