// Package jobstatus reads where a Job is from its status, as the
// controllers that run one Job per object (WhaleSay, RedisClusterBackup)
// report it.
package jobstatus

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// State is where a Job is.
type State string

// States of a Job.
const (
	// Pending: no pod of the Job has run yet.
	Pending State = "Pending"
	// Running: a pod runs, or finished while the Job controller has not
	// concluded yet.
	Running State = "Running"
	// Succeeded: the Job is Complete.
	Succeeded State = "Succeeded"
	// Failed: the Job failed.
	Failed State = "Failed"
)

// Outcome is what a Job's status says.
type Outcome struct {
	State          State
	StartTime      *metav1.Time
	CompletionTime *metav1.Time
	// Reason and Message are the Failed condition's.
	Reason, Message string
}

// Finished reports whether the Job concluded.
func (o Outcome) Finished() bool { return o.State == Succeeded || o.State == Failed }

// Of reads a Job's status.
func Of(job *batchv1.Job) Outcome {
	out := Outcome{State: Pending, StartTime: job.Status.StartTime}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			out.State = Succeeded
			out.CompletionTime = job.Status.CompletionTime
			if out.CompletionTime == nil {
				out.CompletionTime = &c.LastTransitionTime
			}
			return out
		case batchv1.JobFailed:
			out.State = Failed
			out.CompletionTime = &c.LastTransitionTime
			out.Reason, out.Message = c.Reason, c.Message
			return out
		}
	}
	if job.Status.Active > 0 || podsTerminated(job) {
		out.State = Running
	}
	return out
}

// podsTerminated reports whether a pod of the Job has finished while the
// Job controller has not concluded yet: the Job is no longer active but
// neither complete nor failed, for a moment that must not read as Pending
// again (a Running object would flap back to Pending before it finished).
func podsTerminated(job *batchv1.Job) bool {
	st := job.Status
	if st.Succeeded > 0 || st.Failed > 0 {
		return true
	}
	u := st.UncountedTerminatedPods
	return u != nil && (len(u.Succeeded) > 0 || len(u.Failed) > 0)
}
