package redisclusterbackup_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/controllers/redisclusterbackup"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, cachev1.AddToScheme)) }

const (
	testImage        = "registry.example/multi-operator:test"
	backupPassword   = "backup-user-password-0123456789abcdefghij"
	accessKeyID      = "AKIATESTACCESSKEY"
	secretAccessKey  = "test-secret-access-key/with+signs"
	storeCA          = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	credentialsName  = "s3-credentials"
	storeCAConfigMap = "store-ca"
)

var options = reconciler.Options{Image: testImage}

// tenant is a namespace with a RedisCluster as its controller leaves it
// (the generated <name>-backup) and the store's labelled Secret and CA.
type tenant struct {
	g  *WithT
	c  client.Client
	ns string
	rc *cachev1.RedisCluster
}

// soon bounds how long a backup may take to notice a change it watches:
// far below the 30 s a poll would take.
const soon = 5 * time.Second

func start(t *testing.T, opts testenv.ManagerOptions) *tenant {
	g, c, ns := testenv.StartController(t, redisclusterbackup.Descriptor(), options, opts)
	return &tenant{g: g, c: c, ns: ns}
}

// startWithCluster starts the controller with its generated role alone,
// in a namespace with the cluster cache and the store's labelled Secret
// and CA.
func startWithCluster(t *testing.T) *tenant {
	tn := start(t, testenv.ManagerOptions{Config: testenv.GeneratedRoleConfig(t, redisclusterbackup.Name)})
	tn.cluster()
	tn.store(true)
	return tn
}

func labelled(name, ns string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{ownership.LabelWatch: ownership.WatchValue}}
}

// cluster creates the RedisCluster cache and the Secret its controller
// generates for its backup user.
func (tn *tenant) cluster() {
	ctx := context.Background()
	tn.rc = builders.RedisCluster(tn.ns, "cache").Obj()
	tn.g.Expect(tn.c.Create(ctx, tn.rc)).To(Succeed())
	secret := &corev1.Secret{
		ObjectMeta: labelled(rediscluster.BackupSecretName(tn.rc), tn.ns),
		Data:       map[string][]byte{rediscluster.PasswordKey: []byte(backupPassword)},
	}
	secret.OwnerReferences = []metav1.OwnerReference{{APIVersion: cachev1.GroupVersion.String(), Kind: "RedisCluster",
		Name: tn.rc.Name, UID: tn.rc.UID, Controller: ptr.To(true)}}
	tn.g.Expect(tn.c.Create(ctx, secret)).To(Succeed())
}

// store creates the store's credentials Secret, labelled or not, and its
// CA's ConfigMap.
func (tn *tenant) store(label bool) {
	ctx := context.Background()
	meta := labelled(credentialsName, tn.ns)
	if !label {
		meta.Labels = nil
	}
	tn.g.Expect(tn.c.Create(ctx, &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{
		"accessKeyID": []byte(accessKeyID), "secretAccessKey": []byte(secretAccessKey)}})).To(Succeed())
	tn.g.Expect(tn.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled(storeCAConfigMap, tn.ns), Data: map[string]string{"ca.crt": storeCA}})).To(Succeed())
}

// backup creates a backup of the tenant's cluster to the store, trusting
// its CA.
func (tn *tenant) backup(name, cluster string) *cachev1.RedisClusterBackup {
	b := builders.RedisClusterBackup(tn.ns, name, cluster).S3(func(s *cachev1.S3Destination) {
		s.Prefix, s.Region = "redis", "eu-west-1"
		s.CABundle = &cachev1.CABundleSource{ConfigMapKeyRef: &cachev1.KeyRef{Name: storeCAConfigMap, Key: "ca.crt"}}
	}).Obj()
	tn.g.Expect(tn.c.Create(context.Background(), b)).To(Succeed())
	return b
}

func (tn *tenant) job(b *cachev1.RedisClusterBackup) *batchv1.Job {
	return tn.jobNamed(redisclusterbackup.JobName(b))
}

// completeBackup creates a backup of the cluster cache and waits until it
// is Complete, after its Job succeeded with a one-shard result.
func (tn *tenant) completeBackup(name string) *cachev1.RedisClusterBackup {
	b := tn.backup(name, "cache")
	job := tn.job(b)
	testenv.TerminatedJobPod(tn.g, tn.c, job, name+"-pod", 0, string(result(1).Encode()))
	testenv.FinishJob(tn.g, tn.c, client.ObjectKeyFromObject(job), true)
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		g.Expect(st.Phase).To(Equal(cachev1.BackupComplete))
	})
	return b
}

// cleanupJob waits for the Job that removes b's files.
func (tn *tenant) cleanupJob(b *cachev1.RedisClusterBackup) *batchv1.Job {
	return tn.jobNamed(redisclusterbackup.CleanupJobName(b))
}

func (tn *tenant) jobNamed(name string) *batchv1.Job {
	job := &batchv1.Job{}
	tn.g.Eventually(func() error {
		return tn.c.Get(context.Background(), client.ObjectKey{Namespace: tn.ns, Name: name}, job)
	}, soon).Should(Succeed())
	return job
}

// expectGone waits until b is deleted.
func (tn *tenant) expectGone(b *cachev1.RedisClusterBackup) {
	tn.g.Eventually(func() bool {
		return apierrors.IsNotFound(tn.c.Get(context.Background(), client.ObjectKeyFromObject(b), &cachev1.RedisClusterBackup{}))
	}, soon).Should(BeTrue(), "backup %s is gone", b.Name)
}

// deleteLeavingFiles deletes b and expects it gone, with a Warning event
// BackupFilesLeft that says each of says.
func (tn *tenant) deleteLeavingFiles(b *cachev1.RedisClusterBackup, says ...string) {
	tn.g.Expect(tn.c.Delete(context.Background(), b)).To(Succeed())
	tn.expectGone(b)
	var all []gomegatypes.GomegaMatcher
	for _, s := range says {
		all = append(all, ContainSubstring(s))
	}
	tn.g.Eventually(func(g Gomega) {
		g.Expect(testenv.Warnings(g, tn.c, tn.ns, b.Name, cachev1.ReasonBackupFilesLeft)).To(ContainElement(And(all...)))
	}).Should(Succeed())
}

// runningJobPod creates a pod of job that runs, as the Job controller and
// the kubelet would leave it.
func runningJobPod(g *WithT, c client.Client, job *batchv1.Job) *corev1.Pod {
	labels := map[string]string{batchv1.JobNameLabel: job.Name, batchv1.ControllerUidLabel: string(job.UID)}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-running", Namespace: job.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	g.Expect(c.Create(context.Background(), pod)).To(Succeed())
	pod.Status.Phase = corev1.PodRunning
	g.Expect(c.Status().Update(context.Background(), pod)).To(Succeed())
	return pod
}

// expectStatus waits until b's status passes check.
func (tn *tenant) expectStatus(b *cachev1.RedisClusterBackup, check func(g Gomega, st cachev1.RedisClusterBackupStatus)) {
	tn.g.Eventually(func(g Gomega) {
		g.Expect(tn.c.Get(context.Background(), client.ObjectKeyFromObject(b), b)).To(Succeed())
		check(g, b.Status)
	}, soon).Should(Succeed())
}

func expectReady(g Gomega, b *cachev1.RedisClusterBackup, status metav1.ConditionStatus, reason string) {
	ready := conditions.Get(b, conditions.Ready)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(status))
	g.Expect(ready.Reason).To(Equal(reason))
}

// expectNoSecretIn fails when a password or key appears in the Job, the
// backup's status or its events.
func (tn *tenant) expectNoSecretIn(objs ...any) {
	for _, obj := range objs {
		raw, err := json.Marshal(obj)
		tn.g.Expect(err).NotTo(HaveOccurred())
		for _, secret := range []string{backupPassword, accessKeyID, secretAccessKey} {
			tn.g.Expect(string(raw)).NotTo(ContainSubstring(secret))
		}
	}
}

// result is a complete run's result over shards shards of even slots.
func result(shards int) backupreport.Result {
	r := backupreport.Result{Complete: true, Shards: shards, Keys: int64(10 * shards), Bytes: int64(100 * shards), Message: "stored"}
	for i := range shards {
		r.Files = append(r.Files, backupreport.File{Name: fmt.Sprintf("shard-%03d.rdb", i),
			Slots: fmt.Sprintf("%d-%d", i*16384/shards, (i+1)*16384/shards-1), Keys: 10, Bytes: 100, SHA256: fmt.Sprintf("%064x", i+1)})
	}
	return r
}

// A backup gets one Job running the manager's image as `manager backup`,
// with every secret a file, and is Complete with each shard's file once
// the Job's pod says every file was stored and verified; then nothing is
// written or read again.
func TestBackupCompletesWithTheJobsResult(t *testing.T) {
	cfg, writes := testenv.CountWrites(testenv.Get(t).Config)
	tn := start(t, testenv.ManagerOptions{Config: cfg})
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	tn.cluster()
	tn.store(true)
	b := tn.backup("nightly", "cache")

	job := tn.job(b)
	g.Expect(metav1.IsControlledBy(job, b)).To(BeTrue())
	g.Expect(job.Labels).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy))
	pod := job.Spec.Template.Spec
	g.Expect(pod.Containers).To(HaveLen(1))
	g.Expect(pod.Containers[0].Image).To(Equal(testImage))
	g.Expect(pod.Containers[0].Args).To(ContainElements("backup", "--path="+ns+"/cache/nightly", "--s3-prefix=redis", "--s3-credentials-dir=/var/run/secrets/s3-credentials"))
	tn.expectNoSecretIn(job)
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		g.Expect(st.Phase).To(Equal(cachev1.BackupPending))
		g.Expect(st.JobName).To(Equal(job.Name))
		g.Expect(st.Location).To(Equal("s3://backups/redis/" + ns + "/cache/nightly/"))
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonBackupPending)
	})

	want := result(2)
	testenv.TerminatedJobPod(g, c, job, "nightly-abcde", 0, string(want.Encode()))
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(job), true)
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		g.Expect(st.Phase).To(Equal(cachev1.BackupComplete))
		g.Expect(st.Totals).To(Equal(&cachev1.BackupTotals{Keys: 20, Bytes: 200, Shards: 2}))
		g.Expect(st.Shards).To(HaveLen(2))
		g.Expect(st.Shards[1]).To(Equal(cachev1.BackupShardStatus{File: "shard-001.rdb", Slots: "8192-16383", Keys: 10, Bytes: 100, SHA256: fmt.Sprintf("%064x", 2)}))
		g.Expect(st.ShardsOmitted).To(BeZero())
		g.Expect(st.StartTime).NotTo(BeNil())
		g.Expect(st.CompletionTime).NotTo(BeNil())
		g.Expect(st.ObservedGeneration).To(Equal(b.Generation))
		expectReady(g, b, metav1.ConditionTrue, cachev1.ReasonBackupComplete)
	})
	g.Expect(strings.Join(testenv.Events(g, c, ns, b.Name), "\n")).To(And(ContainSubstring("Created Job nightly"), ContainSubstring("Backup complete")))
	tn.expectNoSecretIn(b, testenv.EventObjects(g, c, ns, b.Name))

	series := testenv.SeriesOf(g, "rediscluster_backup_", ns, "cache")
	g.Expect(series).To(HaveKeyWithValue("rediscluster_backup_last_size_bytes{}", 200.0))
	g.Expect(series).To(HaveKeyWithValue("rediscluster_backup_last_success_timestamp_seconds{}", float64(b.Status.CompletionTime.Unix())))
	g.Expect(series).To(HaveKey("rediscluster_backup_last_duration_seconds{}"))

	testenv.ExpectSteadyState(g, writes, redisclusterbackup.Name, ns, func() {
		g.Expect(c.Patch(ctx, job, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"test-touch":"1"}}}`)))).To(Succeed())
		g.Expect(c.Patch(ctx, b, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"test-touch":"1"}}}`)))).To(Succeed())
	})

	// Deleting it runs the cleanup Job, `manager backup-delete` of the
	// backup's folder, and the backup goes once that Job succeeded; the
	// cluster's series go with its last backup.
	g.Expect(c.Delete(ctx, b)).To(Succeed())
	cleanup := tn.cleanupJob(b)
	g.Expect(metav1.IsControlledBy(cleanup, b)).To(BeTrue())
	g.Expect(cleanup.Spec.Template.Spec.Containers[0].Args).To(ContainElements("backup-delete", "--path="+ns+"/cache/nightly", "--s3-prefix=redis"))
	tn.expectNoSecretIn(cleanup)
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonBackupDeleting)
	})
	g.Consistently(func() error { return c.Get(ctx, client.ObjectKeyFromObject(b), b) }, time.Second).Should(Succeed(), "the backup stays while its files are removed")
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(cleanup), true)
	tn.expectGone(b)
	g.Expect(strings.Join(testenv.Events(g, c, ns, b.Name), "\n")).To(ContainSubstring("removed the files at s3://backups/redis/" + ns + "/cache/nightly/"))
	g.Eventually(func(g Gomega) {
		g.Expect(testenv.SeriesOf(g, "rediscluster_backup_", ns, "cache")).To(BeEmpty())
	}).Should(Succeed())
}

// A backup deleted while its Job runs stops that Job first, then waits for
// its pods to end, and only then removes its files: nothing writes into
// the folder once it is cleaned. The controller runs with its generated
// role alone.
func TestDeletingARunningBackupStopsItsJobFirst(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	b := tn.backup("running", "cache")
	job := tn.job(b)
	pod := runningJobPod(g, c, job)

	g.Expect(c.Delete(ctx, b)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}))
	}, soon).Should(BeTrue(), "the backup Job is deleted")
	// Its pod still runs (no garbage collector here): no cleanup yet.
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonBackupStopping)
		g.Expect(st.Message).NotTo(BeEmpty())
	})
	g.Consistently(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisclusterbackup.CleanupJobName(b)}, &batchv1.Job{}))
	}, time.Second).Should(BeTrue(), "no cleanup while a pod of the backup runs")

	// The garbage collector's part: the pod goes.
	g.Expect(c.Delete(ctx, pod)).To(Succeed())
	cleanup := tn.cleanupJob(b)
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(cleanup), true)
	tn.expectGone(b)
}

// A backup whose store's credentials Secret is gone cannot be cleaned: it
// goes at once, with a Warning event that says where its files are left;
// a failed cleanup Job, one a quota refuses, or one whose name another
// object holds, says the same. One that never started goes at once
// too, with nothing to clean.
func TestDeletingABackupThatCannotBeCleanedWarns(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()

	// A failed backup whose cleanup Job failed says so, and goes at once
	// when deleted: its cleanup already ran.
	failed := tn.backup("failed-cleanup", "cache")
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(tn.job(failed)), false)
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(tn.cleanupJob(failed)), false)
	tn.expectStatus(failed, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		g.Expect(st.Phase).To(Equal(cachev1.BackupFailed))
		g.Expect(st.Message).To(ContainSubstring("is left there: Job " + redisclusterbackup.CleanupJobName(failed) + " failed"))
	})
	tn.deleteLeavingFiles(failed, "the files at s3://backups/redis/"+ns+"/cache/failed-cleanup/ are left")

	// A complete backup whose cleanup Job's name another object holds.
	taken := tn.completeBackup("taken")
	g.Expect(c.Create(ctx, redisclusterbackup.DesiredCleanupJob(taken, testImage))).To(Succeed())
	tn.deleteLeavingFiles(taken, "is taken by an object the backup does not own")

	// A complete backup whose cleanup Job a quota refuses.
	quotaed := tn.completeBackup("quota")
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-more-jobs"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}}}
	g.Expect(c.Create(ctx, quota)).To(Succeed())
	// The quota controller's part: envtest runs none.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}}
	g.Expect(c.Status().Update(ctx, quota)).To(Succeed())
	tn.deleteLeavingFiles(quotaed, "cannot be created")
	g.Expect(c.Delete(ctx, quota)).To(Succeed())

	// A complete backup whose credentials Secret is gone.
	b := tn.completeBackup("orphan")
	g.Expect(c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: credentialsName}})).To(Succeed())
	tn.deleteLeavingFiles(b, "Secret "+credentialsName, "s3://backups/redis/"+ns+"/cache/orphan/ are left")
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisclusterbackup.CleanupJobName(b)}, &batchv1.Job{}))).To(BeTrue())

	waiting := tn.backup("never-started", "missing-cluster")
	tn.expectStatus(waiting, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, waiting, metav1.ConditionFalse, cachev1.ReasonClusterNotFound)
	})
	g.Expect(waiting.Annotations).NotTo(HaveKey(cachev1.AnnotationBackupJobCreated))
	g.Expect(c.Delete(ctx, waiting)).To(Succeed())
	tn.expectGone(waiting)
	g.Expect(testenv.Warnings(g, c, ns, waiting.Name, cachev1.ReasonBackupFilesLeft)).To(BeEmpty())
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisclusterbackup.CleanupJobName(waiting)}, &batchv1.Job{}))).To(BeTrue(), "nothing to clean")
}

// A backup whose status writes were lost still has its files removed
// when it is deleted: its status says it waits for its cluster, as before
// its Job was created, and that Job is gone too, but the controller
// recorded on the backup, before creating the Job, that it did
// (cachev1.AnnotationBackupJobCreated). The controller runs with its
// generated role alone.
func TestDeletingABackupWithAStaleStatusRemovesItsFiles(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	b := tn.completeBackup("lost-writes")
	g.Expect(b.Annotations).To(HaveKeyWithValue(cachev1.AnnotationBackupJobCreated, "true"))

	// The cluster goes, so that nothing makes a new Job, and every status
	// write since the backup waited for it is lost.
	g.Expect(c.Delete(ctx, tn.rc)).To(Succeed())
	b.Status = cachev1.RedisClusterBackupStatus{Phase: cachev1.BackupPending, JobName: b.Status.JobName, Location: b.Status.Location}
	conditions.MarkFalse(b, conditions.Ready, cachev1.ReasonClusterNotFound, "RedisCluster cache does not exist in namespace "+ns)
	g.Expect(c.Status().Update(ctx, b)).To(Succeed())
	// And its finished Job is gone (a user, a foreground deletion).
	g.Expect(c.Delete(ctx, tn.job(b), client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisclusterbackup.JobName(b)}, &batchv1.Job{}))
	}, soon).Should(BeTrue())
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		g.Expect(st.Phase).To(Equal(cachev1.BackupPending))
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonClusterNotFound)
	})

	g.Expect(c.Delete(ctx, b)).To(Succeed())
	cleanup := tn.cleanupJob(b)
	g.Expect(cleanup.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--path=" + ns + "/cache/lost-writes"))
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(cleanup), true)
	tn.expectGone(b)
	g.Eventually(func(g Gomega) {
		g.Expect(strings.Join(testenv.Events(g, c, ns, b.Name), "\n")).To(ContainSubstring("removed the files at s3://backups/redis/" + ns + "/cache/lost-writes/"))
	}).Should(Succeed())
}

// A failed Job fails the backup with the reason its run gave, or, without
// one, the Job's; a Job that succeeded without a readable result fails it
// too: only a run that says every file was stored makes a backup Complete.
// The controller runs with its generated role alone.
func TestFailedBackupsSayWhy(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	for _, tc := range []struct {
		name      string
		exitCode  int32
		message   string
		succeeded bool
		reason    string
		says      string
	}{
		{name: "changed", exitCode: 1, message: string(backupreport.Failed(cachev1.ReasonClusterChanged, errors.New("shard 1: a key of slot 7")).Encode()),
			reason: cachev1.ReasonClusterChanged, says: "shard 1: a key of slot 7"},
		{name: "no-pod", reason: cachev1.ReasonBackupFailed, says: "BackoffLimitExceeded"},
		{name: "garbage", exitCode: 1, message: "panic: oops", reason: cachev1.ReasonBackupFailed, says: "BackoffLimitExceeded"},
		{name: "silent-success", succeeded: true, reason: cachev1.ReasonBackupResultUnreadable, says: "no pod of the Job left a result"},
		{name: "lying-success", succeeded: true, message: `{"complete":true,"shards":1}`, reason: cachev1.ReasonBackupResultUnreadable, says: "lists 0 files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tn.backup(tc.name, "cache")
			job := tn.job(b)
			if tc.message != "" {
				testenv.TerminatedJobPod(g, c, job, tc.name+"-pod", tc.exitCode, tc.message)
			}
			testenv.FinishJob(g, c, client.ObjectKeyFromObject(job), tc.succeeded)
			// What the run stored is removed before the backup says Failed.
			tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
				g.Expect(st.Phase).To(Equal(cachev1.BackupRunning))
				expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonRemovingFailedBackup)
			})
			testenv.FinishJob(g, c, client.ObjectKeyFromObject(tn.cleanupJob(b)), true)
			tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
				g.Expect(st.Phase).To(Equal(cachev1.BackupFailed))
				g.Expect(st.Message).To(And(ContainSubstring(tc.says), HaveSuffix("what it stored was removed")))
				g.Expect(st.Totals).To(BeNil())
				expectReady(g, b, metav1.ConditionFalse, tc.reason)
			})
			g.Eventually(func(g Gomega) {
				g.Expect(testenv.Warnings(g, c, ns, b.Name, tc.reason)).To(ContainElement(ContainSubstring(tc.says)))
			}).Should(Succeed())
		})
	}
}

// A backup waits, with Ready=False, the reason and a Warning event, for
// its cluster, the cluster's backup user and a credentials Secret the
// operator can see, and starts once they are there: each is watched, so
// every step is noticed within soon, far below a poll's 30 s. The
// controller runs with its generated role alone.
func TestBackupWaitsForItsInputs(t *testing.T) {
	tn := start(t, testenv.ManagerOptions{Config: testenv.GeneratedRoleConfig(t, redisclusterbackup.Name)})
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	b := tn.backup("waiting", "cache")
	waits := func(reason, says string) {
		tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
			g.Expect(st.Phase).To(Equal(cachev1.BackupPending))
			expectReady(g, b, metav1.ConditionFalse, reason)
			g.Expect(st.Message).To(ContainSubstring(says))
		})
		g.Eventually(func(g Gomega) {
			g.Expect(testenv.Warnings(g, c, ns, b.Name, reason)).To(ContainElement(ContainSubstring(says)))
		}).Should(Succeed())
		jobs := &batchv1.JobList{}
		g.Expect(c.List(ctx, jobs, client.InNamespace(ns))).To(Succeed())
		g.Expect(jobs.Items).To(BeEmpty(), "no Job while waiting")
	}
	waits(cachev1.ReasonClusterNotFound, "RedisCluster cache does not exist")

	rc := builders.RedisCluster(ns, "cache").Obj()
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	waits(cachev1.ReasonBackupUserMissing, "Secret cache-backup")

	// A Secret of the right name that the cluster's controller did not make
	// is not the backup user's.
	forged := &corev1.Secret{ObjectMeta: labelled("cache-backup", ns), Data: map[string][]byte{rediscluster.PasswordKey: []byte("x")}}
	g.Expect(c.Create(ctx, forged)).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonBackupUserMissing)
	}, time.Second).Should(Succeed())
	g.Expect(c.Delete(ctx, forged)).To(Succeed())
	tn.rc = rc
	secret := &corev1.Secret{ObjectMeta: labelled("cache-backup", ns), Data: map[string][]byte{rediscluster.PasswordKey: []byte(backupPassword)}}
	secret.OwnerReferences = []metav1.OwnerReference{{APIVersion: cachev1.GroupVersion.String(), Kind: "RedisCluster", Name: rc.Name, UID: rc.UID, Controller: ptr.To(true)}}
	g.Expect(c.Create(ctx, secret)).To(Succeed())
	waits(cachev1.ReasonSecretNotFound, "Secret s3-credentials does not exist")

	// The unlabelled Secret is invisible to the cache; the store's CA
	// ConfigMap, created labelled beside it, is what wakes the backup,
	// which then tells that the Secret lacks the label.
	tn.store(false)
	waits(cachev1.ReasonSecretNotWatched, "kubectl label secret s3-credentials multi-operator.dev/watch=true")

	creds := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: credentialsName}, creds)).To(Succeed())
	creds.Labels = map[string]string{ownership.LabelWatch: ownership.WatchValue}
	labelled := time.Now()
	g.Expect(c.Update(ctx, creds)).To(Succeed())
	tn.job(b)
	g.Expect(time.Since(labelled)).To(BeNumerically("<", soon), "the Job follows the Secret at once")
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonBackupPending)
	})
}

// An encrypted backup waits for its key's Secret like for any input,
// then mounts it.
func TestEncryptedBackupWaitsForItsKey(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	b := builders.RedisClusterBackup(ns, "sealed", "cache").S3(func(*cachev1.S3Destination) {}).Obj()
	b.Spec.Destination.Encryption = &cachev1.BackupEncryption{KeySecretRef: cachev1.KeyRef{Name: "backup-key", Key: "key"}}
	g.Expect(c.Create(ctx, b)).To(Succeed())
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonSecretNotFound)
		g.Expect(st.Message).To(ContainSubstring("Secret backup-key does not exist"))
	})
	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: labelled("backup-key", ns), Data: map[string][]byte{"other": []byte("x")}})).To(Succeed())
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonSecretKeyMissing)
	})
	key := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "backup-key"}, key)).To(Succeed())
	key.Data["key"] = []byte("0123456789abcdef0123456789abcdef")
	g.Expect(c.Update(ctx, key)).To(Succeed())
	job := tn.job(b)
	g.Expect(job.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--encryption-key-file=/var/run/secrets/backup-encryption/key"))
	tn.expectNoSecretIn(job, b)
	g.Expect(string(mustJSON(g, job))).NotTo(ContainSubstring("0123456789abcdef"))
}

func mustJSON(g Gomega, obj any) []byte {
	raw, err := json.Marshal(obj)
	g.Expect(err).NotTo(HaveOccurred())
	return raw
}

// A Job of the backup's name that the backup does not control, such as
// one a tenant made with the operator's labels and a forged result, is
// never trusted: the backup reports the name as taken and never turns
// Complete, is not marked as having had a Job, and the Job is left alone.
func TestForeignJobOfTheBackupsNameIsNotTrusted(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	forged := testenv.ForgedJob(g, c, ns, "forged", ownership.Labels("redisclusterbackup", "forged"), redisclusterbackup.ContainerName, string(result(3).Encode()))
	b := tn.backup("forged", "cache")
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, conditions.ReasonResourceConflict)
	})
	g.Consistently(func(g Gomega) cachev1.BackupPhase {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		return b.Status.Phase
	}, 2*time.Second).ShouldNot(Equal(cachev1.BackupComplete))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(forged), forged)).To(Succeed())
	g.Expect(forged.OwnerReferences).To(BeEmpty(), "the tenant's Job is not adopted")
	g.Expect(b.Annotations).NotTo(HaveKey(cachev1.AnnotationBackupJobCreated), "no Job of the backup's ran, so a schedule may supersede it")
}

// A deleted backup that a new RedisCluster restores from keeps its files
// until that restore ended: retention or a user cannot pull them from
// under it.
func TestBackupInUseByARestoreKeepsItsFiles(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	b := tn.completeBackup("used")
	copyOf := builders.RedisCluster(ns, "copy").Obj()
	copyOf.Spec.RestoreFrom = &cachev1.RestoreSource{BackupName: b.Name}
	g.Expect(c.Create(ctx, copyOf)).To(Succeed())
	copyOf.Status.Restore = &cachev1.RestoreStatus{Phase: cachev1.RestoreRunning, BackupName: b.Name}
	g.Expect(c.Status().Update(ctx, copyOf)).To(Succeed())

	g.Expect(c.Delete(ctx, b)).To(Succeed())
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonBackupInUse)
		g.Expect(conditions.Get(b, conditions.Ready).Message).To(ContainSubstring("RedisCluster copy restores from this backup"))
	})
	g.Consistently(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisclusterbackup.CleanupJobName(b)}, &batchv1.Job{}))
	}, 2*time.Second).Should(BeTrue(), "no cleanup while the restore runs")

	// The restore ends: the files go, woken by the cluster's change.
	copyOf.Status.Restore.Phase = cachev1.RestoreComplete
	g.Expect(c.Status().Update(ctx, copyOf)).To(Succeed())
	cleanup := tn.cleanupJob(b)
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(cleanup), true)
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(b), b)) }).Should(BeTrue())
}

// A RedisCluster that restores the newest backup of a schedule, and whose
// status lost which backup that is (a lost write), still holds its
// backup's files: its restore Job's --path says which one. A restore Job
// that its cluster does not control says nothing.
func TestBackupInUseByAScheduledRestoreFoundFromItsJob(t *testing.T) {
	tn := startWithCluster(t)
	g, c, ns := tn.g, tn.c, tn.ns
	ctx := context.Background()
	restoring := func(name string, b *cachev1.RedisClusterBackup, controlled bool) *cachev1.RedisCluster {
		rc := builders.RedisCluster(ns, name).Obj()
		rc.Spec.RestoreFrom = &cachev1.RestoreSource{ScheduleName: "nightly"}
		g.Expect(c.Create(ctx, rc)).To(Succeed())
		rc.Status.Restore = &cachev1.RestoreStatus{Phase: cachev1.RestoreRunning}
		g.Expect(c.Status().Update(ctx, rc)).To(Succeed())
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: rediscluster.RestoreJobName(rc), Namespace: ns, Labels: ownership.Labels("rediscluster-restore", rc.Name)},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: rediscluster.RestoreContainerName, Image: "restore",
					Args: []string{"--path=" + path.Join(ns, "cache", b.Name)}}},
			}}},
		}
		if controlled {
			g.Expect(controllerutil.SetControllerReference(rc, job, c.Scheme())).To(Succeed())
		}
		g.Expect(c.Create(ctx, job)).To(Succeed())
		return rc
	}
	scheduled := func(name string) *cachev1.RedisClusterBackup {
		b := tn.completeBackup(name)
		before := b.DeepCopy()
		b.Labels = map[string]string{cachev1.LabelBackupSchedule: "nightly"}
		g.Expect(c.Patch(ctx, b, client.MergeFrom(before))).To(Succeed())
		return b
	}
	used, unused := scheduled("newest"), scheduled("older")
	copyOf := restoring("copy", used, true)
	restoring("stray", unused, false)

	g.Expect(c.Delete(ctx, used)).To(Succeed())
	g.Expect(c.Delete(ctx, unused)).To(Succeed())
	tn.expectStatus(used, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, used, metav1.ConditionFalse, cachev1.ReasonBackupInUse)
		g.Expect(conditions.Get(used, conditions.Ready).Message).To(ContainSubstring("RedisCluster copy restores from this backup"))
	})
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(tn.cleanupJob(unused)), true)
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(unused), unused)) }).Should(BeTrue(),
		"a Job its cluster does not control holds nothing")
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: redisclusterbackup.CleanupJobName(used)}, &batchv1.Job{}))).
		To(BeTrue(), "no cleanup while the restore runs")

	// The cluster goes before its status named the backup: its deletion
	// wakes the schedule's deleted backups, and the files go.
	g.Expect(c.Delete(ctx, copyOf)).To(Succeed())
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(tn.cleanupJob(used)), true)
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(used), used)) }).Should(BeTrue())
}

// A credentials Secret the operator generated for a cluster is refused:
// the Job would mount its passwords.
func TestGeneratedSecretsAreRefusedAsCredentials(t *testing.T) {
	tn := start(t, testenv.ManagerOptions{})
	g, c, ns := tn.g, tn.c, tn.ns
	tn.cluster()
	tn.store(true)
	b := builders.RedisClusterBackup(ns, "sneaky", "cache").S3(func(s *cachev1.S3Destination) {
		s.CredentialsSecret = rediscluster.BackupSecretName(tn.rc)
	}).Obj()
	g.Expect(c.Create(context.Background(), b)).To(Succeed())
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		expectReady(g, b, metav1.ConditionFalse, cachev1.ReasonSecretGenerated)
	})
}

// A cluster of more shards than the Job's termination message holds
// lists the first ones in the status, and says how many there are in all
// (totals.shards) and how many the list leaves out (shardsOmitted):
// manifest.json lists them all.
func TestShardListIsCutHonestly(t *testing.T) {
	tn := startWithCluster(t)
	g, c := tn.g, tn.c
	b := tn.backup("large", "cache")
	job := tn.job(b)
	testenv.TerminatedJobPod(g, c, job, "large-pod", 0, string(result(cachev1.MaxBackupShards).Encode()))
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(job), true)
	tn.expectStatus(b, func(g Gomega, st cachev1.RedisClusterBackupStatus) {
		g.Expect(st.Phase).To(Equal(cachev1.BackupComplete))
		g.Expect(st.Totals.Shards).To(Equal(int32(cachev1.MaxBackupShards)))
		g.Expect(st.ShardsOmitted).To(BeNumerically(">", 0))
		g.Expect(int32(len(st.Shards)) + st.ShardsOmitted).To(Equal(st.Totals.Shards))
		g.Expect(st.Shards[len(st.Shards)-1].File).To(Equal(fmt.Sprintf("shard-%03d.rdb", len(st.Shards)-1)), "the first ones, in order")
	})
}
