package redisclusterbackup

import (
	"fmt"
	"path"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/naming"
	"github.com/multi-operator/multi-operator/pkg/ownership"
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
)

// Where the backup Job's volumes of the cluster are mounted; those of the
// destination are backupjob.StoreVolumes'.
const (
	passwordDir = "/var/run/secrets/redis-backup"
	redisCADir  = "/var/run/secrets/redis-ca"
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
func Folder(b *cachev1.RedisClusterBackup) string { return b.Folder() }

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
		Timeout:        jobDeadline - runMargin,
		TerminationLog: corev1.TerminationMessagePathDefault,
	}
	if in.Cluster.Spec.TLS != nil {
		c.RedisCAFile = path.Join(redisCADir, backupjob.CAFile)
	}
	c.SetStore(b.Spec.Destination)
	return c
}

// DesiredJob is the Job that takes b's backup with image: the manager's
// binary as `manager backup`, restricted, without a service account token,
// every secret a file of a volume that holds only the keys it needs: the
// cluster's, and the destination's with its encryption key.
func DesiredJob(b *cachev1.RedisClusterBackup, in Inputs, image string) *batchv1.Job {
	volumes, mounts := clusterVolumes(in)
	dv, dm := backupjob.StoreVolumes(b.Spec.Destination, false)
	return backupjob.Job(backupjob.JobTemplate{
		Name: JobName(b), Namespace: b.Namespace, Labels: ownership.Labels(appName, b.Name),
		Container: ContainerName, Image: image,
		Args:    append([]string{"backup"}, Config(b, in).Args()...),
		Volumes: append(volumes, dv...), Mounts: append(mounts, dm...),
		BackoffLimit: backoffLimit, Deadline: jobDeadline,
		// Two shards stream at once, each through two upload parts of
		// objectstore.PartSize.
		Resources: resources("512Mi"),
	})
}

// CleanupJobName names the Job that removes a deleted backup's files: the
// backup's name with a suffix whose hash keeps it apart from the Job of a
// backup named like it.
func CleanupJobName(b *cachev1.RedisClusterBackup) string {
	return naming.WithSuffix(b.Name, "delete-"+naming.Hash("delete", b.Name)[:5], naming.MaxLabelValueLength)
}

// cleanupDestination is b's destination without its encryption key: a
// cleanup removes files without reading them, so its Job neither mounts
// the key nor names it.
func cleanupDestination(b *cachev1.RedisClusterBackup) cachev1.BackupDestination {
	dest := b.Spec.Destination
	dest.Encryption = nil
	return dest
}

// DeleteConfig is the cleanup Job's command line: the backup's folder
// and its destination, as the backup Job names them.
func DeleteConfig(b *cachev1.RedisClusterBackup) backupjob.DeleteConfig {
	var c backupjob.Config
	c.SetStore(cleanupDestination(b))
	return backupjob.DeleteConfig{Path: Folder(b), Store: c.Store, Timeout: cleanupDeadline - cleanupMargin}
}

// DesiredCleanupJob is the Job that removes b's folder with image, as
// `manager backup-delete`: the backup Job's pod, restricted, with the
// destination's volumes only (not the cluster's, which may be gone, nor
// the encryption key), bounded by cleanupDeadline and retried
// cleanupBackoffLimit times.
func DesiredCleanupJob(b *cachev1.RedisClusterBackup, image string) *batchv1.Job {
	volumes, mounts := backupjob.StoreVolumes(cleanupDestination(b), false)
	return backupjob.Job(backupjob.JobTemplate{
		Name: CleanupJobName(b), Namespace: b.Namespace, Labels: ownership.Labels(appName, b.Name),
		Container: ContainerName, Image: image,
		Args:    append([]string{"backup-delete"}, DeleteConfig(b).Args()...),
		Volumes: volumes, Mounts: mounts,
		BackoffLimit: cleanupBackoffLimit, Deadline: cleanupDeadline,
		Resources: resources("128Mi"),
	})
}

// resources bound a backup or cleanup container: a tenth of a core and
// 128Mi asked, a core and memoryLimit at most.
func resources(memoryLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("100m"),
			corev1.ResourceMemory: resource.MustParse("128Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse(memoryLimit),
		},
	}
}

// clusterVolumes are the backup Job's volumes of the cluster and their
// mounts: the backup user's password, and the nodes' CA with TLS.
func clusterVolumes(in Inputs) ([]corev1.Volume, []corev1.VolumeMount) {
	volumes := []corev1.Volume{backupjob.SecretVolume("redis-password", rediscluster.BackupSecretName(in.Cluster), rediscluster.PasswordKey, rediscluster.PasswordKey)}
	mounts := []corev1.VolumeMount{{Name: "redis-password", MountPath: passwordDir, ReadOnly: true}}
	if tls := in.Cluster.Spec.TLS; tls != nil {
		volumes = append(volumes, backupjob.SecretVolume("redis-ca", tls.SecretName, backupjob.CAFile, backupjob.CAFile))
		mounts = append(mounts, corev1.VolumeMount{Name: "redis-ca", MountPath: redisCADir, ReadOnly: true})
	}
	return volumes, mounts
}
