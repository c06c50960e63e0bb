package backupjob

import (
	"path"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// RestoreContainerName is the restore Job's container.
const RestoreContainerName = "restore"

// RestoreJobName names the restore Job of the RedisCluster named cluster:
// one per cluster, so that a manager that restarts finds the Job it made
// and reads its result instead of restoring again. The RedisCluster
// controller makes it; the backup controller reads it to tell which
// backup a restore uses.
func RestoreJobName(cluster string) string { return cluster + "-restore" }

// RestoreJobsBackup is the backup a restore Job was made for: the last
// element of its container's --path, <namespace>/<cluster>/<backup>, or
// empty when there is none or it is not a backup's name. The Job is in
// the tenant's namespace: its annotation (cachev1.AnnotationRestoreBackup)
// says the same for people, but may be edited, while its pod template
// cannot be changed once the Job exists.
func RestoreJobsBackup(job *batchv1.Job) string {
	for _, c := range job.Spec.Template.Spec.Containers {
		if c.Name != RestoreContainerName {
			continue
		}
		for _, arg := range c.Args {
			if folder, ok := strings.CutPrefix(arg, "--path="); ok {
				if name := path.Base(folder); len(validation.IsDNS1123Label(name)) == 0 {
					return name
				}
			}
		}
	}
	return ""
}
