package conditions

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type object struct {
	metav1.PartialObjectMetadata
	conditions []metav1.Condition
}

func (o *object) StatusConditions() *[]metav1.Condition { return &o.conditions }

func TestSetReportsChangesAndStampsGeneration(t *testing.T) {
	g := NewWithT(t)
	obj := &object{}
	obj.Generation = 3

	g.Expect(MarkFalse(obj, Ready, "Pending", "waiting")).To(BeTrue(), "a new condition is a change")
	c := Get(obj, Ready)
	g.Expect(c.ObservedGeneration).To(Equal(int64(3)))
	g.Expect(c.LastTransitionTime.IsZero()).To(BeFalse())
	transition := c.LastTransitionTime

	g.Expect(MarkFalse(obj, Ready, "Pending", "waiting")).To(BeFalse(), "the same condition again is no change")
	g.Expect(MarkFalse(obj, Ready, "Pending", "still waiting")).To(BeTrue(), "a new message is a change")
	g.Expect(Get(obj, Ready).LastTransitionTime).To(Equal(transition), "the status did not move")

	obj.Generation = 4
	g.Expect(IsTrue(obj, Ready)).To(BeFalse())
	g.Expect(MarkFalse(obj, Ready, "Pending", "still waiting")).To(BeTrue(), "a new generation is a change")
	g.Expect(MarkTrue(obj, Ready, "Done", "")).To(BeTrue())
	g.Expect(IsTrue(obj, Ready)).To(BeTrue())

	obj.Generation = 5
	g.Expect(IsTrue(obj, Ready)).To(BeFalse(), "a condition of an older generation is stale")

	g.Expect(Remove(obj, Ready)).To(BeTrue())
	g.Expect(Remove(obj, Ready)).To(BeFalse())
	g.Expect(Get(obj, Ready)).To(BeNil())
}
