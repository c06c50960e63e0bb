package whalesay

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/jobstatus"
)

// jobOutcome is what a Job's status says about the WhaleSay.
type jobOutcome struct {
	phase          whalesayv1alpha1.Phase
	startTime      *metav1.Time
	completionTime *metav1.Time
	// reason and message explain a failure, taken from the Job's Failed condition.
	reason, message string
}

// phases are the WhaleSay's phases of a Job's states.
var phases = map[jobstatus.State]whalesayv1alpha1.Phase{
	jobstatus.Pending:   whalesayv1alpha1.PhasePending,
	jobstatus.Running:   whalesayv1alpha1.PhaseRunning,
	jobstatus.Succeeded: whalesayv1alpha1.PhaseSucceeded,
	jobstatus.Failed:    whalesayv1alpha1.PhaseFailed,
}

// outcomeOf reads a Job's status.
func outcomeOf(job *batchv1.Job) jobOutcome {
	o := jobstatus.Of(job)
	out := jobOutcome{phase: phases[o.State], startTime: o.StartTime, completionTime: o.CompletionTime, reason: o.Reason, message: o.Message}
	if o.State == jobstatus.Failed && out.reason == "" {
		out.reason = "JobFailed"
	}
	return out
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
