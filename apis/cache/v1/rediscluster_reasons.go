package v1

import "github.com/multi-operator/multi-operator/pkg/redisadmin"

// Reasons of a RedisCluster's conditions.
const (
	// ReasonClusterOK: every slot is served and the cluster says ok.
	ReasonClusterOK = "ClusterOK"
	// ReasonNodesUnreachable: some nodes cannot be reached, so nothing is changed.
	ReasonNodesUnreachable = "NodesUnreachable"
	// ReasonNodesLoading: the only nodes that cannot be used are loading
	// their dataset (after a restart, or a replica after a full
	// resynchronization); nothing is changed until they finish.
	ReasonNodesLoading = "NodesLoading"
	// ReasonPasswordsRefused: some nodes refuse every password of the
	// default user the operator knows (changed behind its back), so clients
	// that log in with the spec's password are refused there.
	ReasonPasswordsRefused = "PasswordsRefused"
	// ReasonNodesNotReady: the nodes answer and the cluster is ok, but some
	// pods are not Ready (a container that cannot start, such as the
	// exporter's), so the Services do not route to them.
	ReasonNodesNotReady = "NodesNotReady"
	// ReasonReconciling: the operator is changing the cluster.
	ReasonReconciling = "Reconciling"
	// ReasonClusterError: a Redis command failed; the run is retried with backoff.
	ReasonClusterError = "ClusterError"
	// ReasonClusterFail: the nodes report cluster_state other than ok.
	ReasonClusterFail = "ClusterFail"
	// ReasonIdle: nothing to change.
	ReasonIdle = "Idle"
	// ReasonSecretNotFound: a Secret the cluster needs does not exist.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretNotWatched: a referenced Secret exists but lacks the
	// label multi-operator.dev/watch=true, so the operator cannot see it.
	ReasonSecretNotWatched = "SecretNotWatched"
	// ReasonSecretGenerated: a referenced Secret is one the operator
	// generated for a RedisCluster (its controller owner reference says
	// which): a RedisCluster may name only Secrets its users made for it.
	ReasonSecretGenerated = "SecretGenerated"
	// ReasonSecretKeyMissing: a Secret lacks a key the cluster needs.
	ReasonSecretKeyMissing = "SecretKeyMissing"
	// ReasonPasswordUnrecoverable: the generated <name>-auth lacks the
	// clients' password and the masterauth of <name>-acl, from which it
	// would be recovered, cannot be read.
	ReasonPasswordUnrecoverable = "PasswordUnrecoverable"
	// ReasonPasswordEmpty: the password in the Secret is empty.
	ReasonPasswordEmpty = "PasswordEmpty"
	// ReasonTLSSecretInvalid: the TLS Secret's certificate, key or CA cannot be used.
	ReasonTLSSecretInvalid = "TLSSecretInvalid"
	// ReasonPasswordRequired: the AuthEnabled condition's reason when the
	// nodes require a password.
	ReasonPasswordRequired = "PasswordRequired"
	// ReasonAuthDisabled: spec.auth.disabled turned authentication off.
	// The nodes' own change, an event of pkg/redisadmin's actions, says the
	// same, so the value is that action's reason.
	ReasonAuthDisabled = string(redisadmin.ReasonAuthDisabled)
	// ReasonRollingUpdate: a change of the pod template is rolled out.
	ReasonRollingUpdate = "RollingUpdate"
	// ReasonRolloutStalled: a step of the rollout did not finish in time;
	// the rollout resumes once its cause is gone.
	ReasonRolloutStalled = "RolloutStalled"
	// ReasonDataLost: every node came back empty (no spec.storage), so the
	// cluster was built anew and its keys are gone.
	ReasonDataLost = "DataLost"
	// ReasonAcknowledgedWritesLost: the write canary read back less than a
	// replica had acknowledged: the WritesLost condition's reason when
	// True, and its Warning event's.
	ReasonAcknowledgedWritesLost = "AcknowledgedWritesLost"
	// ReasonNoWritesLost: the write canary runs and found no acknowledged
	// write lost.
	ReasonNoWritesLost = "NoWritesLost"
	// ReasonBusCertificate: BusIsolated is True: the cluster bus and
	// replication speak TLS and require a certificate from the CA of the
	// generated <name>-bus, which only this cluster's nodes hold.
	ReasonBusCertificate = "BusCertificate"
	// ReasonBusPlainSinceCreation: BusIsolated is False: the cluster was
	// created before the operator isolated the bus, and its nodes cannot
	// move to a TLS bus one by one without splitting the cluster.
	ReasonBusPlainSinceCreation = "BusPlainSinceCreation"
	// ReasonBusTrustsUserCA: BusIsolated is False: with spec.tls the bus
	// uses the user's certificate, and any holder of a certificate from
	// that CA may join it.
	ReasonBusTrustsUserCA = "BusTrustsUserCA"
)

// Reasons of the events about a RedisCluster's Kubernetes children. The
// events about the Redis Cluster itself (NodeMet, SlotsAssigned,
// SlotsMoved, ...) take their reasons from pkg/redisadmin's actions.
const (
	// ReasonServiceCreated: a Service (headless or client) was created.
	ReasonServiceCreated = "ServiceCreated"
	// ReasonServiceUpdated: a Service was corrected to match the RedisCluster.
	ReasonServiceUpdated = "ServiceUpdated"
	// ReasonPodDisruptionBudgetCreated: the PodDisruptionBudget was created.
	ReasonPodDisruptionBudgetCreated = "PodDisruptionBudgetCreated"
	// ReasonPodDisruptionBudgetUpdated: the PodDisruptionBudget was corrected.
	ReasonPodDisruptionBudgetUpdated = "PodDisruptionBudgetUpdated"
	// ReasonNetworkPolicyCreated: the NetworkPolicy was created.
	ReasonNetworkPolicyCreated = "NetworkPolicyCreated"
	// ReasonNetworkPolicyUpdated: the NetworkPolicy was corrected.
	ReasonNetworkPolicyUpdated = "NetworkPolicyUpdated"
	// ReasonStatefulSetCreated: the StatefulSet was created.
	ReasonStatefulSetCreated = "StatefulSetCreated"
	// ReasonStatefulSetUpdated: the StatefulSet was corrected or grown.
	ReasonStatefulSetUpdated = "StatefulSetUpdated"
	// ReasonSecretCreated: a Secret the operator generates was created.
	ReasonSecretCreated = "SecretCreated"
	// ReasonSecretUpdated: a generated Secret was corrected, or its
	// configuration follows a rotated password.
	ReasonSecretUpdated = "SecretUpdated"
	// ReasonSecretEmptied: a generated Secret whose password is not needed
	// any more lost it, such as the restore's once the restore is over; the
	// Secret itself goes with the cluster.
	ReasonSecretEmptied = "SecretEmptied"
	// ReasonPasswordRecovered: the generated <name>-auth was missing and
	// was made again with the password the nodes still accept, the
	// masterauth of <name>-acl, so that clients keep working.
	ReasonPasswordRecovered = "PasswordRecovered"
	// ReasonBusCertificateRecovered: the generated <name>-bus was missing
	// and was made again from its copy in <name>-operator, so that
	// restarted nodes still join the running ones.
	ReasonBusCertificateRecovered = "BusCertificateRecovered"
	// ReasonBusCertificateReplaced: <name>-bus and its copy were both
	// missing while the cluster ran: a new bus CA was made, which the
	// running nodes do not trust.
	ReasonBusCertificateReplaced = "BusCertificateReplaced"
	// ReasonPasswordRotated: every reachable node accepts the current
	// password and only the passwords of the spec.
	ReasonPasswordRotated = "PasswordRotated"
	// ReasonPodRestarted: the operator deleted a node's pod to roll out a
	// change; the StatefulSet makes it again from the new revision.
	ReasonPodRestarted = "PodRestarted"
	// ReasonFailedOver: a master's replica took over its slots, by the
	// operator's CLUSTER FAILOVER before a restart or by Redis itself.
	ReasonFailedOver = "FailedOver"
	// ReasonRolloutFinished: every node runs the current revision.
	ReasonRolloutFinished = "RolloutFinished"
	// ReasonLeavingNodesDrained: the nodes a scale-down removes serve no
	// slot; they leave the cluster after the drain grace.
	ReasonLeavingNodesDrained = "LeavingNodesDrained"
	// ReasonStatefulSetScaledDown: the StatefulSet shrank after its leaving nodes were drained.
	ReasonStatefulSetScaledDown = "StatefulSetScaledDown"
	// ReasonPodMonitorCreated: the PodMonitor of the exporters was created.
	ReasonPodMonitorCreated = "PodMonitorCreated"
	// ReasonPodMonitorUpdated: the PodMonitor was corrected to match the RedisCluster.
	ReasonPodMonitorUpdated = "PodMonitorUpdated"
	// ReasonPodMonitorDeleted: the PodMonitor was deleted, since the
	// RedisCluster disabled it or its exporter.
	ReasonPodMonitorDeleted = "PodMonitorDeleted"

	// ReasonRestorePending: spec.restoreFrom names a backup that does not
	// exist or is not Complete yet, or the cluster is still forming; the
	// client Service is not created until the restore completes.
	ReasonRestorePending = "RestorePending"
	// ReasonRestoreBackupFailed: the backup spec.restoreFrom names failed:
	// nothing can be restored from it.
	ReasonRestoreBackupFailed = "RestoreBackupFailed"
	// ReasonRestoreRunning: the restore Job loads the backup.
	ReasonRestoreRunning = "RestoreRunning"
	// ReasonRestoreJobCreated: the restore Job was created.
	ReasonRestoreJobCreated = "RestoreJobCreated"
	// ReasonRestored: every key of the backup was loaded.
	ReasonRestored = "Restored"
	// ReasonRestoreFailed: the restore Job failed; the cluster stays not
	// Ready. Delete and recreate the RedisCluster to try again.
	ReasonRestoreFailed = "RestoreFailed"
	// ReasonRestoreInvalid: the restore Job's input is wrong (a missing
	// file, a bad flag): retrying cannot help.
	ReasonRestoreInvalid = "RestoreInvalid"
	// ReasonRestoreManifestMismatch: the backup's manifest.json, read from
	// the store, disagrees with what its RedisClusterBackup's status
	// recorded (shard files, keys, a file's SHA-256): it was changed after
	// the backup, and nothing was restored.
	ReasonRestoreManifestMismatch = "RestoreManifestMismatch"
)
