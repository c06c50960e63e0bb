package memcached

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
)

func TestObserveDerivesConditionsFromTheDeployment(t *testing.T) {
	const size = 3
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet x has timed out progressing."}
	quota := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "pods are forbidden: exceeded quota"}
	type want struct {
		available, progressing, degraded, ready metav1.ConditionStatus
		// reason of Ready; the others' reasons follow from the table's name.
		progressReason, degradedReason, readyReason string
	}
	for _, tc := range []struct {
		name string
		gen  int64
		st   appsv1.DeploymentStatus
		want want
	}{
		{
			name: "just created",
			gen:  1,
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, cachev1alpha1.ReasonSpecNotObserved, cachev1alpha1.ReasonHealthy, cachev1alpha1.ReasonSpecNotObserved},
		},
		{
			name: "scaling up",
			gen:  1,
			st:   appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, cachev1alpha1.ReasonScalingUp, cachev1alpha1.ReasonHealthy, cachev1alpha1.ReasonScalingUp},
		},
		{
			name: "rolling out a new template, old servers still serving",
			gen:  2,
			st:   appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3},
			want: want{metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, cachev1alpha1.ReasonRollingOut, cachev1alpha1.ReasonHealthy, cachev1alpha1.ReasonRollingOut},
		},
		{
			name: "old servers terminating",
			gen:  2,
			st:   appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3},
			want: want{metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, cachev1alpha1.ReasonRemovingOldReplicas, cachev1alpha1.ReasonHealthy, cachev1alpha1.ReasonRemovingOldReplicas},
		},
		{
			name: "waiting for servers to become available",
			gen:  1,
			st:   appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, cachev1alpha1.ReasonWaitingForAvailability, cachev1alpha1.ReasonHealthy, cachev1alpha1.ReasonWaitingForAvailability},
		},
		{
			name: "complete",
			gen:  1,
			st:   appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3},
			want: want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue, cachev1alpha1.ReasonRolloutComplete, cachev1alpha1.ReasonHealthy, cachev1alpha1.ReasonReady},
		},
		{
			name: "rollout past its progress deadline",
			gen:  2,
			st:   appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3, Conditions: []appsv1.DeploymentCondition{deadline}},
			want: want{metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, cachev1alpha1.ReasonRollingOut, cachev1alpha1.ReasonProgressDeadlineExceeded, cachev1alpha1.ReasonProgressDeadlineExceeded},
		},
		{
			name: "pods cannot be created",
			gen:  1,
			st:   appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{quota}},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, cachev1alpha1.ReasonScalingUp, cachev1alpha1.ReasonReplicaFailure, cachev1alpha1.ReasonReplicaFailure},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "mc", Generation: 5}, Spec: cachev1alpha1.MemcachedSpec{Size: size}}
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "mc", Generation: tc.gen}, Status: tc.st}
			observe(m, reportOf(d))

			g.Expect(m.Status.Replicas).To(Equal(tc.st.Replicas))
			g.Expect(m.Status.ReadyReplicas).To(Equal(tc.st.ReadyReplicas))
			expect := func(conditionType string, status metav1.ConditionStatus, reason string) {
				t.Helper()
				c := conditions.Get(m, conditionType)
				g.Expect(c).NotTo(BeNil(), conditionType)
				g.Expect(c.Status).To(Equal(status), conditionType)
				if reason != "" {
					g.Expect(c.Reason).To(Equal(reason), conditionType)
				}
				g.Expect(c.Message).NotTo(BeEmpty(), conditionType)
				g.Expect(c.ObservedGeneration).To(Equal(m.Generation), conditionType)
			}
			expect(cachev1alpha1.ConditionAvailable, tc.want.available, "")
			expect(cachev1alpha1.ConditionProgressing, tc.want.progressing, tc.want.progressReason)
			expect(cachev1alpha1.ConditionDegraded, tc.want.degraded, tc.want.degradedReason)
			expect(conditions.Ready, tc.want.ready, tc.want.readyReason)
		})
	}
}

func TestReadySummarizesTheOtherConditions(t *testing.T) {
	g := NewWithT(t)
	m := &cachev1alpha1.Memcached{}
	summarize(m)
	g.Expect(conditions.Get(m, conditions.Ready).Status).To(Equal(metav1.ConditionFalse), "nothing observed yet")

	conditions.MarkTrue(m, cachev1alpha1.ConditionAvailable, cachev1alpha1.ReasonReplicasAvailable, "1 of 1")
	conditions.MarkFalse(m, cachev1alpha1.ConditionProgressing, cachev1alpha1.ReasonRolloutComplete, "done")
	conditions.MarkFalse(m, cachev1alpha1.ConditionDegraded, cachev1alpha1.ReasonHealthy, "fine")
	summarize(m)
	g.Expect(conditions.IsTrue(m, conditions.Ready)).To(BeTrue())

	conditions.MarkTrue(m, cachev1alpha1.ConditionDegraded, cachev1alpha1.ReasonFinalizing, "going")
	summarize(m)
	ready := conditions.Get(m, conditions.Ready)
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(Equal(cachev1alpha1.ReasonFinalizing))
	g.Expect(ready.Message).To(Equal("going"))
}
