package v1

// Reasons of a RedisClusterBackup's Ready condition and events, beside
// those it shares with RedisCluster (ReasonSecretNotFound,
// ReasonSecretNotWatched, ReasonSecretKeyMissing, ReasonSecretGenerated).
const (
	// ReasonClusterNotFound: spec.clusterName names no RedisCluster of the
	// namespace; the backup waits for it.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonBackupUserMissing: the cluster's <name>-backup Secret, which
	// the RedisCluster controller generates, does not exist yet.
	ReasonBackupUserMissing = "BackupUserMissing"
	// ReasonConfigMapNotFound: the ConfigMap of spec.destination.s3.caBundle
	// does not exist.
	ReasonConfigMapNotFound = "ConfigMapNotFound"
	// ReasonConfigMapNotWatched: that ConfigMap lacks the label
	// multi-operator.dev/watch=true, so the operator cannot see it.
	ReasonConfigMapNotWatched = "ConfigMapNotWatched"
	// ReasonConfigMapKeyMissing: that ConfigMap lacks the named key.
	ReasonConfigMapKeyMissing = "ConfigMapKeyMissing"
	// ReasonBackupJobCreated: the backup Job was created (an event).
	ReasonBackupJobCreated = "BackupJobCreated"
	// ReasonBackupPending: the Job exists but has not started.
	ReasonBackupPending = "BackupPending"
	// ReasonBackupRunning: the Job runs.
	ReasonBackupRunning = "BackupRunning"
	// ReasonBackupComplete: every shard's file was stored and verified,
	// and the manifest written.
	ReasonBackupComplete = "BackupComplete"
	// ReasonBackupFailed: the Job failed without saying why, such as a
	// pod that could not start before the Job's deadline.
	ReasonBackupFailed = "BackupFailed"
	// ReasonBackupResultUnreadable: the Job succeeded but its pod's result
	// is missing or cannot be read, so the backup cannot be trusted.
	ReasonBackupResultUnreadable = "BackupResultUnreadable"
	// ReasonRemovingFailedBackup: the Job failed, and the cleanup Job
	// removes what it stored before the backup reports Failed.
	ReasonRemovingFailedBackup = "RemovingFailedBackup"
)

// Reasons of a RedisClusterBackup that is being deleted: its files are
// removed first, by a cleanup Job.
const (
	// ReasonBackupStopping: the backup's Job still ran when the backup was
	// deleted; it is deleted, and its pods end, before the files go.
	ReasonBackupStopping = "BackupStopping"
	// ReasonCleanupJobCreated: the Job that removes the backup's files
	// was created (an event).
	ReasonCleanupJobCreated = "CleanupJobCreated"
	// ReasonBackupDeleting: the cleanup Job removes the backup's files.
	ReasonBackupDeleting = "BackupDeleting"
	// ReasonBackupInUse: a deleted backup's files stay while a RedisCluster
	// restores from them (spec.restoreFrom); they go once it ended.
	ReasonBackupInUse = "BackupInUse"
	// ReasonBackupFilesRemoved: the cleanup Job removed the backup's
	// files; the backup goes (a Normal event).
	ReasonBackupFilesRemoved = "BackupFilesRemoved"
	// ReasonBackupFilesLeft: the backup goes, but its files could not be
	// removed and are left where the event says: the destination's
	// credentials Secret was gone, or the cleanup Job failed (a Warning
	// event).
	ReasonBackupFilesLeft = "BackupFilesLeft"
)

// Reasons a backup run gives for its failure, in its result; the Ready
// condition and the Warning event carry them.
const (
	// ReasonClusterUnavailable: no node answered as the backup user, or the
	// cluster does not serve every slot, or a master is failing.
	ReasonClusterUnavailable = "ClusterUnavailable"
	// ReasonClusterChanged: slots moved while the backup ran, or were
	// migrating when it began.
	ReasonClusterChanged = "ClusterChanged"
	// ReasonSnapshotFailed: a shard's snapshot could not be taken or read.
	ReasonSnapshotFailed = "SnapshotFailed"
	// ReasonStoreFailed: the destination refused or failed a write.
	ReasonStoreFailed = "StoreFailed"
	// ReasonBackupTimedOut: the backup did not finish within its deadline.
	ReasonBackupTimedOut = "BackupTimedOut"
	// ReasonBackupInvalid: the Job's arguments or mounted files are not
	// what the backup needs.
	ReasonBackupInvalid = "BackupInvalid"
)
