package whalesay

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/naming"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/placement"
	"github.com/multi-operator/multi-operator/pkg/podsecurity"
)

const (
	// appName is the app.kubernetes.io/name of every child.
	appName = "whalesay"
	// DefaultImage runs when neither spec.image nor WHALESAY_IMAGE is set:
	// the project's own cowsay image, released with the manager (make
	// release-images). The original's docker/whalesay is a schema 1 image,
	// which containerd 2 and Docker 27 no longer pull.
	DefaultImage = "ghcr.io/multi-operator/whalesay:v0.2.0"
	// backoffLimit is how often a failed pod is retried before the Job fails.
	backoffLimit = 2
	// activeDeadlineSeconds stops a Job that never finishes, an image that
	// cannot be pulled for example, so the WhaleSay reports Failed.
	activeDeadlineSeconds = 300
	// runAsUser is "nobody": the whalesay image declares no user of its own.
	runAsUser = 65534
)

// image is the image that renders ws.
func image(ws *whalesayv1alpha1.WhaleSay, defaultImage string) string {
	if ws.Spec.Image != "" {
		return ws.Spec.Image
	}
	return defaultImage
}

// JobName names the Job for ws's current spec: the WhaleSay's name plus a
// hash of the image, message and podTemplate, at most 63 characters. A
// changed spec gets a new name; the same spec always the same one. A Job's
// pod template is immutable, so a changed podTemplate, like a changed
// message, runs a new Job. The podTemplate is hashed only when it sets
// something, so that a WhaleSay without one (or with an empty one) keeps
// its Job's name and is not run again.
func JobName(ws *whalesayv1alpha1.WhaleSay, defaultImage string) string {
	parts := []string{image(ws, defaultImage), ws.Spec.Message}
	if !placement.Empty(ws.Spec.PodTemplate) {
		parts = append(parts, placement.Hash(ws.Spec.PodTemplate))
	}
	return naming.WithSuffix(ws.Name, naming.Hash(parts...), naming.MaxLabelValueLength)
}

// DesiredJob is the Job that prints ws's message, its pod placed as
// spec.podTemplate says. The message is the only argument of cowsay,
// passed without a shell, so it is printed literally.
func DesiredJob(ws *whalesayv1alpha1.WhaleSay, defaultImage string) *batchv1.Job {
	labels := ownership.Labels(appName, ws.Name)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      JobName(ws, defaultImage),
			Namespace: ws.Namespace,
			Labels:    labels,
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](backoffLimit),
			ActiveDeadlineSeconds: ptr.To[int64](activeDeadlineSeconds),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext:              podsecurity.PodContext(runAsUser),
					Containers: []corev1.Container{{
						Name:    "whalesay",
						Image:   image(ws, defaultImage),
						Command: []string{"cowsay"},
						// "--" ends cowsay's options: a message that starts
						// with "-" is printed, not read as an option.
						Args:            []string{"--", ws.Spec.Message},
						SecurityContext: podsecurity.ContainerContext(),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("10m"),
								corev1.ResourceMemory: resource.MustParse("16Mi"),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("100m"),
								corev1.ResourceMemory: resource.MustParse("64Mi"),
							},
						},
					}},
				},
			},
		},
	}
	placement.Apply(job, &job.Spec.Template, ws.Spec.PodTemplate)
	return job
}
