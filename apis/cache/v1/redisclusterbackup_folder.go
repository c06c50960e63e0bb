package v1

import "path"

// Folder is the backup's folder below the store's prefix or the volume's
// root, <namespace>/<clusterName>/<name>: where its backup Job writes and a
// restore Job reads.
func (b *RedisClusterBackup) Folder() string {
	return path.Join(b.Namespace, b.Spec.ClusterName, b.Name)
}
