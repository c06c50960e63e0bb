package rediscluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// podReady reports whether pod exists and its Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// notReadySince is when pod turned not Ready: its Ready condition's last
// transition, or its creation when that came later.
func notReadySince(pod *corev1.Pod) time.Time {
	since := pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return since
}

// cannotStartReasons are the reasons of a container's waiting state that
// no wait cures: its image cannot be pulled, its configuration is wrong,
// or it keeps crashing.
var cannotStartReasons = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"CrashLoopBackOff":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"RunContainerError":          true,
}

// cannotStart names a container of pod that cannot start and why, such as
// "exporter: ImagePullBackOff", or returns "" when every container runs or
// may still start. Such a pod serves nothing through its Services, and
// only a new pod, from a fixed template, can cure it.
func cannotStart(pod *corev1.Pod) string {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range statuses {
			if w := c.State.Waiting; w != nil && cannotStartReasons[w.Reason] {
				return c.Name + ": " + w.Reason
			}
		}
	}
	return ""
}
