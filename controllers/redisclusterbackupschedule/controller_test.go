package redisclusterbackupschedule_test

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	sched "github.com/multi-operator/multi-operator/controllers/redisclusterbackupschedule"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, cachev1.AddToScheme)) }

var bg = context.Background()

// driven is a schedule reconciled by hand at the times of a fake clock.
type driven struct {
	t   *testing.T
	g   *WithT
	c   client.Client
	ns  string
	rec events.Recorder
	clk *clocktesting.FakeClock
	s   *cachev1.RedisClusterBackupSchedule
	// first is the schedule's first tick after its creation.
	first time.Time
}

// hourly creates an hourly schedule (at minute 0), changed by change.
func hourly(t *testing.T, change func(*builders.RedisClusterBackupScheduleWrapper)) *driven {
	env := testenv.Get(t)
	d := &driven{t: t, g: NewWithT(t), c: env.Client, ns: env.Namespace(t), rec: testenv.EventRecorder(t, "redisclusterbackupschedule-test")}
	w := builders.RedisClusterBackupSchedule(d.ns, "nightly", "cache").Schedule("0 * * * *", "")
	change(w)
	d.s = w.Obj()
	d.g.Expect(d.c.Create(bg, d.s)).To(Succeed())
	// Ticks count from the schedule's creation, which is the API server's
	// real time.
	d.first = d.s.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	d.clk = clocktesting.NewFakeClock(d.s.CreationTimestamp.Time)
	return d
}

// reconcileAt runs one reconcile, by a new reconciler as after a restart,
// at the given time, and returns its requeue.
func (d *driven) reconcileAt(at time.Time) time.Duration {
	d.t.Helper()
	d.clk.SetTime(at)
	r := sched.NewWithClient(d.c, d.rec, reconciler.Options{Clock: d.clk})
	res, err := r.Reconcile(bg, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(d.s)})
	d.g.Expect(err).NotTo(HaveOccurred())
	d.g.Expect(d.c.Get(bg, client.ObjectKeyFromObject(d.s), d.s)).To(Succeed())
	return res.RequeueAfter
}

func (d *driven) backups() []cachev1.RedisClusterBackup {
	d.t.Helper()
	list := &cachev1.RedisClusterBackupList{}
	d.g.Expect(d.c.List(bg, list, client.InNamespace(d.ns))).To(Succeed())
	return list.Items
}

func names(backups []cachev1.RedisClusterBackup) []string {
	var out []string
	for _, b := range backups {
		out = append(out, b.Name)
	}
	return out
}

// finish sets a backup's phase, as its controller would.
func (d *driven) finish(name string, phase cachev1.BackupPhase, at time.Time) {
	d.t.Helper()
	b := &cachev1.RedisClusterBackup{}
	d.g.Expect(d.c.Get(bg, client.ObjectKey{Namespace: d.ns, Name: name}, b)).To(Succeed())
	b.Status.Phase = phase
	if phase == cachev1.BackupComplete || phase == cachev1.BackupFailed {
		b.Status.CompletionTime = &metav1.Time{Time: at}
	}
	d.g.Expect(d.c.Status().Update(bg, b)).To(Succeed())
}

func (d *driven) ready() *metav1.Condition { return conditions.Get(d.s, conditions.Ready) }

// A tick creates one backup, named for it in UTC, labelled with the
// schedule and with the schedule's spec; a restart creates no other, even
// when the status write was lost; the requeue is exactly the next tick; a
// tick while the backup runs is skipped, not made up; the next tick after
// it finished creates the next backup.
func TestTicksCreateOneBackupEachAndRequeueAtTheNextTick(t *testing.T) {
	d := hourly(t, func(*builders.RedisClusterBackupScheduleWrapper) {})
	g := d.g

	g.Expect(d.reconcileAt(d.first.Add(-30*time.Second))).To(Equal(30*time.Second), "woken exactly at the first tick")
	g.Expect(d.backups()).To(BeEmpty())
	g.Expect(d.s.Status.NextScheduleTime.Time.Equal(d.first)).To(BeTrue(), "next %v", d.s.Status.NextScheduleTime)
	g.Expect(d.ready().Reason).To(Equal(cachev1.ReasonScheduled))

	g.Expect(d.reconcileAt(d.first.Add(5*time.Second))).To(Equal(time.Hour-5*time.Second), "woken exactly at the next tick")
	backups := d.backups()
	g.Expect(backups).To(HaveLen(1))
	b := backups[0]
	g.Expect(b.Name).To(Equal("nightly-" + d.first.UTC().Format("200601021504")))
	g.Expect(b.Labels).To(HaveKeyWithValue(cachev1.LabelBackupSchedule, "nightly"))
	g.Expect(b.OwnerReferences).To(BeEmpty())
	g.Expect(b.Spec.ClusterName).To(Equal(d.s.Spec.ClusterName))
	g.Expect(b.Spec.Destination).To(Equal(d.s.Spec.Destination))
	g.Expect(d.s.Status.LastScheduleTime.Time.Equal(d.first)).To(BeTrue())
	g.Expect(d.s.Status.Active).To(Equal([]string{b.Name}))
	g.Expect(testenv.Events(g, d.c, d.ns, "nightly")).To(ContainElement(ContainSubstring("Normal BackupCreated: Created RedisClusterBackup " + b.Name)))

	// A restart: a new reconciler at a later instant of the same hour.
	d.reconcileAt(d.first.Add(time.Minute))
	g.Expect(names(d.backups())).To(Equal([]string{b.Name}), "no duplicate after a restart")
	// A crash after the create lost the status write: the backup's
	// annotation still says the tick was served.
	d.s.Status.LastScheduleTime = nil
	g.Expect(d.c.Status().Update(bg, d.s)).To(Succeed())
	d.reconcileAt(d.first.Add(2 * time.Minute))
	g.Expect(names(d.backups())).To(Equal([]string{b.Name}), "no duplicate after a lost status write")

	// The backup still runs at the next tick: that tick is skipped.
	d.finish(b.Name, cachev1.BackupRunning, time.Time{})
	second := d.first.Add(time.Hour)
	g.Expect(d.reconcileAt(second.Add(5 * time.Second))).To(Equal(time.Hour - 5*time.Second))
	g.Expect(names(d.backups())).To(Equal([]string{b.Name}), "no second backup beside a running one")
	g.Expect(d.s.Status.LastScheduleTime.Time.Equal(second)).To(BeTrue(), "the skipped tick is handled")
	g.Expect(testenv.Events(g, d.c, d.ns, "nightly")).To(ContainElement(ContainSubstring("Normal BackupSkipped: Skipped the tick of " + second.UTC().Format(time.RFC3339))))

	// It completes; the skipped tick is not made up, the next one runs.
	completed := second.Add(20 * time.Minute)
	d.finish(b.Name, cachev1.BackupComplete, completed)
	d.reconcileAt(completed.Add(time.Second))
	g.Expect(d.backups()).To(HaveLen(1), "the skipped tick is not made up")
	g.Expect(d.s.Status.LastSuccessfulTime.Time.Equal(completed)).To(BeTrue())
	g.Expect(d.s.Status.Active).To(BeEmpty())
	third := second.Add(time.Hour)
	d.reconcileAt(third.Add(time.Second))
	g.Expect(names(d.backups())).To(ConsistOf(b.Name, "nightly-"+third.UTC().Format("200601021504")))
}

// A backup of the tick's name that is not the schedule's is left alone:
// the tick is skipped with a Warning.
func TestATakenNameSkipsTheTick(t *testing.T) {
	d := hourly(t, func(*builders.RedisClusterBackupScheduleWrapper) {})
	name := "nightly-" + d.first.UTC().Format("200601021504")
	d.g.Expect(d.c.Create(bg, builders.RedisClusterBackup(d.ns, name, "other").Obj())).To(Succeed())
	d.reconcileAt(d.first.Add(time.Second))
	b := &cachev1.RedisClusterBackup{}
	d.g.Expect(d.c.Get(bg, client.ObjectKey{Namespace: d.ns, Name: name}, b)).To(Succeed())
	d.g.Expect(b.Spec.ClusterName).To(Equal("other"))
	d.g.Expect(b.Labels).NotTo(HaveKey(cachev1.LabelBackupSchedule))
	d.g.Expect(testenv.Warnings(d.g, d.c, d.ns, "nightly", cachev1.ReasonBackupNameTaken)).To(ConsistOf(ContainSubstring("exists and is not labelled with a schedule")))
}

// A tick found later than startingDeadlineSeconds is skipped with a
// Warning; without a deadline the latest missed tick still runs.
func TestStartingDeadlineSkipsLateTicks(t *testing.T) {
	d := hourly(t, func(w *builders.RedisClusterBackupScheduleWrapper) {
		w.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
	})
	d.reconcileAt(d.first.Add(3*time.Hour + 2*time.Minute))
	d.g.Expect(d.backups()).To(BeEmpty())
	d.g.Expect(testenv.Warnings(d.g, d.c, d.ns, "nightly", cachev1.ReasonBackupMissed)).To(HaveLen(1))
	d.reconcileAt(d.first.Add(3*time.Hour + 3*time.Minute))
	d.g.Expect(testenv.Warnings(d.g, d.c, d.ns, "nightly", cachev1.ReasonBackupMissed)).To(HaveLen(1), "once per tick")
}

// pastBackup creates a backup of the schedule made hoursAgo hours before
// at, finished in phase.
func (d *driven) pastBackup(at time.Time, hoursAgo int, phase cachev1.BackupPhase) string {
	d.t.Helper()
	tick := at.Add(-time.Duration(hoursAgo) * time.Hour)
	b := sched.DesiredBackup(d.s, tick)
	d.g.Expect(d.c.Create(bg, b)).To(Succeed())
	d.finish(b.Name, phase, tick.Add(10*time.Minute))
	return b.Name
}

// Retention deletes the oldest complete backups beyond keepLast and the
// failed ones beyond keepFailed, keeps the newest complete one and never
// touches one that runs or one of another schedule.
func TestRetentionDeletesTheOldestBeyondKeepLast(t *testing.T) {
	d := hourly(t, func(w *builders.RedisClusterBackupScheduleWrapper) {
		w.Retention(func(r *cachev1.BackupRetention) { r.KeepLast, r.KeepFailed = ptr.To[int32](2), ptr.To[int32](0) })
	})
	g := d.g
	now := d.first.Add(-time.Minute) // no tick due
	oldest := d.pastBackup(now, 5, cachev1.BackupComplete)
	older := d.pastBackup(now, 4, cachev1.BackupComplete)
	failed := d.pastBackup(now, 3, cachev1.BackupFailed)
	kept1 := d.pastBackup(now, 2, cachev1.BackupComplete)
	kept2 := d.pastBackup(now, 1, cachev1.BackupComplete)
	running := d.pastBackup(now, 6, cachev1.BackupRunning)
	other := builders.RedisClusterBackup(d.ns, "by-hand", "cache").Obj()
	g.Expect(d.c.Create(bg, other)).To(Succeed())

	g.Expect(d.reconcileAt(now)).To(Equal(time.Minute))
	g.Expect(names(d.backups())).To(ConsistOf(kept1, kept2, running, "by-hand"))
	evs := testenv.Events(g, d.c, d.ns, "nightly")
	for _, gone := range []string{oldest, older, failed} {
		g.Expect(evs).To(ContainElement(ContainSubstring("Normal BackupDeleted: Deleted RedisClusterBackup " + gone)))
	}
}

// Suspended, a schedule creates nothing at its ticks but still applies
// its retention, and looks again only when keepWithin lets one go.
func TestSuspendStopsCreatingButKeepsRetention(t *testing.T) {
	d := hourly(t, func(w *builders.RedisClusterBackupScheduleWrapper) {
		w.Spec.Suspend = true
		w.Retention(func(r *cachev1.BackupRetention) { r.KeepLast = ptr.To[int32](1) })
	})
	g := d.g
	now := d.first.Add(5 * time.Second)
	old := d.pastBackup(now, 3, cachev1.BackupComplete)
	newest := d.pastBackup(now, 2, cachev1.BackupComplete)

	g.Expect(d.reconcileAt(now)).To(BeZero(), "no tick acts, and no keepWithin")
	g.Expect(names(d.backups())).To(Equal([]string{newest}), "%s deleted", old)
	g.Expect(d.s.Status.NextScheduleTime).To(BeNil())
	g.Expect(d.ready().Reason).To(Equal(cachev1.ReasonScheduleSuspended))

	// Resumed: the tick missed while suspended starts one backup.
	d.s.Spec.Suspend = false
	g.Expect(d.c.Update(bg, d.s)).To(Succeed())
	g.Expect(d.reconcileAt(now.Add(time.Minute))).To(Equal(time.Hour - time.Minute - 5*time.Second))
	g.Expect(names(d.backups())).To(ConsistOf(newest, "nightly-"+d.first.UTC().Format("200601021504")))
}

// A schedule that admission let through but cron cannot read is Ready
// False with a Warning, and creates nothing.
func TestUnreadableScheduleIsReported(t *testing.T) {
	d := hourly(t, func(w *builders.RedisClusterBackupScheduleWrapper) { w.Spec.Schedule = "61 * * * *" })
	g := d.g
	g.Expect(d.reconcileAt(d.first.Add(time.Hour))).To(BeZero(), "only a new spec helps")
	g.Expect(d.backups()).To(BeEmpty())
	ready := d.ready()
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(Equal(cachev1.ReasonInvalidSchedule))
	g.Expect(testenv.Warnings(g, d.c, d.ns, "nightly", cachev1.ReasonInvalidSchedule)).To(HaveLen(1))
}

// onlyBackup waits until ns holds one backup, not named gone, and
// returns it.
func onlyBackup(g *WithT, c client.Client, ns, gone string) cachev1.RedisClusterBackup {
	var b cachev1.RedisClusterBackup
	g.Eventually(func(g Gomega) {
		list := &cachev1.RedisClusterBackupList{}
		g.Expect(c.List(bg, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		b = list.Items[0]
		g.Expect(b.Name).NotTo(Equal(gone))
	}).Should(Succeed())
	return b
}

// Run by the manager under its generated role alone, the schedule reacts
// to its backup finishing (the watch on labelled backups): its status and
// metrics show the success; then it writes nothing until something
// changes.
func TestBackupCompletionUpdatesStatusAndMetrics(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now().Add(90 * time.Minute))
	cfg, writes := testenv.CountWrites(testenv.GeneratedRoleConfig(t, sched.Name))
	g, c, ns := testenv.StartController(t, sched.Descriptor(), reconciler.Options{Clock: clk}, testenv.ManagerOptions{Config: cfg})
	s := builders.RedisClusterBackupSchedule(ns, "hourly", "cache").Schedule("0 * * * *", "").Obj()
	g.Expect(c.Create(bg, s)).To(Succeed())

	b := onlyBackup(g, c, ns, "")
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.Active).To(Equal([]string{b.Name}))
	}).Should(Succeed())
	series := testenv.SeriesOf(g, "rediscluster_backup_schedule_", ns, "hourly")
	g.Expect(series).To(Equal(map[string]float64{
		"rediscluster_backup_schedule_period_seconds{}":            3600,
		"rediscluster_backup_schedule_created_timestamp_seconds{}": float64(s.CreationTimestamp.Unix()),
	}), "no success yet")

	completed := clk.Now().Truncate(time.Second)
	b.Status.Phase, b.Status.CompletionTime = cachev1.BackupComplete, &metav1.Time{Time: completed}
	g.Expect(c.Status().Update(bg, &b)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.Active).To(BeEmpty())
		g.Expect(s.Status.LastSuccessfulTime).NotTo(BeNil())
	}).Should(Succeed())
	g.Expect(testenv.SeriesOf(g, "rediscluster_backup_schedule_", ns, "hourly")).To(Equal(map[string]float64{
		"rediscluster_backup_schedule_period_seconds{}":                 3600,
		"rediscluster_backup_schedule_last_success_timestamp_seconds{}": float64(completed.Unix()),
		"rediscluster_backup_schedule_created_timestamp_seconds{}":      float64(s.CreationTimestamp.Unix()),
	}))

	// A failed backup of the schedule, which retention keeps
	// (keepFailed 1), changes nothing the schedule reports.
	testenv.ExpectSteadyState(g, writes, sched.Name, ns, func() {
		failed := sched.DesiredBackup(s, completed.Add(-48*time.Hour))
		g.Expect(c.Create(bg, failed)).To(Succeed())
		failed.Status.Phase = cachev1.BackupFailed
		g.Expect(c.Status().Update(bg, failed)).To(Succeed())
	})

	g.Expect(c.Delete(bg, s)).To(Succeed())
	g.Eventually(func() map[string]float64 { return testenv.SeriesOf(g, "rediscluster_backup_schedule_", ns, "hourly") }).Should(BeEmpty(), "gone with the schedule")
	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(&b), &cachev1.RedisClusterBackup{})).To(Succeed())
	}).Should(Succeed(), "the backup outlives its schedule")
}

// Run by the manager under its generated role alone, a tick that finds
// the schedule's backup of the tick before still waiting without a Job
// (its cluster is gone) deletes it, with a Warning event, and creates its
// own; the status and a metric say when. A backup whose Job was created
// still holds the next tick back, whatever its status says: one backup
// runs at a time.
func TestATickSupersedesABackupThatNeverStarted(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now().Add(90 * time.Minute))
	cfg := testenv.GeneratedRoleConfig(t, sched.Name)
	g, c, ns := testenv.StartController(t, sched.Descriptor(), reconciler.Options{Clock: clk}, testenv.ManagerOptions{Config: cfg})
	s := builders.RedisClusterBackupSchedule(ns, "hourly", "gone").Schedule("0 * * * *", "").Obj()
	g.Expect(c.Create(bg, s)).To(Succeed())
	only := func(gone string) cachev1.RedisClusterBackup { return onlyBackup(g, c, ns, gone) }
	// waits sets b's status as its controller does while it waits for its
	// cluster, which wakes the schedule (a phase change).
	waits := func(b *cachev1.RedisClusterBackup) {
		b.Status.Phase = cachev1.BackupPending
		conditions.MarkFalse(b, conditions.Ready, cachev1.ReasonClusterNotFound, "RedisCluster gone does not exist in namespace "+ns)
		g.Expect(c.Status().Update(bg, b)).To(Succeed())
	}
	first := only("")

	// The next tick comes while the first backup waits.
	clk.Step(time.Hour)
	waits(&first)
	second := only(first.Name)
	g.Eventually(func(g Gomega) {
		g.Expect(testenv.Warnings(g, c, ns, s.Name, cachev1.ReasonBackupSuperseded)).To(ConsistOf(
			And(ContainSubstring("Deleted RedisClusterBackup "+first.Name), ContainSubstring("ClusterNotFound"))))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.Active).To(Equal([]string{second.Name}))
		g.Expect(s.Status.LastSupersededTime).NotTo(BeNil())
	}).Should(Succeed())
	g.Expect(testenv.SeriesOf(g, "rediscluster_backup_schedule_", ns, s.Name)).To(HaveKeyWithValue(
		"rediscluster_backup_schedule_last_superseded_timestamp_seconds{}", float64(s.Status.LastSupersededTime.Unix())))

	// The second backup's controller created its Job (the annotation), and
	// its status writes since were lost: the tick after is skipped.
	g.Expect(c.Patch(bg, &second, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+cachev1.AnnotationBackupJobCreated+`":"true"}}}`)))).To(Succeed())
	clk.Step(time.Hour)
	waits(&second)
	g.Eventually(func(g Gomega) {
		g.Expect(testenv.Events(g, c, ns, s.Name)).To(ContainElement(ContainSubstring("Normal BackupSkipped: Skipped the tick of")))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) {
		list := &cachev1.RedisClusterBackupList{}
		g.Expect(c.List(bg, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(names(list.Items)).To(Equal([]string{second.Name}))
	}, 2*time.Second).Should(Succeed())
	g.Expect(testenv.Warnings(g, c, ns, s.Name, cachev1.ReasonBackupSuperseded)).To(HaveLen(1))
}
