package reconciler_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
)

func TestHoldFirstStatus(t *testing.T) {
	reported := &testapi.Widget{}
	conditions.MarkFalse(reported, conditions.Ready, "Starting", "the child is starting")
	for _, tc := range []struct {
		name            string
		obj             *testapi.Widget
		childAge, grace time.Duration
		settled         bool
		want            reconciler.Result
	}{
		{"a new object's starting child holds the status until the grace ends", &testapi.Widget{}, 3 * time.Second, 10 * time.Second, false,
			reconciler.Result{HoldStatus: true, RequeueAfter: 7 * time.Second}},
		{"a settled child is reported at once", &testapi.Widget{}, 3 * time.Second, 10 * time.Second, true, reconciler.Result{}},
		{"a child still starting at the grace's end is reported", &testapi.Widget{}, 10 * time.Second, 10 * time.Second, false, reconciler.Result{}},
		{"an object with a status is never held", reported, time.Second, 10 * time.Second, false, reconciler.Result{}},
		{"no grace holds nothing", &testapi.Widget{}, 0, 0, false, reconciler.Result{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(reconciler.HoldFirstStatus(tc.obj, tc.childAge, tc.grace, tc.settled)).To(Equal(tc.want))
		})
	}
}
