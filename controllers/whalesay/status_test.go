package whalesay

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
)

// A Job's state is the WhaleSay's phase; a failure without a reason of the
// Job controller's gets one (pkg/jobstatus reads the states).
func TestOutcomeOfNamesTheFailure(t *testing.T) {
	g := NewWithT(t)
	g.Expect(outcomeOf(&batchv1.Job{}).phase).To(Equal(whalesayv1alpha1.PhasePending))
	out := outcomeOf(&batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}}})
	g.Expect(out.phase).To(Equal(whalesayv1alpha1.PhaseFailed))
	g.Expect(out.reason).To(Equal("JobFailed"))
}
