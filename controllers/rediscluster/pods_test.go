package rediscluster_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/multi-operator/multi-operator/controllers/rediscluster"
)

func TestCannotStartNamesAContainerNoWaitCures(t *testing.T) {
	waiting := func(name, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
	}
	running := corev1.ContainerStatus{Name: "redis", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	for _, tc := range []struct {
		name           string
		init, statuses []corev1.ContainerStatus
		want           string
	}{
		{name: "no status yet", want: ""},
		{name: "running", statuses: []corev1.ContainerStatus{running}, want: ""},
		{name: "still creating", statuses: []corev1.ContainerStatus{waiting("redis", "ContainerCreating")}, want: ""},
		{name: "exporter image", statuses: []corev1.ContainerStatus{running, waiting("exporter", "ImagePullBackOff")}, want: "exporter: ImagePullBackOff"},
		{name: "pull error", statuses: []corev1.ContainerStatus{waiting("redis", "ErrImagePull")}, want: "redis: ErrImagePull"},
		{name: "crash loop", statuses: []corev1.ContainerStatus{waiting("redis", "CrashLoopBackOff")}, want: "redis: CrashLoopBackOff"},
		{name: "missing secret key", statuses: []corev1.ContainerStatus{waiting("redis", "CreateContainerConfigError")}, want: "redis: CreateContainerConfigError"},
		{name: "init container", init: []corev1.ContainerStatus{waiting("setup", "InvalidImageName")}, statuses: []corev1.ContainerStatus{waiting("redis", "PodInitializing")}, want: "setup: InvalidImageName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: tc.init, ContainerStatuses: tc.statuses}}
			NewWithT(t).Expect(rediscluster.CannotStart(pod)).To(Equal(tc.want))
		})
	}
}

func TestUnreachableStuckNeedsEveryUnreachableNodeStuck(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stuck       []string
		unreachable map[string]string
		want        string
	}{
		{name: "nothing stuck", unreachable: map[string]string{"rc-1": "refused"}, want: ""},
		{name: "all reachable", stuck: []string{"rc-1"}, want: ""},
		{name: "the stuck one", stuck: []string{"rc-1"}, unreachable: map[string]string{"rc-1": "no IP"}, want: "rc-1"},
		{name: "another one too", stuck: []string{"rc-1"}, unreachable: map[string]string{"rc-1": "no IP", "rc-2": "refused"}, want: ""},
		{name: "first stuck in order", stuck: []string{"rc-0", "rc-3", "rc-5"}, unreachable: map[string]string{"rc-5": "no IP", "rc-3": "no IP"}, want: "rc-3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(rediscluster.UnreachableStuck(tc.stuck, tc.unreachable)).To(Equal(tc.want))
		})
	}
}
