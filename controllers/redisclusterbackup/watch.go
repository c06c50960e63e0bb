package redisclusterbackup

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/backupinputs"
	"github.com/multi-operator/multi-operator/pkg/manager"
)

// Field indexes of RedisClusterBackups, so that a waiting backup is
// reconciled as soon as what it waits for appears, rather than polled.
const (
	// ClusterIndex is a backup's spec.clusterName.
	ClusterIndex = "spec.clusterName"
	// ReferenceIndex holds "Secret/<name>" and "ConfigMap/<name>" of
	// every Secret and ConfigMap a backup's Job would mount: the cluster's
	// <cluster>-backup, the store's credentials and its CA bundle.
	ReferenceIndex = "spec.references"
)

// indexCluster is ClusterIndex's function.
func indexCluster(obj client.Object) []string {
	b, ok := obj.(*cachev1.RedisClusterBackup)
	if !ok {
		return nil
	}
	return []string{b.Spec.ClusterName}
}

// indexReferences is ReferenceIndex's function.
func indexReferences(obj client.Object) []string {
	b, ok := obj.(*cachev1.RedisClusterBackup)
	if !ok {
		return nil
	}
	rc := &cachev1.RedisCluster{}
	rc.Name = b.Spec.ClusterName
	return append([]string{backupinputs.ReferenceKey(backupinputs.KindSecret, rediscluster.BackupSecretName(rc))},
		backupinputs.References(b.Spec.Destination)...)
}

// watchInputs indexes backups by what they wait for and watches it: the
// Secrets and ConfigMaps the cache holds (those labelled
// multi-operator.dev/watch=true, which the rediscluster controller's
// <cluster>-backup is), and RedisClusters where their CRD is served. It
// reports whether RedisClusters are watched: without, a backup waiting for
// its cluster looks again after inputRetry.
func (r *Reconciler) watchInputs(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, bool, error) {
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(context.Background(), &cachev1.RedisClusterBackup{}, ClusterIndex, indexCluster); err != nil {
		return nil, false, err
	}
	if err := indexer.IndexField(context.Background(), &cachev1.RedisClusterBackup{}, ReferenceIndex, indexReferences); err != nil {
		return nil, false, err
	}
	b = b.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.waitingOn(ReferenceIndex, func(o client.Object) string {
		return backupinputs.ReferenceKey(backupinputs.KindSecret, o.GetName())
	}))).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.waitingOn(ReferenceIndex, func(o client.Object) string {
			return backupinputs.ReferenceKey(backupinputs.KindConfigMap, o.GetName())
		})))
	served, err := manager.Serves(mgr, &cachev1.RedisCluster{})
	if err != nil || !served {
		return b, false, err
	}
	// Only a cluster's coming and going matters to a backup that waits.
	createOrDelete := predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return b.Watches(&cachev1.RedisCluster{}, handler.EnqueueRequestsFromMapFunc(r.waitingOn(ClusterIndex, client.Object.GetName)),
		builder.WithPredicates(createOrDelete)).
		// A deleted backup a cluster restores from waits for the restore's
		// end, or the cluster's.
		Watches(&cachev1.RedisCluster{}, handler.EnqueueRequestsFromMapFunc(r.restoreEnded)), true, nil
}

// restoreEnded maps a RedisCluster created with spec.restoreFrom to the
// backup it restores from, at every change and at its deletion (whose
// event may carry the last state, still restoring): that backup, when it
// is being deleted, looks whether the restore ended. A backup that is not
// being deleted writes nothing then. When the cluster restores a
// schedule's newest backup and its status does not say which one, every
// backup of that schedule that is being deleted looks: one of them may
// wait for this restore (restoringFrom found it through the Job).
func (r *Reconciler) restoreEnded(ctx context.Context, obj client.Object) []reconcile.Request {
	rc, ok := obj.(*cachev1.RedisCluster)
	if !ok || rc.Spec.RestoreFrom == nil {
		return nil
	}
	name := rc.Spec.RestoreFrom.BackupName
	if rc.Status.Restore != nil && rc.Status.Restore.BackupName != "" {
		name = rc.Status.Restore.BackupName
	}
	if name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: rc.Namespace, Name: name}}}
	}
	schedule := rc.Spec.RestoreFrom.ScheduleName
	if schedule == "" {
		return nil
	}
	list := &cachev1.RedisClusterBackupList{}
	if err := r.client.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels{cachev1.LabelBackupSchedule: schedule}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the RedisClusterBackups of a schedule a restore may use", "schedule", schedule)
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if b := &list.Items[i]; !b.DeletionTimestamp.IsZero() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
		}
	}
	return out
}

// waitingOn maps an object to the backups of its namespace whose index
// holds key(obj) and that still wait for their inputs: a backup whose Job
// exists reads none of them again.
func (r *Reconciler) waitingOn(index string, key func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &cachev1.RedisClusterBackupList{}
		if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{index: key(obj)}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the RedisClusterBackups that wait for an object", "name", obj.GetName())
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			if b := &list.Items[i]; b.DeletionTimestamp.IsZero() && b.Status.Phase != cachev1.BackupComplete && b.Status.Phase != cachev1.BackupFailed && !b.JobCreated() && waiting(b) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
			}
		}
		return out
	}
}
