package redisclusterbackupschedule_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	sched "github.com/multi-operator/multi-operator/controllers/redisclusterbackupschedule"
	"github.com/multi-operator/multi-operator/pkg/backupschedule"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

var tick = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

func TestBackupName(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, schedule string
		tick           time.Time
		want           string
	}{
		{name: "UTC to the minute", schedule: "nightly", tick: tick.Add(42 * time.Second), want: "nightly-202611290300"},
		{name: "a zone's tick is named in UTC", schedule: "nightly", tick: time.Date(2026, 11, 29, 2, 30, 0, 0, berlin), want: "nightly-202611290130"},
		{name: "the longest schedule name gives 63 characters", schedule: strings.Repeat("s", cachev1.MaxBackupScheduleNameLength), tick: tick,
			want: strings.Repeat("s", cachev1.MaxBackupScheduleNameLength) + "-202611290300"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sched.BackupName(tc.schedule, tc.tick)
			if got != tc.want || len(got) > 63 {
				t.Fatalf("BackupName = %q (%d characters), want %q", got, len(got), tc.want)
			}
		})
	}
}

func TestDesiredBackup(t *testing.T) {
	g := NewWithT(t)
	s := builders.RedisClusterBackupSchedule("team", "nightly", "cache").Obj()
	b := sched.DesiredBackup(s, tick)
	g.Expect(b.Name).To(Equal("nightly-202611290300"))
	g.Expect(b.Namespace).To(Equal("team"))
	g.Expect(b.Labels).To(Equal(map[string]string{cachev1.LabelBackupSchedule: "nightly", ownership.LabelManagedBy: ownership.ManagedBy}))
	g.Expect(b.Annotations).To(HaveKeyWithValue(cachev1.AnnotationScheduledTime, "2026-11-29T03:00:00Z"))
	g.Expect(b.OwnerReferences).To(BeEmpty(), "a backup outlives its schedule")
	g.Expect(b.Spec.ClusterName).To(Equal("cache"))
	g.Expect(b.Spec.Destination).To(Equal(s.Spec.Destination))
	b.Spec.Destination.S3.Bucket = "changed"
	g.Expect(s.Spec.Destination.S3.Bucket).To(Equal("backups"), "the spec is copied, not shared")
}

func TestRetentionOf(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retention *cachev1.BackupRetention
		want      backupschedule.Retention
	}{
		{name: "none: every complete one, the newest failed one", want: backupschedule.Retention{KeepFailed: 1}},
		{name: "keep last", retention: &cachev1.BackupRetention{KeepLast: ptr.To[int32](7)}, want: backupschedule.Retention{KeepLast: 7, KeepFailed: 1}},
		{name: "every rule", retention: &cachev1.BackupRetention{KeepLast: ptr.To[int32](3), KeepWithin: &metav1.Duration{Duration: 72 * time.Hour}, KeepFailed: ptr.To[int32](0)},
			want: backupschedule.Retention{KeepLast: 3, KeepWithin: 72 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := builders.RedisClusterBackupSchedule("ns", "s", "c").Obj()
			s.Spec.Retention = tc.retention
			if got := sched.RetentionOf(&s.Spec); got != tc.want {
				t.Fatalf("RetentionOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// backupAt is a backup of the schedule made for at, in phase.
func backupAt(at time.Time, phase cachev1.BackupPhase) cachev1.RedisClusterBackup {
	b := sched.DesiredBackup(builders.RedisClusterBackupSchedule("ns", "s", "c").Obj(), at)
	b.CreationTimestamp = metav1.Time{Time: at.Add(time.Second)}
	b.Status.Phase = phase
	if phase == cachev1.BackupComplete {
		b.Status.CompletionTime = &metav1.Time{Time: at.Add(10 * time.Minute)}
	}
	return *b
}

func TestHistoryActiveAndLastTimes(t *testing.T) {
	g := NewWithT(t)
	deleting := backupAt(tick.Add(-72*time.Hour), cachev1.BackupComplete)
	deleting.DeletionTimestamp = &metav1.Time{Time: tick}
	byHand := backupAt(tick.Add(-96*time.Hour), cachev1.BackupFailed)
	byHand.Annotations = nil // a user's backup, labelled by hand
	backups := []cachev1.RedisClusterBackup{
		backupAt(tick.Add(-48*time.Hour), cachev1.BackupComplete),
		backupAt(tick.Add(-24*time.Hour), cachev1.BackupFailed),
		backupAt(tick, cachev1.BackupRunning),
		backupAt(tick.Add(time.Hour), ""),
		deleting,
		byHand,
	}
	g.Expect(sched.History(backups)).To(Equal([]backupschedule.Backup{
		{Name: "s-202611270300", Scheduled: tick.Add(-48 * time.Hour), Finished: true, Succeeded: true},
		{Name: "s-202611280300", Scheduled: tick.Add(-24 * time.Hour), Finished: true},
		{Name: "s-202611290300", Scheduled: tick},
		{Name: "s-202611290400", Scheduled: tick.Add(time.Hour)},
		{Name: "s-202611250300", Scheduled: tick.Add(-96*time.Hour + time.Second), Finished: true},
	}), "without the backup being deleted; one without the annotation by its creation")
	g.Expect(sched.Active(backups)).To(Equal([]string{"s-202611290300", "s-202611290400"}), "a backup without a phase yet is active")

	status := &cachev1.RedisClusterBackupScheduleStatus{LastScheduleTime: &metav1.Time{Time: tick.Add(-24 * time.Hour)}}
	now := tick.Add(2 * time.Hour)
	g.Expect(sched.LastHandled(status, backups, now)).To(Equal(tick.Add(time.Hour)), "a backup's tick beats a status write that was lost")
	g.Expect(sched.LastHandled(status, backups[:2], now)).To(Equal(tick.Add(-24*time.Hour)), "the status's tick beats older backups")
	g.Expect(sched.LastHandled(&cachev1.RedisClusterBackupScheduleStatus{}, []cachev1.RedisClusterBackup{byHand}, now)).To(BeZero(), "a backup labelled by hand says nothing of the ticks")
	g.Expect(sched.LastHandled(status, backups, tick.Add(30*time.Minute))).To(Equal(tick), "a tick after now is no tick of the schedule's")

	g.Expect(sched.LastSuccess(nil, backups).Time).To(Equal(tick.Add(-48*time.Hour+10*time.Minute)), "the latest completion")
	later := &metav1.Time{Time: tick}
	g.Expect(sched.LastSuccess(later, backups[:2]).Time).To(Equal(tick), "a success whose backup a user deleted")
	g.Expect(sched.LastSuccess(nil, backups[1:3])).To(BeNil())
}

func TestActiveIsBounded(t *testing.T) {
	var backups []cachev1.RedisClusterBackup
	for i := range cachev1.MaxScheduleActive + 5 {
		backups = append(backups, backupAt(tick.Add(time.Duration(i)*time.Minute), cachev1.BackupRunning))
	}
	if got := sched.Active(backups); len(got) != cachev1.MaxScheduleActive {
		t.Fatalf("Active has %d names, want %d", len(got), cachev1.MaxScheduleActive)
	}
}

func TestDecide(t *testing.T) {
	now := tick.Add(30 * time.Second)
	spec := func(change func(*cachev1.RedisClusterBackupScheduleSpec)) *cachev1.RedisClusterBackupScheduleSpec {
		s := builders.RedisClusterBackupSchedule("ns", "s", "c").Obj()
		change(&s.Spec)
		return &s.Spec
	}
	plain := spec(func(*cachev1.RedisClusterBackupScheduleSpec) {})
	deadline := spec(func(s *cachev1.RedisClusterBackupScheduleSpec) { s.StartingDeadlineSeconds = ptr.To[int64](60) })
	suspended := spec(func(s *cachev1.RedisClusterBackupScheduleSpec) { s.Suspend = true })
	for _, tc := range []struct {
		name   string
		spec   *cachev1.RedisClusterBackupScheduleSpec
		due    time.Time
		active int
		stuck  int
		want   sched.Action
	}{
		{name: "nothing due", spec: plain, want: sched.Wait},
		{name: "due", spec: plain, due: tick, want: sched.Create},
		{name: "due while one runs", spec: plain, due: tick, active: 1, want: sched.SkipActive},
		{name: "due while the one before never started", spec: plain, due: tick, active: 1, stuck: 1, want: sched.Supersede},
		{name: "due while one runs and another never started", spec: plain, due: tick, active: 2, stuck: 1, want: sched.SkipActive},
		{name: "past the deadline while the one before never started", spec: deadline, due: tick.Add(-time.Minute), active: 1, stuck: 1, want: sched.SkipMissed},
		{name: "suspended while the one before never started", spec: suspended, due: tick, active: 1, stuck: 1, want: sched.Suspended},
		{name: "due hours late without a deadline", spec: plain, due: tick.Add(-5 * time.Hour), want: sched.Create},
		{name: "due within the deadline", spec: deadline, due: tick, want: sched.Create},
		{name: "due past the deadline", spec: deadline, due: tick.Add(-time.Minute), want: sched.SkipMissed},
		{name: "past the deadline while one runs", spec: deadline, due: tick.Add(-time.Minute), active: 1, want: sched.SkipMissed},
		{name: "suspended", spec: suspended, due: tick, want: sched.Suspended},
		{name: "suspended, nothing due", spec: suspended, want: sched.Wait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sched.Decide(tc.spec, tc.due, now, tc.active, tc.stuck); got != tc.want {
				t.Fatalf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}

// Only a backup of an earlier tick that its controller looked at and
// left without a Job is stuck: not one that runs or may have run, one its
// controller has not seen yet, one of the due tick, or one that finished
// or is being deleted.
func TestStuck(t *testing.T) {
	due := tick.Add(time.Hour)
	waiting := func(b cachev1.RedisClusterBackup, reason string) cachev1.RedisClusterBackup {
		conditions.MarkFalse(&b, conditions.Ready, reason, "waits")
		return b
	}
	for _, tc := range []struct {
		name   string
		backup cachev1.RedisClusterBackup
		stuck  bool
	}{
		{name: "waiting for its cluster since the tick before", backup: waiting(backupAt(tick, cachev1.BackupPending), cachev1.ReasonClusterNotFound), stuck: true},
		{name: "its Job's name taken", backup: waiting(backupAt(tick, cachev1.BackupPending), conditions.ReasonResourceConflict), stuck: true},
		{name: "labelled by hand, waiting since before the tick", backup: func() cachev1.RedisClusterBackup {
			b := waiting(backupAt(tick, cachev1.BackupPending), cachev1.ReasonSecretNotFound)
			b.Annotations = nil
			return b
		}(), stuck: true},
		{name: "not looked at by its controller yet", backup: backupAt(tick, "")},
		{name: "made for the due tick", backup: waiting(backupAt(due, cachev1.BackupPending), cachev1.ReasonClusterNotFound)},
		{name: "its Job created, whatever its status says", backup: func() cachev1.RedisClusterBackup {
			b := waiting(backupAt(tick, cachev1.BackupPending), cachev1.ReasonClusterNotFound)
			metav1.SetMetaDataAnnotation(&b.ObjectMeta, cachev1.AnnotationBackupJobCreated, "true")
			return b
		}()},
		{name: "running", backup: waiting(backupAt(tick, cachev1.BackupRunning), cachev1.ReasonBackupRunning)},
		{name: "its Job pending, from before the annotation", backup: waiting(backupAt(tick, cachev1.BackupPending), cachev1.ReasonBackupPending)},
		{name: "failed", backup: waiting(backupAt(tick, cachev1.BackupFailed), cachev1.ReasonClusterNotFound)},
		{name: "being deleted", backup: func() cachev1.RedisClusterBackup {
			b := waiting(backupAt(tick, cachev1.BackupPending), cachev1.ReasonClusterNotFound)
			b.DeletionTimestamp = &metav1.Time{Time: due}
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sched.Stuck([]cachev1.RedisClusterBackup{tc.backup}, due)
			if (len(got) == 1) != tc.stuck {
				t.Fatalf("Stuck = %d backups, want stuck %v", len(got), tc.stuck)
			}
		})
	}
}

func TestRequeueAfter(t *testing.T) {
	now := tick.Add(30 * time.Second)
	next := tick.Add(24 * time.Hour)
	expiry := tick.Add(2 * time.Hour)
	for _, tc := range []struct {
		name         string
		suspended    bool
		next, expiry time.Time
		want         time.Duration
	}{
		{name: "exactly at the next tick", next: next, expiry: expiry, want: 24*time.Hour - 30*time.Second},
		{name: "suspended: when keepWithin lets one go", suspended: true, next: next, expiry: expiry, want: 2*time.Hour - 30*time.Second},
		{name: "suspended without keepWithin: never", suspended: true, next: next},
		{name: "a schedule that fires no more", expiry: expiry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sched.RequeueAfter(tc.suspended, tc.next, tc.expiry, now); got != tc.want {
				t.Fatalf("RequeueAfter = %v, want %v", got, tc.want)
			}
		})
	}
}
