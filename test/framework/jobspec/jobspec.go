// Package jobspec checks the Jobs the operator runs from the manager's
// image (backups, restores): restricted, bounded, every secret a file.
package jobspec

import (
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Mount is what a test expects of one volume: where it is mounted, what
// it comes from, and the files it holds.
type Mount struct {
	// Path is where the container mounts it.
	Path string
	// Source is secret/<name>, configmap/<name> or pvc/<claim>.
	Source string
	// Files maps each key to its file.
	Files map[string]string
	// ReadOnly is the mount's.
	ReadOnly bool
}

// Mounts are the pod's volumes by name, as Mounts, each mounted once by its
// first container; a Secret's files are readable by the pod's group only.
func Mounts(g gomega.Gomega, pod corev1.PodSpec) map[string]Mount {
	out := map[string]Mount{}
	ctr := pod.Containers[0]
	for _, v := range pod.Volumes {
		m := Mount{Files: map[string]string{}}
		var items []corev1.KeyToPath
		switch {
		case v.Secret != nil:
			m.Source, items = "secret/"+v.Secret.SecretName, v.Secret.Items
			g.Expect(*v.Secret.DefaultMode).To(gomega.Equal(int32(0o440)), "%s: the pod's group reads it, no one else", v.Name)
		case v.ConfigMap != nil:
			m.Source, items = "configmap/"+v.ConfigMap.Name, v.ConfigMap.Items
		case v.PersistentVolumeClaim != nil:
			m.Source = "pvc/" + v.PersistentVolumeClaim.ClaimName
		}
		for _, it := range items {
			m.Files[it.Key] = it.Path
		}
		for _, vm := range ctr.VolumeMounts {
			if vm.Name == v.Name {
				m.Path, m.ReadOnly = vm.MountPath, vm.ReadOnly
			}
		}
		out[v.Name] = m
	}
	g.Expect(ctr.VolumeMounts).To(gomega.HaveLen(len(pod.Volumes)), "every volume is mounted once")
	return out
}

// ExpectRestricted checks that job runs image once or twice, under a
// deadline, fails at once on bad input (exit code 2), under the restricted
// pod security profile, without a service account token, bounded in
// memory, with no variable in its environment (every secret is a file),
// and reports through the termination message.
func ExpectRestricted(g gomega.Gomega, job *batchv1.Job, image string) {
	g.Expect(*job.Spec.BackoffLimit).To(gomega.BeNumerically("<=", 1))
	g.Expect(*job.Spec.ActiveDeadlineSeconds).To(gomega.BeNumerically(">", 0))
	g.Expect(job.Spec.PodFailurePolicy.Rules[0].OnExitCodes.Values).To(gomega.Equal([]int32{2}), "bad input is not retried")
	pod := job.Spec.Template.Spec
	g.Expect(pod.RestartPolicy).To(gomega.Equal(corev1.RestartPolicyNever))
	g.Expect(*pod.AutomountServiceAccountToken).To(gomega.BeFalse())
	g.Expect(*pod.SecurityContext.RunAsNonRoot).To(gomega.BeTrue())
	g.Expect(pod.SecurityContext.SeccompProfile.Type).To(gomega.Equal(corev1.SeccompProfileTypeRuntimeDefault))
	ctr := pod.Containers[0]
	g.Expect(*ctr.SecurityContext.AllowPrivilegeEscalation).To(gomega.BeFalse())
	g.Expect(*ctr.SecurityContext.ReadOnlyRootFilesystem).To(gomega.BeTrue())
	g.Expect(ctr.SecurityContext.Capabilities.Drop).To(gomega.ConsistOf(corev1.Capability("ALL")))
	g.Expect(ctr.Resources.Limits).To(gomega.HaveKey(corev1.ResourceMemory))
	g.Expect(ctr.Image).To(gomega.Equal(image))
	g.Expect(ctr.Env).To(gomega.BeEmpty())
	g.Expect(ctr.EnvFrom).To(gomega.BeEmpty())
	g.Expect(ctr.TerminationMessagePath).To(gomega.Equal(corev1.TerminationMessagePathDefault))
}
