package jobstatus_test

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/multi-operator/multi-operator/pkg/jobstatus"
)

// A Job's status, as the Job controller moves it along, reads as one state
// after the other, never back.
func TestOfFollowsTheJob(t *testing.T) {
	started := metav1.Now()
	done := metav1.NewTime(started.Add(2e9))
	for _, tc := range []struct {
		name       string
		status     batchv1.JobStatus
		want       jobstatus.State
		wantReason string
	}{
		{name: "not yet seen by the Job controller", want: jobstatus.Pending},
		{name: "its pod created", status: batchv1.JobStatus{StartTime: &started, Active: 1}, want: jobstatus.Running},
		{
			name:   "its pod finished, not yet counted",
			status: batchv1.JobStatus{StartTime: &started, UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"pod"}}},
			want:   jobstatus.Running,
		},
		{name: "its pod counted, the Job not yet complete", status: batchv1.JobStatus{StartTime: &started, Succeeded: 1}, want: jobstatus.Running},
		{name: "a failed pod counted, the Job retrying", status: batchv1.JobStatus{StartTime: &started, Failed: 1}, want: jobstatus.Running},
		{
			name: "complete",
			status: batchv1.JobStatus{StartTime: &started, Succeeded: 1, CompletionTime: &done, Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
			}},
			want: jobstatus.Succeeded,
		},
		{
			name: "failed",
			status: batchv1.JobStatus{StartTime: &started, Failed: 7, Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: done},
			}},
			want: jobstatus.Failed, wantReason: "BackoffLimitExceeded",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out := jobstatus.Of(&batchv1.Job{Status: tc.status})
			g.Expect(out.State).To(Equal(tc.want))
			g.Expect(out.Reason).To(Equal(tc.wantReason))
			g.Expect(out.Finished()).To(Equal(tc.want == jobstatus.Succeeded || tc.want == jobstatus.Failed))
			if out.Finished() {
				g.Expect(out.CompletionTime).To(HaveValue(Equal(done)))
			}
		})
	}
}
