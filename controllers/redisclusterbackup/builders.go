package redisclusterbackup

import (
	"fmt"
	"path"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/naming"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/podsecurity"
)

const (
	// appName is the app.kubernetes.io/name of every child.
	appName = "redisclusterbackup"
	// ContainerName is the backup container's name.
	ContainerName = "backup"
	// DefaultImage is the Job's image when BACKUP_IMAGE is unset (the
	// binary run alone): this release's manager image, whose binary has the
	// backup subcommand. Every install path sets the variable to the
	// manager's image as installed.
	DefaultImage = "ghcr.io/multi-operator/multi-operator:v0.2.0"
	// backoffLimit retries a failed backup once: a failover during the
	// snapshot or a store that blinked passes the second time; each try
	// costs every shard a fork.
	backoffLimit = 1
	// jobDeadline stops a Job that never finishes, such as a pod that
	// cannot be scheduled or a volume that cannot be mounted, so that the
	// backup reports Failed.
	jobDeadline = 6 * time.Hour
	// cleanupBackoffLimit retries a cleanup whose store blinked; each try
	// only lists and deletes.
	cleanupBackoffLimit = 3
	// cleanupDeadline bounds a cleanup, so that a pod that cannot start
	// (a missing CA, a claim that cannot be mounted) lets the backup go,
	// with a Warning, rather than holding it forever.
	cleanupDeadline = 15 * time.Minute
	// cleanupMargin is how much sooner than the cleanup Job's deadline
	// the run gives up, so that it still says why.
	cleanupMargin = time.Minute
	// runMargin is how much sooner than the Job's deadline the run gives
	// up, so that it still reports why.
	runMargin = 5 * time.Minute
	// runAsUser is the manager image's user.
	runAsUser = 65532
	// invalidExitCode is what `manager backup` exits with when its input is
	// wrong: retrying cannot help, so it fails the Job at once.
	invalidExitCode = 2
)

// Where the Job's volumes are mounted.
const (
	passwordDir    = "/var/run/secrets/redis-backup"
	redisCADir     = "/var/run/secrets/redis-ca"
	credentialsDir = "/var/run/secrets/s3-credentials"
	storeCADir     = "/var/run/secrets/s3-ca"
	backupDir      = "/backup"
	caFile         = "ca.crt"
)

// Inputs are what the Job needs of the backup's cluster.
type Inputs struct {
	// Cluster is the RedisCluster to back up.
	Cluster *cachev1.RedisCluster
}

// JobName names the backup's Job: the backup's own name, which the API
// keeps to a DNS label.
func JobName(b *cachev1.RedisClusterBackup) string { return b.Name }

// Folder is the backup's folder below the prefix or the volume's root:
// <namespace>/<clusterName>/<name>.
func Folder(b *cachev1.RedisClusterBackup) string {
	return path.Join(b.Namespace, b.Spec.ClusterName, b.Name)
}

// Location says where the backup's files are, for the status.
func Location(b *cachev1.RedisClusterBackup) string {
	if s3 := b.Spec.Destination.S3; s3 != nil {
		return "s3://" + path.Join(s3.Bucket, s3.Prefix, Folder(b)) + "/"
	}
	return "pvc://" + path.Join(b.Spec.Destination.PersistentVolumeClaim.ClaimName, Folder(b)) + "/"
}

// Seeds are the addresses the Job asks for the cluster's shards: the
// cluster's client Service, then its headless Service.
func Seeds(rc *cachev1.RedisCluster) []string {
	port := rediscluster.ClientPort
	return []string{
		fmt.Sprintf("%s.%s.svc:%d", rc.Name, rc.Namespace, port),
		fmt.Sprintf("%s.%s.svc:%d", rediscluster.HeadlessServiceName(rc), rc.Namespace, port),
	}
}

// Config is the backup Job's command line.
func Config(b *cachev1.RedisClusterBackup, in Inputs) backupjob.Config {
	c := backupjob.Config{
		Seeds:          Seeds(in.Cluster),
		ClientPort:     rediscluster.ClientPort,
		PasswordFile:   path.Join(passwordDir, rediscluster.PasswordKey),
		Path:           Folder(b),
		Store:          storeOf(b),
		Timeout:        jobDeadline - runMargin,
		TerminationLog: corev1.TerminationMessagePathDefault,
	}
	if in.Cluster.Spec.TLS != nil {
		c.RedisCAFile = path.Join(redisCADir, caFile)
	}
	if b.Spec.Destination.Encryption != nil {
		c.EncryptionKeyFile = path.Join(backupjob.EncryptionDir, backupjob.EncryptionFile)
	}
	return c
}

// storeOf is b's destination as the Jobs' flags name it, at the paths
// destinationVolumes mounts.
func storeOf(b *cachev1.RedisClusterBackup) backupjob.Store {
	s3 := b.Spec.Destination.S3
	if s3 == nil {
		return backupjob.Store{Dir: backupDir}
	}
	st := backupjob.Store{
		S3Endpoint: s3.Endpoint, S3Insecure: s3.Insecure,
		S3Bucket: s3.Bucket, S3Prefix: s3.Prefix, S3Region: s3.Region,
		S3CredentialsDir: credentialsDir,
	}
	if s3.CABundle != nil {
		st.S3CAFile = path.Join(storeCADir, caFile)
	}
	return st
}

// DesiredJob is the Job that takes b's backup with image: the manager's
// binary as `manager backup`, restricted, without a service account token,
// every secret a file of a volume that holds only the keys it needs.
func DesiredJob(b *cachev1.RedisClusterBackup, in Inputs, image string) *batchv1.Job {
	volumes, mounts := clusterVolumes(in)
	dv, dm := destinationVolumes(b)
	// The encryption key only the backup needs: its cleanup removes
	// files without reading them.
	var key mounter
	if enc := b.Spec.Destination.Encryption; enc != nil {
		key.add(backupjob.SecretVolume("encryption-key", enc.KeySecretRef.Name, enc.KeySecretRef.Key, backupjob.EncryptionFile), backupjob.EncryptionDir, true)
	}
	return jobOf(b, jobSpec{
		name: JobName(b), image: image,
		args:         append([]string{"backup"}, Config(b, in).Args()...),
		volumes:      append(append(volumes, dv...), key.volumes...),
		mounts:       append(append(mounts, dm...), key.mounts...),
		backoffLimit: backoffLimit, deadline: jobDeadline,
		// Two shards stream at once, each through one upload part of
		// objectstore.PartSize.
		memoryLimit: "512Mi",
	})
}

// CleanupJobName names the Job that removes a deleted backup's files: the
// backup's name with a suffix whose hash keeps it apart from the Job of a
// backup named like it.
func CleanupJobName(b *cachev1.RedisClusterBackup) string {
	return naming.WithSuffix(b.Name, "delete-"+naming.Hash("delete", b.Name)[:5], naming.MaxLabelValueLength)
}

// DeleteConfig is the cleanup Job's command line: the backup's folder
// and its destination, as the backup Job names them.
func DeleteConfig(b *cachev1.RedisClusterBackup) backupjob.DeleteConfig {
	return backupjob.DeleteConfig{Path: Folder(b), Store: storeOf(b), Timeout: cleanupDeadline - cleanupMargin}
}

// DesiredCleanupJob is the Job that removes b's folder with image, as
// `manager backup-delete`: the backup Job's pod, restricted, with the
// destination's volumes only (the cluster may be gone), bounded by
// cleanupDeadline and retried cleanupBackoffLimit times.
func DesiredCleanupJob(b *cachev1.RedisClusterBackup, image string) *batchv1.Job {
	volumes, mounts := destinationVolumes(b)
	return jobOf(b, jobSpec{
		name: CleanupJobName(b), image: image,
		args:    append([]string{"backup-delete"}, DeleteConfig(b).Args()...),
		volumes: volumes, mounts: mounts,
		backoffLimit: cleanupBackoffLimit, deadline: cleanupDeadline,
		memoryLimit: "128Mi",
	})
}

// jobSpec is what tells the backup Job and the cleanup Job apart.
type jobSpec struct {
	name, image  string
	args         []string
	volumes      []corev1.Volume
	mounts       []corev1.VolumeMount
	backoffLimit int32
	deadline     time.Duration
	memoryLimit  string
}

// jobOf is a Job of b's as spec says, running the manager's image under
// the restricted profile, without a service account token; an exit code
// of invalidExitCode fails it at once.
func jobOf(b *cachev1.RedisClusterBackup, spec jobSpec) *batchv1.Job {
	labels := ownership.Labels(appName, b.Name)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: spec.name, Namespace: b.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(spec.backoffLimit),
			ActiveDeadlineSeconds: ptr.To(int64(spec.deadline / time.Second)),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr.To(ContainerName),
					Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
					Values:        []int32{invalidExitCode},
				},
			}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext:              podsecurity.PodContext(runAsUser),
					Volumes:                      spec.volumes,
					Containers: []corev1.Container{{
						Name:                     ContainerName,
						Image:                    spec.image,
						Args:                     spec.args,
						SecurityContext:          podsecurity.ContainerContext(),
						VolumeMounts:             spec.mounts,
						TerminationMessagePath:   corev1.TerminationMessagePathDefault,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("100m"),
								corev1.ResourceMemory: resource.MustParse("128Mi"),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("1"),
								corev1.ResourceMemory: resource.MustParse(spec.memoryLimit),
							},
						},
					}},
				},
			},
		},
	}
}

// clusterVolumes are the backup Job's volumes of the cluster and their
// mounts: the backup user's password, and the nodes' CA with TLS.
func clusterVolumes(in Inputs) ([]corev1.Volume, []corev1.VolumeMount) {
	var m mounter
	m.add(backupjob.SecretVolume("redis-password", rediscluster.BackupSecretName(in.Cluster), rediscluster.PasswordKey, rediscluster.PasswordKey), passwordDir, true)
	if tls := in.Cluster.Spec.TLS; tls != nil {
		m.add(backupjob.SecretVolume("redis-ca", tls.SecretName, caFile, caFile), redisCADir, true)
	}
	return m.volumes, m.mounts
}

// destinationVolumes are the volumes of b's destination and their
// mounts, which the backup Job and the cleanup Job share: the store's
// credentials and CA, or the claim.
func destinationVolumes(b *cachev1.RedisClusterBackup) ([]corev1.Volume, []corev1.VolumeMount) {
	var m mounter
	if s3 := b.Spec.Destination.S3; s3 != nil {
		creds := backupjob.SecretVolume("s3-credentials", s3.CredentialsSecret, backupjob.AccessKeyIDFile, backupjob.AccessKeyIDFile)
		creds.Secret.Items = append(creds.Secret.Items, corev1.KeyToPath{Key: backupjob.SecretAccessKeyFile, Path: backupjob.SecretAccessKeyFile})
		m.add(creds, credentialsDir, true)
		if ca := s3.CABundle; ca != nil {
			if ca.SecretKeyRef != nil {
				m.add(backupjob.SecretVolume("s3-ca", ca.SecretKeyRef.Name, ca.SecretKeyRef.Key, caFile), storeCADir, true)
			} else {
				m.add(corev1.Volume{Name: "s3-ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: ca.ConfigMapKeyRef.Name},
					Items:                []corev1.KeyToPath{{Key: ca.ConfigMapKeyRef.Key, Path: caFile}},
					DefaultMode:          ptr.To[int32](0o440),
				}}}, storeCADir, true)
			}
		}
	} else {
		m.add(corev1.Volume{Name: "backup", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: b.Spec.Destination.PersistentVolumeClaim.ClaimName,
		}}}, backupDir, false)
	}
	return m.volumes, m.mounts
}

// mounter collects volumes, each mounted once.
type mounter struct {
	volumes []corev1.Volume
	mounts  []corev1.VolumeMount
}

func (m *mounter) add(v corev1.Volume, dir string, readOnly bool) {
	m.volumes = append(m.volumes, v)
	m.mounts = append(m.mounts, corev1.VolumeMount{Name: v.Name, MountPath: dir, ReadOnly: readOnly})
}
