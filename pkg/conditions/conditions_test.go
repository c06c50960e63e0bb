package conditions

import (
	"strings"
	"testing"
	"unicode/utf8"

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

func TestSetCapsTheMessage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		message string
		capped  bool
	}{
		{name: "short", message: "waiting for node-1"},
		{name: "at the cap", message: strings.Repeat("a", MaxMessageBytes)},
		{name: "ascii", message: strings.Repeat("node-1: i/o timeout; ", 2000), capped: true},
		{name: "multi-byte", message: strings.Repeat("nœud injoignable 😀; ", 2000), capped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := &object{}
			MarkFalse(obj, Ready, "Unreachable", tc.message)
			got := Get(obj, Ready).Message
			g.Expect(len(got)).To(BeNumerically("<=", MaxMessageBytes))
			g.Expect(utf8.ValidString(got)).To(BeTrue(), "a character was cut in half")
			if !tc.capped {
				g.Expect(got).To(Equal(tc.message))
				return
			}
			g.Expect(got).To(MatchRegexp(`\.\.\. \[[0-9]+ more characters\]$`))
			g.Expect(tc.message).To(HavePrefix(got[:strings.LastIndex(got, " ... [")]))
		})
	}
}
