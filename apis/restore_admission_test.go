package apis_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func redisRestore(from cachev1.RestoreSource) *cachev1.RedisCluster {
	return redis(func(rc *cachev1.RedisCluster) { rc.Spec.RestoreFrom = &from })
}

func TestRedisClusterRestoreBounds(t *testing.T) {
	expectBounds(t, []bound{
		{name: "a backup name", obj: redisRestore(cachev1.RestoreSource{BackupName: "nightly-1"})},
		{name: "a backup name of 63 characters", obj: redisRestore(cachev1.RestoreSource{BackupName: strings.Repeat("b", 63)})},
		{name: "a backup name of 64 characters", obj: redisRestore(cachev1.RestoreSource{BackupName: strings.Repeat("b", 64)}), refused: tooLong + " 63"},
		{name: "a backup name with a dot", obj: redisRestore(cachev1.RestoreSource{BackupName: "a.b"}), refused: "should match"},
		{name: "no backup name", obj: redisRestore(cachev1.RestoreSource{}), refused: "spec.restoreFrom needs exactly one of backupName or scheduleName"},
		{name: "a schedule name", obj: redisRestore(cachev1.RestoreSource{ScheduleName: "nightly"})},
		{name: "a schedule name of 51 characters", obj: redisRestore(cachev1.RestoreSource{ScheduleName: strings.Repeat("s", 51)}), refused: tooLong + " 50"},
		{name: "a backup and a schedule", obj: redisRestore(cachev1.RestoreSource{BackupName: "b", ScheduleName: "s"}), refused: "exactly one of backupName or scheduleName"},
	})
}

// spec.restoreFrom is given at creation only: it cannot be added to a
// running cluster, changed, or removed.
func TestRedisClusterRestoreFromOnlyAtCreation(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	const onlyAtCreation = "spec.restoreFrom is set only when the RedisCluster is created"

	plain := builders.RedisCluster(ns, "plain").Size(1).Obj()
	g.Expect(env.Client.Create(ctx, plain)).To(Succeed())
	plain.Spec.RestoreFrom = &cachev1.RestoreSource{BackupName: "nightly"}
	err := env.Client.Update(ctx, plain)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(onlyAtCreation))

	restored := builders.RedisCluster(ns, "restored").Size(1).Obj()
	restored.Spec.RestoreFrom = &cachev1.RestoreSource{BackupName: "nightly"}
	g.Expect(env.Client.Create(ctx, restored)).To(Succeed())
	restored.Spec.RestoreFrom.BackupName = "other"
	err = env.Client.Update(ctx, restored)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.restoreFrom is immutable"))

	restored.Spec.RestoreFrom = nil
	err = env.Client.Update(ctx, restored)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(onlyAtCreation))
}
