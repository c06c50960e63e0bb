package overlay

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// RestrictedViolations lists why a pod template breaks the restricted Pod
// Security Standard (latest), as the API server's admission would judge it;
// none when it passes.
func RestrictedViolations(pod *corev1.PodTemplateSpec) ([]string, error) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range evaluator.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return out, nil
}

// PodTemplate is the pod template of a workload object (Deployment,
// StatefulSet, DaemonSet, Job), or nil for other kinds.
func PodTemplate(obj map[string]any) (*corev1.PodTemplateSpec, error) {
	switch obj["kind"] {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
	default:
		return nil, nil
	}
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, pod); err != nil {
		return nil, fmt.Errorf("%s %v: pod template: %w", obj["kind"], obj["metadata"], err)
	}
	return pod, nil
}
