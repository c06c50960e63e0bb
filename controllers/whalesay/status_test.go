package whalesay

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
)

// A Job's status, as the Job controller moves it along, reads as one phase
// after the other, never back.
func TestOutcomeOfFollowsTheJob(t *testing.T) {
	started := metav1.Now()
	done := metav1.NewTime(started.Add(2e9))
	for _, tc := range []struct {
		name       string
		status     batchv1.JobStatus
		want       whalesayv1alpha1.Phase
		wantReason string
	}{
		{name: "not yet seen by the Job controller", want: whalesayv1alpha1.PhasePending},
		{name: "its pod created", status: batchv1.JobStatus{StartTime: &started, Active: 1}, want: whalesayv1alpha1.PhaseRunning},
		{
			name:   "its pod finished, not yet counted",
			status: batchv1.JobStatus{StartTime: &started, UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"pod"}}},
			want:   whalesayv1alpha1.PhaseRunning,
		},
		{name: "its pod counted, the Job not yet complete", status: batchv1.JobStatus{StartTime: &started, Succeeded: 1}, want: whalesayv1alpha1.PhaseRunning},
		{name: "a failed pod counted, the Job retrying", status: batchv1.JobStatus{StartTime: &started, Failed: 1}, want: whalesayv1alpha1.PhaseRunning},
		{
			name: "complete",
			status: batchv1.JobStatus{StartTime: &started, Succeeded: 1, CompletionTime: &done, Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
			}},
			want: whalesayv1alpha1.PhaseSucceeded,
		},
		{
			name: "failed",
			status: batchv1.JobStatus{StartTime: &started, Failed: 7, Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: done},
			}},
			want: whalesayv1alpha1.PhaseFailed, wantReason: "BackoffLimitExceeded",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out := outcomeOf(&batchv1.Job{Status: tc.status})
			g.Expect(out.phase).To(Equal(tc.want))
			g.Expect(out.reason).To(Equal(tc.wantReason))
			if tc.want == whalesayv1alpha1.PhaseSucceeded || tc.want == whalesayv1alpha1.PhaseFailed {
				g.Expect(out.completionTime).To(HaveValue(Equal(done)))
			}
		})
	}
}
