package v1

// Reasons of a RedisClusterBackupSchedule's Ready condition and events.
const (
	// ReasonScheduled: the schedule runs; Ready's message says when next.
	ReasonScheduled = "Scheduled"
	// ReasonScheduleSuspended: spec.suspend is set; no backup is created,
	// retention still deletes.
	ReasonScheduleSuspended = "Suspended"
	// ReasonInvalidSchedule: spec.schedule or spec.timeZone cannot be
	// read, though admission let it through; nothing is created until the
	// spec is fixed.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonBackupCreated: a tick created a RedisClusterBackup (an event).
	ReasonBackupCreated = "BackupCreated"
	// ReasonBackupSkipped: a tick came while a backup of the schedule was
	// still Pending or Running, and not superseded, and was skipped rather
	// than run late or beside it (an event).
	ReasonBackupSkipped = "BackupSkipped"
	// ReasonBackupSuperseded: a tick found the schedule's previous backup
	// still not started, made for an earlier tick and seen by its controller
	// without a Job (it waits for its cluster or another input, or its Job's
	// name is taken): the tick deleted it and created its own, rather than
	// be skipped like every later one (a Warning event).
	ReasonBackupSuperseded = "BackupSuperseded"
	// ReasonBackupMissed: a tick was found later than
	// spec.startingDeadlineSeconds, such as after the manager was down,
	// and was skipped (a Warning event).
	ReasonBackupMissed = "BackupMissed"
	// ReasonBackupNameTaken: a RedisClusterBackup of the tick's name exists
	// and is not the schedule's (not labelled with it); the tick is
	// skipped (a Warning event).
	ReasonBackupNameTaken = "BackupNameTaken"
	// ReasonBackupDeleted: retention deleted a backup (an event).
	ReasonBackupDeleted = "BackupDeleted"
)
