package testenv

import (
	"context"
	"time"

	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FinishJob sets the status the Job controller gives the Job key once it
// succeeded, or failed after its retries: envtest runs no Job controller.
func FinishJob(g gomega.Gomega, c client.Client, key client.ObjectKey, succeeded bool) {
	job := &batchv1.Job{}
	g.Expect(c.Get(context.Background(), key, job)).To(gomega.Succeed())
	start := metav1.NewTime(time.Now().Add(-10 * time.Second).Truncate(time.Second))
	end := metav1.NewTime(time.Now().Truncate(time.Second))
	job.Status.StartTime = &start
	if succeeded {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &end
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: end},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: end},
		}
	} else {
		job.Status.Failed = 3
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: end},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: end},
		}
	}
	g.Expect(c.Status().Update(context.Background(), job)).To(gomega.Succeed())
}

// TerminatedJobPod creates a pod of job, as the Job controller does, whose
// container (the template's first) terminated with exitCode and left the
// termination message message, as the kubelet reports it. name tells the
// Job's pods apart.
func TerminatedJobPod(g gomega.Gomega, c client.Client, job *batchv1.Job, name string, exitCode int32, message string) *corev1.Pod {
	ctx := context.Background()
	labels := map[string]string{}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	labels[batchv1.ControllerUidLabel] = string(job.UID)
	labels[batchv1.JobNameLabel] = job.Name
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: job.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	pod.Status.Phase = corev1.PodSucceeded
	if exitCode != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:  pod.Spec.Containers[0].Name,
		Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Message: message, StartedAt: now, FinishedAt: now,
		}},
	}}
	g.Expect(c.Status().Update(ctx, pod)).To(gomega.Succeed())
	return pod
}

// ForgedJob creates, as a tenant could, a Job named name that no custom
// resource controls, with the operator's labels for app, whose container
// (named container) succeeded and left message as its termination
// message: what a controller must not take for its own Job's result.
func ForgedJob(g gomega.Gomega, c client.Client, ns, name string, labels map[string]string, container, message string) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: container, Image: "forged"}},
		}}},
	}
	g.Expect(c.Create(context.Background(), job)).To(gomega.Succeed())
	TerminatedJobPod(g, c, job, name+"-forged", 0, message)
	FinishJob(g, c, client.ObjectKeyFromObject(job), true)
	return job
}
