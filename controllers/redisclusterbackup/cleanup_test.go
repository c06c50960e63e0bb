package redisclusterbackup_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/redisclusterbackup"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// A deleted backup skips its cleanup only when every fact says it never
// had a Job: any one that says otherwise, whatever a stale status says,
// runs the cleanup.
func TestNeverStarted(t *testing.T) {
	waitingFor := func(reason string) func(*cachev1.RedisClusterBackup) {
		return func(b *cachev1.RedisClusterBackup) {
			b.Status.Phase = cachev1.BackupPending
			conditions.MarkFalse(b, conditions.Ready, reason, "waits")
		}
	}
	for _, tc := range []struct {
		name     string
		change   func(*cachev1.RedisClusterBackup)
		jobFound bool
		want     bool
	}{
		{name: "no status yet", change: func(*cachev1.RedisClusterBackup) {}, want: true},
		{name: "waiting for its cluster", change: waitingFor(cachev1.ReasonClusterNotFound), want: true},
		{name: "waiting for a Secret", change: waitingFor(cachev1.ReasonSecretNotWatched), want: true},
		{name: "a stale waiting status, its Job found", change: waitingFor(cachev1.ReasonClusterNotFound), jobFound: true},
		{name: "a stale waiting status, its Job created and gone", change: func(b *cachev1.RedisClusterBackup) {
			waitingFor(cachev1.ReasonClusterNotFound)(b)
			metav1.SetMetaDataAnnotation(&b.ObjectMeta, cachev1.AnnotationBackupJobCreated, "true")
		}},
		{name: "a start time, from before the annotation", change: func(b *cachev1.RedisClusterBackup) {
			waitingFor(cachev1.ReasonClusterNotFound)(b)
			b.Status.StartTime = &metav1.Time{}
		}},
		{name: "complete, from before the annotation", change: func(b *cachev1.RedisClusterBackup) {
			waitingFor(cachev1.ReasonClusterNotFound)(b)
			b.Status.Phase = cachev1.BackupComplete
		}},
		{name: "its Job pending, from before the annotation", change: waitingFor(cachev1.ReasonBackupPending)},
		{name: "its Job's name taken", change: waitingFor(conditions.ReasonResourceConflict)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := builders.RedisClusterBackup("team", "nightly", "cache").Obj()
			tc.change(b)
			if got := redisclusterbackup.NeverStarted(b, tc.jobFound); got != tc.want {
				t.Fatalf("neverStarted = %v, want %v", got, tc.want)
			}
		})
	}
}
