package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RedisClusterBackupSpec is the backup to take: which cluster, and where
// its files go. It cannot change once created: a backup is taken once.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: a backup is taken once; create another RedisClusterBackup for another backup"
type RedisClusterBackupSpec struct {
	// ClusterName names the RedisCluster to back up, in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +required
	ClusterName string `json:"clusterName"`

	// Destination is where the backup's files go: an S3-compatible object
	// store or a PersistentVolumeClaim. Either way the files are
	// <namespace>/<clusterName>/<metadata.name>/shard-NNN.rdb, one per
	// shard, and manifest.json, written last, below s3.prefix or the
	// volume's root.
	// +required
	Destination BackupDestination `json:"destination"`
}

// BackupDestination is exactly one place for the backup's files.
// +kubebuilder:validation:XValidation:rule="has(self.s3) != has(self.persistentVolumeClaim)",message="spec.destination must set exactly one of s3 or persistentVolumeClaim"
type BackupDestination struct {
	// S3 is a bucket of an S3-compatible object store.
	// +optional
	S3 *S3Destination `json:"s3,omitempty"`

	// PersistentVolumeClaim is a claim in this namespace that the backup
	// Job mounts: a volume the cluster's nodes do not use.
	// +optional
	PersistentVolumeClaim *PVCDestination `json:"persistentVolumeClaim,omitempty"`

	// Encryption, when set, encrypts every shard's file before it leaves
	// the Job (AES-256-GCM), with a key a restore needs too. The manifest,
	// which holds slots and counts only, stays readable.
	// +optional
	Encryption *BackupEncryption `json:"encryption,omitempty"`
}

// BackupEncryption names the key the backup's files are encrypted with.
type BackupEncryption struct {
	// KeySecretRef is a key of a Secret of this namespace, labelled
	// multi-operator.dev/watch=true, holding 32 random bytes or their
	// base64 (openssl rand -base64 32). Keep a copy outside the cluster:
	// without it the backup cannot be restored.
	// +required
	KeySecretRef KeyRef `json:"keySecretRef"`
}

// S3Destination is a bucket of an S3-compatible store.
// +kubebuilder:validation:XValidation:rule="self.endpoint.startsWith('https://') || (has(self.insecure) && self.insecure)",message="spec.destination.s3.endpoint must start with https://; an http:// endpoint needs insecure: true, since the data and the request signatures then cross the network in clear text"
// +kubebuilder:validation:XValidation:rule="!has(self.caBundle) || self.endpoint.startsWith('https://')",message="spec.destination.s3.caBundle applies to an https:// endpoint only"
type S3Destination struct {
	// Endpoint is the store's URL, scheme and host with an optional port,
	// without a path: https://s3.eu-west-1.amazonaws.com, or
	// http://minio.storage:9000 with insecure: true.
	// +kubebuilder:validation:MinLength=8
	// +kubebuilder:validation:MaxLength=280
	// +kubebuilder:validation:Pattern=`^https?://([a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?|\[[0-9a-fA-F:.]+\])(:[0-9]{1,5})?/?$`
	// +required
	Endpoint string `json:"endpoint"`

	// Insecure allows an http:// endpoint. Without it the endpoint must be
	// https://, and the store's certificate is verified.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// Bucket holds the backups; it must exist.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
	// +required
	Bucket string `json:"bucket"`

	// Prefix is one folder of the bucket that the backups go below, as
	// <prefix>/<namespace>/<clusterName>/<metadata.name>/: letters,
	// digits, '.', '_' and '-', without '/'. Keys always continue with the
	// namespace, so a backup never writes outside its namespace's folder.
	// The bucket's root when absent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-][a-zA-Z0-9._-]*$`
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// Region is the bucket's region, such as us-east-1; the store is asked
	// when absent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-]+$`
	// +optional
	Region string `json:"region,omitempty"`

	// CredentialsSecret names a Secret in this namespace with the keys
	// accessKeyID and secretAccessKey, labelled multi-operator.dev/watch=true
	// so that the operator sees it. Only the backup Job mounts it, as
	// files.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +required
	CredentialsSecret string `json:"credentialsSecret"`

	// CABundle names PEM CA certificates in a ConfigMap or Secret of this
	// namespace, labelled multi-operator.dev/watch=true, that alone are
	// trusted for the store's certificate instead of the system's.
	// +optional
	CABundle *CABundleSource `json:"caBundle,omitempty"`
}

// CABundleSource is a key of a ConfigMap or of a Secret.
// +kubebuilder:validation:XValidation:rule="has(self.configMapKeyRef) != has(self.secretKeyRef)",message="spec.destination.s3.caBundle must set exactly one of configMapKeyRef or secretKeyRef"
type CABundleSource struct {
	// ConfigMapKeyRef is a key of a ConfigMap.
	// +optional
	ConfigMapKeyRef *KeyRef `json:"configMapKeyRef,omitempty"`

	// SecretKeyRef is a key of a Secret.
	// +optional
	SecretKeyRef *KeyRef `json:"secretKeyRef,omitempty"`
}

// KeyRef names a key of a ConfigMap or Secret in the same namespace.
type KeyRef struct {
	// Name of the ConfigMap or Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// Key within its data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +required
	Key string `json:"key"`
}

// PVCDestination is a PersistentVolumeClaim for the backup's files.
type PVCDestination struct {
	// ClaimName names the PersistentVolumeClaim, in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +required
	ClaimName string `json:"claimName"`
}

// BackupPhase is where a backup is.
// +kubebuilder:validation:Enum=Pending;Running;Complete;Failed
type BackupPhase string

// Phases of a RedisClusterBackup.
const (
	// BackupPending: the backup Job is not created or has not started.
	BackupPending BackupPhase = "Pending"
	// BackupRunning: the backup Job runs.
	BackupRunning BackupPhase = "Running"
	// BackupComplete: every shard's file was stored and verified, and the
	// manifest written.
	BackupComplete BackupPhase = "Complete"
	// BackupFailed: the backup failed; what it had stored was removed,
	// by the run itself or by the cleanup Job, unless the message says
	// where it is left.
	BackupFailed BackupPhase = "Failed"
)

// MaxBackupShards bounds status.shards: a RedisCluster has at most 100
// masters.
const MaxBackupShards = 100

// RedisClusterBackupStatus is what the backup did.
type RedisClusterBackupStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Pending, Running, Complete or Failed.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// JobName is the backup Job.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	JobName string `json:"jobName,omitempty"`

	// StartTime is when the Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the backup completed or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Location is where the files are: s3://<bucket>/<key prefix>/ or
	// pvc://<claimName>/<path>/.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Location string `json:"location,omitempty"`

	// Totals are the backup's sizes, once Complete.
	// +optional
	Totals *BackupTotals `json:"totals,omitempty"`

	// Shards are the backup's files, one per shard, in the order of their
	// first slot, once Complete. A cluster of many shards lists only the
	// first ones here (ShardsOmitted says how many more); manifest.json
	// lists them all.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Shards []BackupShardStatus `json:"shards,omitempty"`

	// ShardsOmitted is how many shards Shards leaves out.
	// +optional
	ShardsOmitted int32 `json:"shardsOmitted,omitempty"`

	// Message says what happened last, such as why the backup failed.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// Conditions: Ready is True once the backup is Complete, and False,
	// with the reason, while it waits or after it failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BackupTotals are a backup's sizes.
type BackupTotals struct {
	// Keys is how many keys the backup holds.
	Keys int64 `json:"keys"`
	// Bytes is the size of its files.
	Bytes int64 `json:"bytes"`
	// Shards is how many shard files it has.
	Shards int32 `json:"shards"`
}

// BackupShardStatus is one shard's file.
type BackupShardStatus struct {
	// File is the file's name below the location.
	// +kubebuilder:validation:MaxLength=64
	File string `json:"file"`
	// Slots are the slots its keys belong to, such as 0-5460,5462.
	// +kubebuilder:validation:MaxLength=4096
	Slots string `json:"slots"`
	// Keys is how many keys it holds.
	Keys int64 `json:"keys"`
	// Bytes is its size.
	Bytes int64 `json:"bytes"`
	// SHA256 is the hex SHA-256 of its bytes, checked after it was stored.
	// +kubebuilder:validation:MaxLength=64
	SHA256 string `json:"sha256"`
}

// RedisClusterBackup is one backup of a RedisCluster, taken by a Job in
// its namespace: each shard's snapshot, streamed to an object store or a
// volume and checked on the way.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=redisclusterbackups,singular=redisclusterbackup,shortName=rdcb,categories=multi-operator
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="the name must have at most 63 characters: it names the backup's folder and its Job"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="the name must consist of lower-case letters, digits and '-', and start and end with a letter or digit, such as nightly-20260101"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Keys",type=integer,JSONPath=`.status.totals.keys`
// +kubebuilder:printcolumn:name="Bytes",type=integer,JSONPath=`.status.totals.bytes`
// +kubebuilder:printcolumn:name="Location",type=string,JSONPath=`.status.location`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RedisClusterBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   RedisClusterBackupSpec   `json:"spec"`
	Status RedisClusterBackupStatus `json:"status,omitempty"`
}

// StatusConditions returns the conditions for pkg/conditions.
func (b *RedisClusterBackup) StatusConditions() *[]metav1.Condition { return &b.Status.Conditions }

// RedisClusterBackupList is a list of RedisClusterBackups.
// +kubebuilder:object:root=true
type RedisClusterBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RedisClusterBackup `json:"items"`
}
