package memcached

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
)

// condition is a condition as computed, before it is stamped on the object.
type condition struct {
	status          metav1.ConditionStatus
	reason, message string
}

// deploymentReport is all a Memcached's status reads of its Deployment.
// The status code takes it instead of the Deployment, so that the watch,
// which reconciles a Memcached only when its Deployment's report changed,
// cannot miss a field the status reads.
type deploymentReport struct {
	name                           string
	generation, observedGeneration int64
	replicas, readyReplicas        int32
	availableReplicas, updated     int32
	// failure is the Degraded condition the Deployment's own conditions call for.
	failure condition
}

// reportOf reads a Deployment's report.
func reportOf(d *appsv1.Deployment) deploymentReport {
	return deploymentReport{
		name:               d.Name,
		generation:         d.Generation,
		observedGeneration: d.Status.ObservedGeneration,
		replicas:           d.Status.Replicas,
		readyReplicas:      d.Status.ReadyReplicas,
		availableReplicas:  d.Status.AvailableReplicas,
		updated:            d.Status.UpdatedReplicas,
		failure:            degradation(d),
	}
}

// observe copies the Deployment's counts into m's status and sets
// Available, Progressing, Degraded and the Ready summary from them.
func observe(m *cachev1alpha1.Memcached, d deploymentReport) {
	m.Status.Replicas = d.replicas
	m.Status.ReadyReplicas = d.readyReplicas
	set(m, cachev1alpha1.ConditionAvailable, availability(m.Spec.Size, d))
	set(m, cachev1alpha1.ConditionProgressing, progress(m.Spec.Size, d))
	set(m, cachev1alpha1.ConditionDegraded, d.failure)
	summarize(m)
}

func set(m *cachev1alpha1.Memcached, conditionType string, c condition) {
	conditions.Set(m, conditionType, c.status, c.reason, c.message)
}

// availability is True when as many servers as the Memcached asks for are
// available, from whichever ReplicaSet, so a rollout that keeps them
// serving keeps the Memcached available.
func availability(size int32, d deploymentReport) condition {
	msg := fmt.Sprintf("%d of %d servers available", d.availableReplicas, size)
	if d.availableReplicas >= size {
		return condition{metav1.ConditionTrue, cachev1alpha1.ReasonReplicasAvailable, msg}
	}
	return condition{metav1.ConditionFalse, cachev1alpha1.ReasonReplicasUnavailable, msg}
}

// progress is True until the Deployment controller has acted on the latest
// spec and every server runs the current template and is available. The
// counts are read in the order a rollout moves through them.
func progress(size int32, d deploymentReport) condition {
	switch {
	case d.observedGeneration < d.generation:
		return condition{metav1.ConditionTrue, cachev1alpha1.ReasonSpecNotObserved, fmt.Sprintf("the Deployment controller has not yet observed generation %d of Deployment %s", d.generation, d.name)}
	case d.replicas < size:
		return condition{metav1.ConditionTrue, cachev1alpha1.ReasonScalingUp, fmt.Sprintf("%d of %d servers created", d.replicas, size)}
	case d.updated < size:
		return condition{metav1.ConditionTrue, cachev1alpha1.ReasonRollingOut, fmt.Sprintf("%d of %d servers updated", d.updated, size)}
	case d.replicas > size:
		return condition{metav1.ConditionTrue, cachev1alpha1.ReasonRemovingOldReplicas, fmt.Sprintf("%d servers running, %d wanted", d.replicas, size)}
	case d.availableReplicas < size:
		return condition{metav1.ConditionTrue, cachev1alpha1.ReasonWaitingForAvailability, fmt.Sprintf("%d of %d servers available", d.availableReplicas, size)}
	}
	return condition{metav1.ConditionFalse, cachev1alpha1.ReasonRolloutComplete, fmt.Sprintf("all %d servers updated and available", size)}
}

// degradation is True when the Deployment controller reports that it cannot
// get on without help: a rollout past its progress deadline, or pods it
// cannot create (a quota, an admission webhook).
func degradation(d *appsv1.Deployment) condition {
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded":
			return condition{metav1.ConditionTrue, cachev1alpha1.ReasonProgressDeadlineExceeded, c.Message}
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			return condition{metav1.ConditionTrue, cachev1alpha1.ReasonReplicaFailure, c.Message}
		}
	}
	return condition{metav1.ConditionFalse, cachev1alpha1.ReasonHealthy, "the Deployment reports no failure"}
}

// summarize sets Ready from the other three: True when Available and neither
// Progressing nor Degraded, and otherwise False with the reason of the first
// that is not as it should be, Degraded first since it needs a human.
func summarize(m *cachev1alpha1.Memcached) {
	set(m, conditions.Ready, readiness(m))
}

func readiness(m *cachev1alpha1.Memcached) condition {
	is := func(conditionType string, status metav1.ConditionStatus) (*metav1.Condition, bool) {
		c := conditions.Get(m, conditionType)
		return c, c != nil && c.Status == status
	}
	if c, ok := is(cachev1alpha1.ConditionDegraded, metav1.ConditionTrue); ok {
		return condition{metav1.ConditionFalse, c.Reason, c.Message}
	}
	if c, ok := is(cachev1alpha1.ConditionProgressing, metav1.ConditionTrue); ok {
		return condition{metav1.ConditionFalse, c.Reason, c.Message}
	}
	available, ok := is(cachev1alpha1.ConditionAvailable, metav1.ConditionTrue)
	if !ok {
		if available == nil {
			return condition{metav1.ConditionFalse, cachev1alpha1.ReasonReplicasUnavailable, "no server has been observed yet"}
		}
		return condition{metav1.ConditionFalse, available.Reason, available.Message}
	}
	return condition{metav1.ConditionTrue, cachev1alpha1.ReasonReady, available.Message}
}
