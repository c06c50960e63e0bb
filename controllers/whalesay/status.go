package whalesay

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
)

// jobOutcome is what a Job's status says about the WhaleSay.
type jobOutcome struct {
	phase          whalesayv1alpha1.Phase
	startTime      *metav1.Time
	completionTime *metav1.Time
	// reason and message explain a failure, taken from the Job's Failed condition.
	reason, message string
}

// outcomeOf reads a Job's status.
func outcomeOf(job *batchv1.Job) jobOutcome {
	out := jobOutcome{phase: whalesayv1alpha1.PhasePending, startTime: job.Status.StartTime}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			out.phase = whalesayv1alpha1.PhaseSucceeded
			out.completionTime = job.Status.CompletionTime
			if out.completionTime == nil {
				out.completionTime = &c.LastTransitionTime
			}
			return out
		case batchv1.JobFailed:
			out.phase = whalesayv1alpha1.PhaseFailed
			out.completionTime = &c.LastTransitionTime
			out.reason, out.message = c.Reason, c.Message
			if out.reason == "" {
				out.reason = "JobFailed"
			}
			return out
		}
	}
	if job.Status.Active > 0 || podsTerminated(job) {
		out.phase = whalesayv1alpha1.PhaseRunning
	}
	return out
}

// podsTerminated reports whether a pod of the Job has finished while the
// Job controller has not concluded yet: the Job is no longer active but
// neither complete nor failed, for a moment that must not read as Pending
// again (a Running WhaleSay flapped back to Pending before it succeeded).
func podsTerminated(job *batchv1.Job) bool {
	st := job.Status
	if st.Succeeded > 0 || st.Failed > 0 {
		return true
	}
	u := st.UncountedTerminatedPods
	return u != nil && (len(u.Succeeded) > 0 || len(u.Failed) > 0)
}

// finished reports whether phase is final for the spec that produced it.
func finished(phase whalesayv1alpha1.Phase) bool {
	return phase == whalesayv1alpha1.PhaseSucceeded || phase == whalesayv1alpha1.PhaseFailed
}

// preview shortens a message for the Message column to at most 40 runes.
func preview(message string) string {
	const maxRunes = 40
	r := []rune(message)
	if len(r) <= maxRunes {
		return message
	}
	return string(r[:maxRunes-1]) + "…"
}
