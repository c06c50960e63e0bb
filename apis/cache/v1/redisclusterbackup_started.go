package v1

// AnnotationBackupJobCreated is set, to "true", on a RedisClusterBackup by
// its controller before it creates the backup's Job, and never removed. It
// is the durable record that the backup may have stored files: a status
// write can be lost (a failed update, a restart), this annotation is
// written first or the Job is not created. The backup's deletion runs its
// cleanup Job whenever it is there, and a schedule never supersedes a
// backup that carries it.
const AnnotationBackupJobCreated = "cache.example.com/backup-job-created"

// JobCreated reports whether b's controller created, or was about to
// create, b's Job (AnnotationBackupJobCreated).
func (b *RedisClusterBackup) JobCreated() bool {
	return b.Annotations[AnnotationBackupJobCreated] == "true"
}

// MayHaveStarted reports whether anything durable says b's Job was
// created: AnnotationBackupJobCreated, or a status that shows a start
// time or a phase past Pending (a backup whose Job a release before that
// annotation created). False means b waits for its controller or its
// inputs, as far as b itself tells: its controller may still find its Job.
func (b *RedisClusterBackup) MayHaveStarted() bool {
	st := &b.Status
	return b.JobCreated() || st.StartTime != nil || (st.Phase != "" && st.Phase != BackupPending)
}
