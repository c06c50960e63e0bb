package apis_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

func backupSchedule(change func(*builders.RedisClusterBackupScheduleWrapper)) *cachev1.RedisClusterBackupSchedule {
	w := builders.RedisClusterBackupSchedule("", "", "cache")
	change(w)
	return w.Obj()
}

func cron(expression string) *cachev1.RedisClusterBackupSchedule {
	return backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Spec.Schedule = expression })
}

func retention(change func(*cachev1.BackupRetention)) *cachev1.RedisClusterBackupSchedule {
	return backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Retention(change) })
}

func keepWithin(d string) *cachev1.RedisClusterBackupSchedule {
	return retention(func(r *cachev1.BackupRetention) {
		parsed, _ := time.ParseDuration(d)
		r.KeepWithin = &metav1.Duration{Duration: parsed}
	})
}

func TestRedisClusterBackupScheduleBounds(t *testing.T) {
	const keepWithinRange = "retention.keepWithin must be from 1m to 8784h"
	expectBounds(t, []bound{
		{name: "five fields", obj: cron("30 2 * * *")},
		{name: "ranges, steps and names", obj: cron("*/15 8-18 1,15 JAN-MAR MON-FRI")},
		{name: "a descriptor", obj: cron("@weekly")},
		{name: "@every", obj: cron("@every 1m"), refused: badPattern},
		{name: "its own time zone", obj: cron("CRON_TZ=UTC 0 3 * * *"), refused: badPattern},
		{name: "six fields", obj: cron("0 30 2 * * *"), refused: badPattern},
		{name: "four fields", obj: cron("30 2 * *"), refused: badPattern},
		{name: "a newline", obj: cron("30 2 * * *\n"), refused: badPattern},
		{name: "a schedule of 101 characters", obj: cron("0 0 * * " + strings.Repeat("1,", 46) + "1"), refused: tooLong + " 100"},
		{name: "no schedule", obj: cron(""), refused: "spec.schedule"},

		{name: "a time zone", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) {
			w.Spec.TimeZone = "America/Argentina/Buenos_Aires"
		})},
		{name: "a time zone of 65 characters", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Spec.TimeZone = strings.Repeat("Z", 65) }), refused: tooLong + " 64"},
		{name: "a time zone that climbs", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Spec.TimeZone = "../etc/passwd" }), refused: badPattern},

		{name: "a starting deadline of 10s", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) {
			w.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
		})},
		{name: "a starting deadline of 9s", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Spec.StartingDeadlineSeconds = ptr.To[int64](9) }), refused: "greater than or equal to 10"},
		{name: "a starting deadline over a day", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) {
			w.Spec.StartingDeadlineSeconds = ptr.To[int64](86401)
		}), refused: "less than or equal to 86400"},

		{name: "keep the last 1000", obj: retention(func(r *cachev1.BackupRetention) { r.KeepLast = ptr.To[int32](1000) })},
		{name: "keep the last 1001", obj: retention(func(r *cachev1.BackupRetention) { r.KeepLast = ptr.To[int32](1001) }), refused: atMost1000},
		{name: "keep the last 0", obj: retention(func(r *cachev1.BackupRetention) { r.KeepLast = ptr.To[int32](0) }), refused: "greater than or equal to 1"},
		{name: "keep no failed one", obj: retention(func(r *cachev1.BackupRetention) { r.KeepFailed = ptr.To[int32](0) })},
		{name: "keep 101 failed ones", obj: retention(func(r *cachev1.BackupRetention) { r.KeepFailed = ptr.To[int32](101) }), refused: "less than or equal to 100"},
		{name: "keep a week", obj: keepWithin("168h")},
		{name: "keep 366 days", obj: keepWithin("8784h")},
		{name: "keep 367 days", obj: keepWithin("8808h"), refused: keepWithinRange},
		{name: "keep 30s", obj: keepWithin("30s"), refused: keepWithinRange},

		{name: "a volume", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) {
			w.Spec.Destination = cachev1.BackupDestination{PersistentVolumeClaim: &cachev1.PVCDestination{ClaimName: "backups"}}
		})},
		{name: "no destination", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Spec.Destination = cachev1.BackupDestination{} }), refused: oneOfDest},
		{name: "an http endpoint", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) {
			w.Spec.Destination.S3.Endpoint = "http://minio:9000"
		}), refused: httpsOnly},
		{name: "a cluster name of 53 characters", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Spec.ClusterName = strings.Repeat("c", 53) }), refused: tooLong + " 52"},

		{name: "a name of 50 characters", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Name = strings.Repeat("n", 50) })},
		{name: "a name of 51 characters", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Name = strings.Repeat("n", 51) }), refused: "the name must have at most 50 characters"},
		{name: "a name with a dot", obj: backupSchedule(func(w *builders.RedisClusterBackupScheduleWrapper) { w.Name = "nightly.1" }), refused: "the name must consist of lower-case letters"},
	})
}

// A schedule's longest name gives backup names a RedisClusterBackup
// accepts.
func TestRedisClusterBackupScheduleNameFitsItsBackups(t *testing.T) {
	name := strings.Repeat("n", cachev1.MaxBackupScheduleNameLength)
	expectBounds(t, []bound{{name: "the longest backup name", obj: builders.RedisClusterBackup("", name+"-202612312359", "cache").Obj()}})
}
