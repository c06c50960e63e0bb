package backupjob

import (
	"path"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/podsecurity"
)

// Where a Job's volumes of the store are mounted.
const (
	// CredentialsDir holds AccessKeyIDFile and SecretAccessKeyFile.
	CredentialsDir = "/var/run/secrets/s3-credentials"
	// StoreCADir holds CAFile, the store's CA certificates.
	StoreCADir = "/var/run/secrets/s3-ca"
	// VolumeDir is where a claim is mounted.
	VolumeDir = "/backup"
	// CAFile is the name of a mounted CA bundle.
	CAFile = "ca.crt"
	// EncryptionDir holds EncryptionFile, the key of an encrypted backup.
	EncryptionDir = "/var/run/secrets/backup-encryption"
	// EncryptionFile is the name of the mounted encryption key.
	EncryptionFile = "key"
)

// SetStore points c at dest as StoreVolumes mounts it, with its
// encryption key when it has one.
func (c *Config) SetStore(dest cachev1.BackupDestination) {
	if dest.Encryption != nil {
		c.EncryptionKeyFile = path.Join(EncryptionDir, EncryptionFile)
	}
	if s3 := dest.S3; s3 != nil {
		c.S3Endpoint, c.S3Insecure = s3.Endpoint, s3.Insecure
		c.S3Bucket, c.S3Prefix, c.S3Region = s3.Bucket, s3.Prefix, s3.Region
		c.S3CredentialsDir = CredentialsDir
		if s3.CABundle != nil {
			c.S3CAFile = path.Join(StoreCADir, CAFile)
		}
		return
	}
	c.Dir = VolumeDir
}

// StoreVolumes are a Job's volumes of dest and their mounts: the store's
// credentials and CA, each a volume of only the keys it needs, or the
// claim, read-only when readOnly (a restore only reads it), and the
// encryption key of an encrypted destination.
func StoreVolumes(dest cachev1.BackupDestination, readOnly bool) ([]corev1.Volume, []corev1.VolumeMount) {
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(v corev1.Volume, dir string, readOnly bool) {
		volumes = append(volumes, v)
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: dir, ReadOnly: readOnly})
	}
	if enc := dest.Encryption; enc != nil {
		add(SecretVolume("encryption-key", enc.KeySecretRef.Name, enc.KeySecretRef.Key, EncryptionFile), EncryptionDir, true)
	}
	s3 := dest.S3
	if s3 == nil {
		claim := &corev1.PersistentVolumeClaimVolumeSource{ClaimName: dest.PersistentVolumeClaim.ClaimName, ReadOnly: readOnly}
		add(corev1.Volume{Name: "backup", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: claim}}, VolumeDir, readOnly)
		return volumes, mounts
	}
	creds := SecretVolume("s3-credentials", s3.CredentialsSecret, AccessKeyIDFile, AccessKeyIDFile)
	creds.Secret.Items = append(creds.Secret.Items, corev1.KeyToPath{Key: SecretAccessKeyFile, Path: SecretAccessKeyFile})
	add(creds, CredentialsDir, true)
	switch ca := s3.CABundle; {
	case ca == nil:
	case ca.SecretKeyRef != nil:
		add(SecretVolume("s3-ca", ca.SecretKeyRef.Name, ca.SecretKeyRef.Key, CAFile), StoreCADir, true)
	default:
		add(corev1.Volume{Name: "s3-ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ca.ConfigMapKeyRef.Name},
			Items:                []corev1.KeyToPath{{Key: ca.ConfigMapKeyRef.Key, Path: CAFile}},
			DefaultMode:          ptr.To[int32](0o440),
		}}}, StoreCADir, true)
	}
	return volumes, mounts
}

// SecretVolume is a volume of one key of a Secret, as the file file,
// readable by the pod's group only.
func SecretVolume(volume, secret, key, file string) corev1.Volume {
	return corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  secret,
		Items:       []corev1.KeyToPath{{Key: key, Path: file}},
		DefaultMode: ptr.To[int32](0o440),
	}}}
}

// InvalidExitCode is what `manager backup` and `manager restore` exit
// with when their input is wrong: retrying cannot help, so the Job's pod
// failure policy fails it at once.
const InvalidExitCode = 2

// runAsUser is the manager image's user.
const runAsUser = 65532

// JobTemplate is what differs between the Jobs that run the manager's
// image as one of its subcommands.
type JobTemplate struct {
	// Name, Namespace and Labels are the Job's; its pod has the labels too.
	Name, Namespace string
	Labels          map[string]string
	// Container names the one container, which runs Image with Args.
	Container, Image string
	Args             []string
	// Volumes and Mounts hold every secret the run reads, as files.
	Volumes []corev1.Volume
	Mounts  []corev1.VolumeMount
	// BackoffLimit is how often a failed pod is retried.
	BackoffLimit int32
	// Deadline stops a Job that never finishes.
	Deadline time.Duration
	// Resources bound the container.
	Resources corev1.ResourceRequirements
}

// Job is t's Job: restricted, without a service account token or service
// links, a pod failure policy that fails the Job on InvalidExitCode, and
// the result in the container's termination message.
func Job(t JobTemplate) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace, Labels: t.Labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(t.BackoffLimit),
			ActiveDeadlineSeconds: ptr.To(int64(t.Deadline / time.Second)),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr.To(t.Container),
					Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
					Values:        []int32{InvalidExitCode},
				},
			}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: t.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext:              podsecurity.PodContext(runAsUser),
					Volumes:                      t.Volumes,
					Containers: []corev1.Container{{
						Name:                     t.Container,
						Image:                    t.Image,
						Args:                     t.Args,
						SecurityContext:          podsecurity.ContainerContext(),
						VolumeMounts:             t.Mounts,
						TerminationMessagePath:   corev1.TerminationMessagePathDefault,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						Resources:                t.Resources,
					}},
				},
			},
		},
	}
}
