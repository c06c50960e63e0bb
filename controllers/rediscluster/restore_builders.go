package rediscluster

import (
	"fmt"
	"path"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// RestoreImageEnv names the environment variable with the restore Job's
// image: the manager's own, which has the restore subcommand. It is the
// backup Jobs' variable, set wherever the redisclusterbackup controller
// runs, which a restore needs anyway: only it completes a backup.
const RestoreImageEnv = "BACKUP_IMAGE"

// DefaultRestoreImage is the restore Job's image when RestoreImageEnv is
// unset: this release's manager image.
const DefaultRestoreImage = "ghcr.io/multi-operator/multi-operator:v0.2.0"

const (
	// restoreAppName is the app.kubernetes.io/name of the restore Job and
	// its pod: not appName, whose pods the Services, the
	// PodDisruptionBudget and the StatefulSet select.
	restoreAppName = "rediscluster-restore"
	// RestoreContainerName is the restore container's name.
	RestoreContainerName = backupjob.RestoreContainerName
	// restoreBackoffLimit retries a failed restore once: a restore
	// replaces the keys it already loaded, so a second run is safe.
	restoreBackoffLimit = 1
	// restoreDeadline stops a Job that never finishes, such as a pod that
	// cannot be scheduled, so that the restore reports Failed.
	restoreDeadline = 6 * time.Hour
	// restoreRunMargin is how much sooner than the deadline the run gives
	// up, so that it still reports why.
	restoreRunMargin = 5 * time.Minute
)

// Where the restore Job's Redis secrets are mounted: the restore user's
// password and the nodes' CA.
const (
	restorePasswordDir = "/var/run/secrets/redis-password"
	restoreRedisCADir  = "/var/run/secrets/redis-ca"
)

// RestoreJobName names rc's restore Job (backupjob.RestoreJobName). Names
// are at most 52 characters.
func RestoreJobName(rc *cachev1.RedisCluster) string { return backupjob.RestoreJobName(rc.Name) }

// RestoreConfig is the restore Job's command line: the cluster's headless
// Service (the client Service does not exist until the restore is
// complete), the restore's own user (redisadmin.RestoreUser) with the
// password of <name>-restore, b's folder in its store, and what b's status
// recorded (ExpectedOf), which the run holds the manifest to. The user is
// the same whether or not the clients need a password: the Job never holds
// the clients' password, and may only restore.
func RestoreConfig(rc *cachev1.RedisCluster, b *cachev1.RedisClusterBackup) backupjob.RestoreConfig {
	c := backupjob.Config{
		Seeds:          []string{fmt.Sprintf("%s.%s.svc:%d", HeadlessServiceName(rc), rc.Namespace, ClientPort)},
		ClientPort:     ClientPort,
		PasswordFile:   path.Join(restorePasswordDir, PasswordKey),
		Path:           b.Folder(),
		Timeout:        restoreDeadline - restoreRunMargin,
		TerminationLog: corev1.TerminationMessagePathDefault,
	}
	if rc.Spec.TLS != nil {
		c.RedisCAFile = path.Join(restoreRedisCADir, backupjob.CAFile)
	}
	c.SetStore(b.Spec.Destination)
	return backupjob.RestoreConfig{Config: c, Username: redisadmin.RestoreUser, Expect: ExpectedOf(b)}
}

// ExpectedOf is what b's status recorded of its files: the totals, and each
// file it lists (all of them unless it left some out to fit). The check is
// the run's, not this controller's, for two reasons: the run refuses a
// changed manifest before it writes a key, where a comparison of the
// result's count with the status could only fail a cluster that already
// holds the wrong keys; and only the run reads the files, so only it can
// hold each one to the SHA-256 the status recorded. A Complete backup
// always has totals; without them the run refuses its flags.
func ExpectedOf(b *cachev1.RedisClusterBackup) backupjob.Expected {
	st := b.Status
	if st.Totals == nil {
		return backupjob.Expected{Keys: -1}
	}
	e := backupjob.Expected{Keys: st.Totals.Keys, Shards: int(st.Totals.Shards)}
	for _, f := range st.Shards {
		e.Files = append(e.Files, backupjob.ExpectedFile{Name: f.File, SHA256: f.SHA256})
	}
	return e
}

// DesiredRestoreJob is the Job that loads b into rc with image: the
// manager's binary as `manager restore`, restricted, without a service
// account token, every secret a file of a volume that holds only the key
// it needs, and a claim mounted read-only; annotated with b's name
// (cachev1.AnnotationRestoreBackup).
func DesiredRestoreJob(rc *cachev1.RedisCluster, b *cachev1.RedisClusterBackup, image string) *batchv1.Job {
	volumes, mounts := backupjob.StoreVolumes(b.Spec.Destination, true)
	volumes = append(volumes, backupjob.SecretVolume("redis-password", RestoreSecretName(rc), PasswordKey, PasswordKey))
	mounts = append(mounts, corev1.VolumeMount{Name: "redis-password", MountPath: restorePasswordDir, ReadOnly: true})
	if tls := rc.Spec.TLS; tls != nil {
		volumes = append(volumes, backupjob.SecretVolume("redis-ca", tls.SecretName, TLSCAKey, backupjob.CAFile))
		mounts = append(mounts, corev1.VolumeMount{Name: "redis-ca", MountPath: restoreRedisCADir, ReadOnly: true})
	}
	job := backupjob.Job(backupjob.JobTemplate{
		Name: RestoreJobName(rc), Namespace: rc.Namespace, Labels: ownership.Labels(restoreAppName, rc.Name),
		Container: RestoreContainerName, Image: image,
		Args:    append([]string{"restore"}, RestoreConfig(rc, b).Args()...),
		Volumes: volumes, Mounts: mounts,
		BackoffLimit: restoreBackoffLimit, Deadline: restoreDeadline,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("100m"),
				corev1.ResourceMemory: resource.MustParse("128Mi"),
			},
			// Four files parse at once, each master with a few batches
			// of redisrestore.DefaultBatchBytes.
			Limits: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("2"),
				corev1.ResourceMemory: resource.MustParse("512Mi"),
			},
		},
	})
	// The backup chosen, kept with the Job: status.restore.backupName is
	// recovered from it (backupjob.RestoreJobsBackup).
	job.Annotations = map[string]string{cachev1.AnnotationRestoreBackup: b.Name}
	return job
}
