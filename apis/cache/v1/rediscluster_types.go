package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/apis/shared"
)

// RedisClusterSpec is the Redis Cluster to run.
// +kubebuilder:validation:XValidation:rule="has(self.storage) == has(oldSelf.storage)",message="spec.storage cannot be added or removed: a StatefulSet's volumes are fixed"
// +kubebuilder:validation:XValidation:rule="has(self.tls) == has(oldSelf.tls)",message="spec.tls cannot be added or removed on a running cluster: its nodes serve either plain text or TLS"
// +kubebuilder:validation:XValidation:rule="has(self.restoreFrom) == has(oldSelf.restoreFrom)",message="spec.restoreFrom is set only when the RedisCluster is created, and stays: a restore loads a new, empty cluster"
type RedisClusterSpec struct {
	// Size is the number of master shards. Scaling moves slots with their
	// keys; a shrinking cluster drains the leaving masters before their
	// pods go. At most 100: with 5 replicas each that is 600 pods, well
	// within the 1000 nodes Redis Cluster is designed for, and the work
	// per reconcile (one connection per node, one status entry per pod)
	// stays small; Size*(1+ReplicasPerMaster) cannot overflow.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +required
	Size int32 `json:"size"`

	// ReplicasPerMaster is the number of replicas of each master.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:default=0
	// +optional
	ReplicasPerMaster int32 `json:"replicasPerMaster,omitempty"`

	// Image overrides the manager's default Redis 7 image (its REDIS_IMAGE
	// environment variable). It must provide redis-server.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Resources of the redis container; modest defaults when absent.
	// +kubebuilder:validation:XValidation:rule="(!has(self.limits) || size(self.limits) <= 8) && (!has(self.requests) || size(self.requests) <= 8)",message="spec.resources.limits and spec.resources.requests may each name at most 8 resources"
	// +kubebuilder:validation:XValidation:rule="!has(self.claims) || size(self.claims) == 0",message="spec.resources.claims is not supported: the pods declare no resource claims"
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Storage gives every node a PersistentVolumeClaim; without it the data
	// lives in an emptyDir and survives container restarts only.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.storage is immutable"
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// Auth configures the password of the clients' default user. Without
	// it the operator generates a password into the Secret <name>-auth:
	// authentication is on unless auth.disabled is true.
	// +optional
	Auth *AuthSpec `json:"auth,omitempty"`

	// TLS makes the nodes serve TLS only, on the client port, the cluster
	// bus and replication.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// RedisConfig sets redis.conf parameters of every node, such as
	// maxmemory-policy. Only tuning parameters are accepted: the operator
	// owns the cluster, network, persistence location and security ones. A
	// change is rolled out one node at a time, masters failing over first.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('cluster-') && !(k in ['port', 'tls-port', 'bind', 'dir', 'dbfilename', 'appendfilename', 'appenddirname', 'requirepass', 'masterauth', 'masteruser', 'rename-command', 'aclfile', 'include', 'protected-mode', 'daemonize', 'logfile', 'unixsocket', 'replicaof', 'slaveof', 'enable-debug-command', 'enable-module-command', 'enable-protected-configs', 'loadmodule']))",message="spec.redisConfig cannot set cluster-*, port, tls-port, bind, dir, dbfilename, appendfilename, appenddirname, requirepass, masterauth, masteruser, rename-command, aclfile, include, protected-mode, daemonize, logfile, unixsocket, replicaof, enable-*-command or loadmodule: the operator owns them"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['maxmemory', 'maxmemory-policy', 'maxmemory-samples', 'maxmemory-eviction-tenacity', 'maxclients', 'timeout', 'tcp-keepalive', 'tcp-backlog', 'hz', 'dynamic-hz', 'appendonly', 'appendfsync', 'auto-aof-rewrite-percentage', 'auto-aof-rewrite-min-size', 'save', 'lazyfree-lazy-eviction', 'lazyfree-lazy-expire', 'lazyfree-lazy-server-del', 'lazyfree-lazy-user-del', 'lazyfree-lazy-user-flush', 'replica-lazy-flush', 'slowlog-log-slower-than', 'slowlog-max-len', 'latency-monitor-threshold', 'notify-keyspace-events', 'hash-max-listpack-entries', 'hash-max-listpack-value', 'list-max-listpack-size', 'list-compress-depth', 'set-max-intset-entries', 'set-max-listpack-entries', 'zset-max-listpack-entries', 'zset-max-listpack-value', 'activedefrag', 'io-threads', 'io-threads-do-reads', 'repl-backlog-size', 'repl-diskless-sync', 'repl-timeout', 'min-replicas-to-write', 'min-replicas-max-lag', 'client-output-buffer-limit', 'loglevel'])",message="spec.redisConfig accepts only tuning parameters: maxmemory*, maxclients, timeout, tcp-*, hz, appendonly, appendfsync, auto-aof-rewrite-*, save, lazyfree-*, slowlog-*, latency-monitor-threshold, notify-keyspace-events, *-max-listpack-*, list-compress-depth, set-max-intset-entries, activedefrag, io-threads*, repl-backlog-size, repl-diskless-sync, repl-timeout, min-replicas-*, client-output-buffer-limit, loglevel"
	// Each value is what redis-server reads after --<key> on its command
	// line (see RedisConfigValue), checked against its key's form.
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['maxmemory-samples', 'maxmemory-eviction-tenacity', 'maxclients', 'timeout', 'tcp-keepalive', 'tcp-backlog', 'hz', 'auto-aof-rewrite-percentage', 'slowlog-log-slower-than', 'slowlog-max-len', 'latency-monitor-threshold', 'hash-max-listpack-entries', 'hash-max-listpack-value', 'list-max-listpack-size', 'list-compress-depth', 'set-max-intset-entries', 'set-max-listpack-entries', 'zset-max-listpack-entries', 'zset-max-listpack-value', 'io-threads', 'repl-timeout', 'min-replicas-to-write', 'min-replicas-max-lag']) || self[k].matches('^-?[0-9]{1,12}$'))",message="spec.redisConfig: maxmemory-samples, maxmemory-eviction-tenacity, maxclients, timeout, tcp-*, hz, auto-aof-rewrite-percentage, slowlog-*, latency-monitor-threshold, *-max-listpack-*, list-compress-depth, set-max-intset-entries, io-threads, repl-timeout and min-replicas-* take a whole number, such as 10000"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['dynamic-hz', 'appendonly', 'lazyfree-lazy-eviction', 'lazyfree-lazy-expire', 'lazyfree-lazy-server-del', 'lazyfree-lazy-user-del', 'lazyfree-lazy-user-flush', 'replica-lazy-flush', 'activedefrag', 'io-threads-do-reads', 'repl-diskless-sync']) || self[k] in ['yes', 'no'])",message="spec.redisConfig: dynamic-hz, appendonly, lazyfree-*, replica-lazy-flush, activedefrag, io-threads-do-reads and repl-diskless-sync take yes or no"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['maxmemory', 'auto-aof-rewrite-min-size', 'repl-backlog-size']) || self[k].matches('^[0-9]{1,15}([kKmMgG][bB]?|[bB])?$'))",message="spec.redisConfig: maxmemory, auto-aof-rewrite-min-size and repl-backlog-size take a size in bytes, such as 1048576, 100mb or 2gb"
	// +kubebuilder:validation:XValidation:rule="!('maxmemory-policy' in self) || self['maxmemory-policy'] in ['volatile-lru', 'allkeys-lru', 'volatile-lfu', 'allkeys-lfu', 'volatile-random', 'allkeys-random', 'volatile-ttl', 'noeviction']",message="spec.redisConfig.maxmemory-policy must be one of volatile-lru, allkeys-lru, volatile-lfu, allkeys-lfu, volatile-random, allkeys-random, volatile-ttl or noeviction"
	// +kubebuilder:validation:XValidation:rule="!('appendfsync' in self) || self['appendfsync'] in ['always', 'everysec', 'no']",message="spec.redisConfig.appendfsync must be always, everysec or no"
	// +kubebuilder:validation:XValidation:rule="!('loglevel' in self) || self['loglevel'] in ['debug', 'verbose', 'notice', 'warning', 'nothing']",message="spec.redisConfig.loglevel must be debug, verbose, notice, warning or nothing"
	// +kubebuilder:validation:XValidation:rule="!('save' in self) || self['save'].matches('^([0-9]{1,10} [0-9]{1,10}( [0-9]{1,10} [0-9]{1,10})*)?$')",message="spec.redisConfig.save takes pairs of seconds and changes, such as \"3600 1 300 100\", or \"\" for no snapshots"
	// +kubebuilder:validation:XValidation:rule="!('notify-keyspace-events' in self) || self['notify-keyspace-events'].matches('^[KEg$lshzxetmdnA]*$')",message="spec.redisConfig.notify-keyspace-events takes the class letters of redis.conf, such as \"Ex\""
	// +kubebuilder:validation:XValidation:rule="!('client-output-buffer-limit' in self) || self['client-output-buffer-limit'].matches('^(normal|replica|slave|pubsub) [0-9]{1,15}([kKmMgG][bB]?|[bB])? [0-9]{1,15}([kKmMgG][bB]?|[bB])? [0-9]{1,10}( (normal|replica|slave|pubsub) [0-9]{1,15}([kKmMgG][bB]?|[bB])? [0-9]{1,15}([kKmMgG][bB]?|[bB])? [0-9]{1,10})*$')",message="spec.redisConfig.client-output-buffer-limit takes groups of class, hard limit, soft limit and seconds, such as \"pubsub 32mb 8mb 60\""
	// +optional
	RedisConfig RedisConfig `json:"redisConfig,omitempty"`

	// PodTemplate sets where the pods are scheduled (nodeSelector,
	// tolerations, affinity, topologySpreadConstraints, priorityClassName),
	// their extra labels and annotations, and their imagePullSecrets, with
	// the Pod spec's field names. See docs/placement.md.
	// +optional
	PodTemplate *shared.PodTemplate `json:"podTemplate,omitempty"`

	// Monitoring runs a redis_exporter sidecar beside every node, serving
	// Prometheus metrics on the port named metrics (9121). It logs in as
	// its own ACL user, exporter, which may only read the server's
	// statistics, with a password the operator generates into the Secret
	// <name>-exporter. The exporter is on unless
	// monitoring.exporter.disabled is true; its image defaults to the
	// manager's REDIS_EXPORTER_IMAGE. The write canary (monitoring.canary)
	// is off unless enabled. See docs/rediscluster.md.
	// +optional
	Monitoring *RedisClusterMonitoring `json:"monitoring,omitempty"`

	// RestoreFrom loads a backup into the new cluster before it is Ready
	// and before its client Service exists. Set only at creation, and
	// immutable; see docs/rediscluster.md, "Restoring from a backup".
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.restoreFrom is immutable"
	// +optional
	RestoreFrom *RestoreSource `json:"restoreFrom,omitempty"`
}

// RestoreSource names the backup a new RedisCluster is loaded from.
// +kubebuilder:validation:XValidation:rule="has(self.backupName) != has(self.scheduleName)",message="spec.restoreFrom needs exactly one of backupName or scheduleName"
type RestoreSource struct {
	// BackupName names a RedisClusterBackup of this namespace; the restore
	// waits until it is Complete.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	BackupName string `json:"backupName,omitempty"`

	// ScheduleName names a RedisClusterBackupSchedule of this namespace:
	// the restore loads the newest Complete backup it made, chosen once
	// (status.restore.backupName) and kept; it waits while there is none.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ScheduleName string `json:"scheduleName,omitempty"`
}

// AnnotationRestoreBackup is the annotation of a RedisCluster's restore Job
// whose value names the RedisClusterBackup the Job loads, set when the Job
// is created. For spec.restoreFrom.scheduleName the controller chooses that
// backup once; a status write lost after the Job was created cannot make it
// choose again: status.restore.backupName is taken back from the Job, whose
// choice wins.
const AnnotationRestoreBackup = "cache.example.com/restore-backup"

// RestorePhase is where a restore is.
// +kubebuilder:validation:Enum=Pending;Running;Complete;Failed
type RestorePhase string

// Phases of a restore.
const (
	// RestorePending: the backup is not Complete yet, or the cluster is
	// forming, or the restore Job has not started.
	RestorePending RestorePhase = "Pending"
	// RestoreRunning: the restore Job runs.
	RestoreRunning RestorePhase = "Running"
	// RestoreComplete: every key of the backup was loaded; it never runs
	// again.
	RestoreComplete RestorePhase = "Complete"
	// RestoreFailed: the restore failed; the cluster stays not Ready.
	RestoreFailed RestorePhase = "Failed"
)

// RestoreStatus is what the restore of spec.restoreFrom did.
type RestoreStatus struct {
	// Phase is Pending, Running, Complete or Failed.
	// +optional
	Phase RestorePhase `json:"phase,omitempty"`

	// BackupName is the RedisClusterBackup restored.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	BackupName string `json:"backupName,omitempty"`

	// JobName is the restore Job.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	JobName string `json:"jobName,omitempty"`

	// Keys is how many keys were restored, once Complete.
	// +optional
	Keys int64 `json:"keys,omitempty"`

	// StartTime is when the restore Job was created.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the restore completed or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// RedisConfig maps redis.conf parameters to their values.
//
// Its values are RedisConfigValue, an alias of string, so that the map is
// a map[string]string to Go while the schema bounds every value (which
// also keeps the CEL cost of the map's rules small). controller-gen's
// deepcopy cannot copy a map of aliases, so DeepCopyInto is written by
// hand (rediscluster_deepcopy.go).
// +kubebuilder:object:generate=false
type RedisConfig map[string]RedisConfigValue

// RedisConfigValue is one value of spec.redisConfig. The operator passes it
// to redis-server as the argument after --<key>, which redis-server quotes
// into its configuration as one line. A value that starts with "--" could
// start another option (after --save it does), a lone "-" last on the
// command line makes redis-server read its configuration from stdin, and a
// newline or other control character breaks the line: these are refused,
// while a negative number such as list-max-listpack-size's -2 is kept.
// +kubebuilder:validation:MaxLength=128
// +kubebuilder:validation:XValidation:rule=`!self.matches('[\\x00-\\x1f\\x7f]')`,message="a spec.redisConfig value must be one line without tabs or other control characters"
// +kubebuilder:validation:XValidation:rule="!self.startsWith('-') || self.matches('^-[0-9]{1,12}$')",message="a spec.redisConfig value cannot start with '-', except a negative number: redis-server would read it as an option of its own"
type RedisConfigValue = string

// AuthSpec is how clients authenticate.
// +kubebuilder:validation:XValidation:rule="!(has(self.disabled) && self.disabled) || (!has(self.passwordSecret) && !has(self.previousPasswordKey))",message="spec.auth.disabled cannot be combined with passwordSecret or previousPasswordKey"
// +kubebuilder:validation:XValidation:rule="!has(self.previousPasswordKey) || !has(self.passwordSecret) || self.previousPasswordKey != self.passwordSecret.key",message="spec.auth.previousPasswordKey must name another key than passwordSecret.key"
type AuthSpec struct {
	// Disabled turns authentication off: any client that reaches a node may
	// run any command. The operator reports it with a Warning event and the
	// AuthEnabled condition.
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// PasswordSecret names the Secret and key that hold the clients'
	// password. The Secret must be in the RedisCluster's namespace and carry
	// the label multi-operator.dev/watch=true, so that the operator sees it
	// and applies its changes. Without it the operator generates <name>-auth.
	// It cannot be a Secret the operator generated for any RedisCluster
	// (<name>-operator, <name>-acl, <name>-bus, or another cluster's): its password
	// would reach the nodes, which run this cluster's image.
	// +optional
	PasswordSecret *SecretKeyRef `json:"passwordSecret,omitempty"`

	// PreviousPasswordKey names a second key of the same Secret whose
	// password the nodes still accept, so that clients can move to a new
	// password one by one. Remove it when they have.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	PreviousPasswordKey string `json:"previousPasswordKey,omitempty"`
}

// SecretKeyRef names a key of a Secret in the RedisCluster's namespace.
type SecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Key within the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +required
	Key string `json:"key"`
}

// TLSSpec names the nodes' certificate.
type TLSSpec struct {
	// SecretName names a Secret in the RedisCluster's namespace with
	// tls.crt, tls.key and ca.crt, as cert-manager writes them, labelled
	// multi-operator.dev/watch=true. Every node serves tls.crt and verifies
	// its peers against ca.crt; a renewed certificate is reloaded without a
	// restart. It cannot be a Secret the operator generated for any
	// RedisCluster (<name>-auth, <name>-operator, <name>-acl, <name>-bus,
	// or another cluster's).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.tls.secretName is immutable: renew the certificate in the same Secret"
	// +required
	SecretName string `json:"secretName"`
}

// StorageSpec is the volume claim of each node.
type StorageSpec struct {
	// Size is the requested capacity of each claim, more than zero.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.storage.size must be more than zero, such as 1Gi"
	// +required
	Size resource.Quantity `json:"size"`

	// StorageClassName selects the storage class; the cluster's default when absent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// Condition types of a RedisCluster, beside Ready.
const (
	// ConditionProgressing is True while the operator changes the cluster;
	// its message names the current step.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the cluster cannot serve every slot or
	// a node cannot be reached.
	ConditionDegraded = "Degraded"
	// ConditionAuthEnabled is True when the nodes require a password, and
	// False when spec.auth.disabled turned authentication off.
	ConditionAuthEnabled = "AuthEnabled"
	// ConditionDataLost is True once slots had to be assigned anew because
	// no node held them any more: their keys were lost. It stays, with the
	// time it happened.
	ConditionDataLost = "DataLost"
	// ConditionBusIsolated is True when the nodes accept cluster-bus and
	// replication connections only from nodes with this cluster's
	// certificate, and False, with the reason and the way to get it, when
	// they rely on a NetworkPolicy alone.
	ConditionBusIsolated = "BusIsolated"
	// ConditionRestored is True once the backup of spec.restoreFrom was
	// loaded; absent without spec.restoreFrom.
	ConditionRestored = "Restored"
)

// RedisClusterStatus is the observed state of the Redis Cluster.
type RedisClusterStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Nodes are the names of the cluster's pods.
	// +optional
	Nodes []string `json:"nodes,omitempty"`

	// ReadyNodes is how many nodes answer, report cluster_state:ok and
	// run in a Ready pod, which the Services route to.
	// +optional
	ReadyNodes int32 `json:"readyNodes,omitempty"`

	// ClusterState is cluster_state from CLUSTER INFO: ok, fail, or unknown
	// while nodes cannot be reached.
	// +optional
	ClusterState string `json:"clusterState,omitempty"`

	// SlotsAssigned is how many of the 16384 slots a node serves.
	// +optional
	SlotsAssigned int32 `json:"slotsAssigned,omitempty"`

	// Size is how many masters serve slots, for the scale subresource.
	// +optional
	Size int32 `json:"size,omitempty"`

	// Selector selects the cluster's pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// Auth names the Secret with the clients' password.
	// +optional
	Auth *AuthStatus `json:"auth,omitempty"`

	// Rollout is the rolling change in progress, absent when every node
	// runs the StatefulSet's current revision.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`

	// LeavingDrainedSince is when the nodes a scale-down removes were found
	// to serve no slot. They stay in the cluster until the drain grace
	// after it has passed, redirecting clients with an old slot map.
	// +optional
	LeavingDrainedSince *metav1.Time `json:"leavingDrainedSince,omitempty"`

	// Migration is the last measured move of slots with their keys: how
	// fast this cluster migrates, from which a scale's duration (and a
	// TDSet's lead time) is estimated. Absent until a move took long
	// enough to measure.
	// +optional
	Migration *MigrationStatus `json:"migration,omitempty"`

	// Masters names the master of each shard, as last seen, so that a
	// failover by Redis itself is noticed and reported.
	// +optional
	Masters []string `json:"masters,omitempty"`

	// Restore is the restore of spec.restoreFrom.
	// +optional
	Restore *RestoreStatus `json:"restore,omitempty"`

	// Conditions: Ready (the cluster is ok and every slot is served),
	// Progressing (with the current step), Degraded and AuthEnabled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RolloutStatus is the progress of a rolling change, one node at a time.
type RolloutStatus struct {
	// Revision is the StatefulSet revision being rolled out.
	Revision string `json:"revision"`
	// Updated is how many nodes run it.
	Updated int32 `json:"updated"`
	// Total is how many nodes there are.
	Total int32 `json:"total"`
	// Pod is the node of the current step.
	// +optional
	Pod string `json:"pod,omitempty"`
	// Step says what the current step does, such as "failing over
	// example-rediscluster-0 to example-rediscluster-1".
	// +optional
	Step string `json:"step,omitempty"`
	// StepStarted is when the current step began; a step that takes too
	// long stalls the rollout until its cause is gone.
	// +optional
	StepStarted *metav1.Time `json:"stepStarted,omitempty"`
	// Evacuating names a master without replica or volume whose slots and
	// keys are moved away while it restarts empty.
	// +optional
	Evacuating string `json:"evacuating,omitempty"`
	// Canary is what the write canary found during the rollout and its
	// current step, when it runs.
	// +optional
	Canary *RolloutCanary `json:"canary,omitempty"`
}

// MigrationStatus is one measured migration: a reconcile's moves of
// slots with their keys, in a scale or a rebalance.
type MigrationStatus struct {
	// Slots is how many slots moved with their keys.
	Slots int32 `json:"slots"`
	// Keys is how many keys they held.
	Keys int64 `json:"keys"`
	// Bytes estimates the memory of those keys, from each source's
	// dataset memory per key.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// Duration is how long the moves took.
	Duration metav1.Duration `json:"duration"`
	// KeysPerSecond is Keys over Duration.
	KeysPerSecond int64 `json:"keysPerSecond"`
	// BytesPerSecond is Bytes over Duration.
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// SlotsPerMinute is Slots over Duration: with Redis Cluster's 16384
	// slots, how long moving a share of them takes.
	SlotsPerMinute int64 `json:"slotsPerMinute"`
	// MeasuredAt is when the moves ended.
	MeasuredAt metav1.Time `json:"measuredAt"`
}

// AuthStatus says where clients find the password.
type AuthStatus struct {
	// SecretName is the Secret with the clients' password: spec's
	// passwordSecret or the generated <name>-auth.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// SecretKey is the key of the password in that Secret.
	// +optional
	SecretKey string `json:"secretKey,omitempty"`
}

// RedisCluster runs a Redis Cluster that scales without losing keys.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.size,selectorpath=.status.selector
// +kubebuilder:resource:path=redisclusters,singular=rediscluster,shortName=rdc,categories=multi-operator
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 52",message="the name must have at most 52 characters: it names the StatefulSet, whose pods' labels carry it"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="the name must consist of lower-case letters, digits and '-', start with a letter and end with a letter or digit (a DNS-1035 label such as my-redis-1): it names the cluster's Services"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.auth) || !has(self.spec.auth.passwordSecret) || !(self.spec.auth.passwordSecret.name in [self.metadata.name + '-acl', self.metadata.name + '-operator', self.metadata.name + '-bus'])",message="spec.auth.passwordSecret cannot name <metadata.name>-acl, <metadata.name>-operator or <metadata.name>-bus: the operator generates them for this RedisCluster's own use; name a Secret you created, or leave passwordSecret out to use the generated <metadata.name>-auth"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.tls) || !(self.spec.tls.secretName in [self.metadata.name + '-acl', self.metadata.name + '-operator', self.metadata.name + '-auth', self.metadata.name + '-bus'])",message="spec.tls.secretName cannot name <metadata.name>-acl, <metadata.name>-operator, <metadata.name>-auth or <metadata.name>-bus: the operator generates them for this RedisCluster's own use; name the Secret that holds your certificate"
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.clusterState`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RedisCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   RedisClusterSpec   `json:"spec"`
	Status RedisClusterStatus `json:"status,omitempty"`
}

// StatusConditions returns the conditions for pkg/conditions.
func (r *RedisCluster) StatusConditions() *[]metav1.Condition { return &r.Status.Conditions }

// RedisClusterList is a list of RedisClusters.
// +kubebuilder:object:root=true
type RedisClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RedisCluster `json:"items"`
}
