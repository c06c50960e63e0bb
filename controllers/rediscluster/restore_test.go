package rediscluster_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// restoringCluster is a RedisCluster of two masters created to restore
// the backup called backup.
func restoringCluster(ns, name, backup string) *cachev1.RedisCluster {
	rc := builders.RedisCluster(ns, name).Size(2).Obj()
	rc.Spec.RestoreFrom = &cachev1.RestoreSource{BackupName: backup}
	return rc
}

// backupSHA256 is the SHA-256 completeBackup records of its first file.
var backupSHA256 = strings.Repeat("5a", 32)

// completeBackup creates a RedisClusterBackup whose status says Complete,
// with its totals and files, as its controller would write it, and its
// store's labelled credentials Secret.
func completeBackup(g Gomega, c client.Client, ns, name string) {
	err := c.Create(context.Background(), storeCredentials(ns))
	g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	completeStatus(g, c, builders.RedisClusterBackup(ns, name, "source").Obj())
}

// storeCredentials is the labelled Secret of builders.RedisClusterBackup's
// store.
func storeCredentials(ns string) *corev1.Secret {
	return userSecret(ns, "s3-credentials", map[string]string{"accessKeyID": "AKIATEST", "secretAccessKey": "store secret"})
}

// completeStatus creates b with the status of a Complete backup, with its
// totals and first file.
func completeStatus(g Gomega, c client.Client, b *cachev1.RedisClusterBackup) {
	g.Expect(c.Create(context.Background(), b)).To(Succeed())
	b.Status.Totals = &cachev1.BackupTotals{Keys: 42, Bytes: 2048, Shards: 2}
	b.Status.Shards = []cachev1.BackupShardStatus{{File: "shard-000.rdb", Slots: "0-8191", Keys: 20, Bytes: 1024, SHA256: backupSHA256}}
	b.Status.ShardsOmitted = 1
	b.Status.CompletionTime = &metav1.Time{Time: time.Now()}
	setBackupPhase(g, c, b, cachev1.BackupComplete)
}

func setBackupPhase(g Gomega, c client.Client, b *cachev1.RedisClusterBackup, phase cachev1.BackupPhase) {
	b.Status.Phase = phase
	g.Expect(c.Status().Update(context.Background(), b)).To(Succeed())
}

// expectCondition waits until rc's condition has status and reason,
// running the kubelet.
func expectCondition(g *WithT, c client.Client, k *kubelet, rc *cachev1.RedisCluster, condition string, status metav1.ConditionStatus, reason string) {
	g.Eventually(func(g Gomega) {
		if k != nil {
			k.sync(g)
		}
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		cond := conditions.Get(rc, condition)
		g.Expect(cond).NotTo(BeNil(), "conditions: %+v", rc.Status.Conditions)
		g.Expect(cond.Status).To(Equal(status), "%+v", cond)
		g.Expect(cond.Reason).To(Equal(reason), "%+v", cond)
	}, 120*time.Second, 200*time.Millisecond).Should(Succeed())
}

// restoreJob waits, running the kubelet, until the cluster has formed and
// its restore Job exists, and returns it.
func restoreJob(g *WithT, k *kubelet, rc *cachev1.RedisCluster) *batchv1.Job {
	job := &batchv1.Job{}
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(k.c.Get(context.Background(), client.ObjectKey{Namespace: rc.Namespace, Name: rediscluster.RestoreJobName(rc)}, job)).To(Succeed())
	}, 120*time.Second, 200*time.Millisecond).Should(Succeed())
	return job
}

// expectRestoreUser expects the restore's user on every node of rc, with
// the password of its Secret, and in the users file the nodes read at
// start: it may restore and not read a key. It returns the password.
func expectRestoreUser(g *WithT, c client.Client, k *kubelet, rc *cachev1.RedisCluster) string {
	ctx := context.Background()
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: rediscluster.RestoreSecretName(rc)}, secret)).To(Succeed())
	password := string(secret.Data[rediscluster.PasswordKey])
	g.Expect(password).To(HaveLen(40))
	g.Expect(usersFile(g, c, rc)).To(ContainSubstring("user " + redisadmin.RestoreUser + " reset on #" + redisadmin.Hash(password)))
	g.Expect(k.servers).NotTo(BeEmpty())
	for _, s := range k.servers {
		user := s.ClientAs(redisadmin.RestoreUser, password)
		g.Expect(user.Do(ctx, "CLUSTER", "SLOTS").Err()).To(Succeed())
		g.Expect(user.Do(ctx, "GET", "key").Err()).To(MatchError(ContainSubstring("NOPERM")))
	}
	expectNoSecretsIn(g, c, rc)
	return password
}

// expectNoRestoreUser waits until rc's restore is over for its nodes: no
// node has the restore's user, the users file does not have it, and its
// Secret holds no password.
func expectNoRestoreUser(g *WithT, c client.Client, k *kubelet, rc *cachev1.RedisCluster, password string) {
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		k.sync(g)
		secret := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: rediscluster.RestoreSecretName(rc)}, secret)).To(Succeed())
		g.Expect(secret.Data).To(BeEmpty(), "the restore's Secret holds no password")
		g.Expect(metav1.IsControlledBy(secret, rc)).To(BeTrue(), "and goes with the cluster")
		g.Expect(usersFile(g, c, rc)).NotTo(ContainSubstring("user " + redisadmin.RestoreUser))
		for _, s := range k.servers {
			g.Expect(s.ClientAs(redisadmin.RestoreUser, password).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")), s.Addr())
		}
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
}

// usersFile is the users file of rc's nodes, from <name>-acl.
func usersFile(g Gomega, c client.Client, rc *cachev1.RedisCluster) string {
	acl := &corev1.Secret{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: rc.Namespace, Name: rediscluster.ACLSecretName(rc)}, acl)).To(Succeed())
	return string(acl.Data[rediscluster.ACLKey])
}

// The restore Job's Secrets and ConfigMap are checked as a backup's are:
// a cluster whose backup's credentials Secret is missing waits, not Ready,
// with one Warning, and creates no Job; creating the labelled Secret wakes
// it (no polling), and so does its CA bundle's ConfigMap, after which the
// Job starts. The controller runs under its generated role.
func TestRestoreWaitsForItsInputs(t *testing.T) {
	cfg := testenv.GeneratedRoleConfig(t, rediscluster.Name)
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{Config: cfg})
	ctx := context.Background()
	b := builders.RedisClusterBackup(ns, "nightly", "source").S3(func(s *cachev1.S3Destination) {
		s.CABundle = &cachev1.CABundleSource{ConfigMapKeyRef: &cachev1.KeyRef{Name: "store-ca", Key: "ca.crt"}}
	}).Obj()
	completeStatus(g, c, b)
	rc := restoringCluster(ns, "inputs", "nightly")
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	deleteAtEnd(t, c, rc)
	k := newKubelet(t, c, ns, rc.Name)
	noJob := func() {
		g.Consistently(func(g Gomega) {
			k.sync(g)
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rediscluster.RestoreJobName(rc)}, &batchv1.Job{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no restore Job: %v", err)
		}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	}
	expectCondition(g, c, k, rc, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonSecretNotFound)
	g.Expect(conditions.Get(rc, conditions.Ready).Message).To(And(ContainSubstring("Secret s3-credentials does not exist"),
		ContainSubstring("the restore of RedisClusterBackup nightly waits")))
	g.Eventually(func(g Gomega) []string {
		return testenv.Warnings(g, c, ns, rc.Name, cachev1.ReasonSecretNotFound)
	}, 30*time.Second).ShouldNot(BeEmpty())
	noJob()
	g.Expect(testenv.Warnings(g, c, ns, rc.Name, cachev1.ReasonSecretNotFound)).To(HaveLen(1), "one Warning while it waits")

	g.Expect(c.Create(ctx, storeCredentials(ns))).To(Succeed())
	expectCondition(g, c, nil, rc, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonConfigMapNotFound)
	noJob()
	ca := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "store-ca", Namespace: ns, Labels: map[string]string{ownership.LabelWatch: ownership.WatchValue}},
		Data: map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----"}}
	g.Expect(c.Create(ctx, ca)).To(Succeed())
	job := restoreJob(g, k, rc)
	g.Expect(job.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--s3-credentials-dir=/var/run/secrets/s3-credentials", "--s3-ca-file=/var/run/secrets/s3-ca/ca.crt"))
}

// A cluster that names a missing backup waits, not Ready, with a Warning,
// and creates nothing; a Failed backup says so; the watch on backups wakes
// it, without polling.
func TestRestoreWaitsForItsBackup(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	rc := restoringCluster(ns, "waits", "nightly")
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	deleteAtEnd(t, c, rc)
	expectCondition(g, c, nil, rc, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonRestorePending)
	g.Expect(conditions.Get(rc, conditions.Ready).Message).To(ContainSubstring("RedisClusterBackup nightly does not exist"))
	g.Eventually(func(g Gomega) []string {
		return testenv.Warnings(g, c, ns, rc.Name, cachev1.ReasonRestorePending)
	}, 30*time.Second).ShouldNot(BeEmpty())
	g.Expect(rc.Status.Restore).NotTo(BeNil())
	g.Expect(rc.Status.Restore.Phase).To(Equal(cachev1.RestorePending))
	g.Expect(rc.Status.Restore.BackupName).To(Equal("nightly"))
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: rc.Name}, &corev1.Service{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no client Service: %v", err)

	b := builders.RedisClusterBackup(ns, "nightly", "source").Obj()
	g.Expect(c.Create(context.Background(), b)).To(Succeed())
	setBackupPhase(g, c, b, cachev1.BackupFailed)
	expectCondition(g, c, nil, rc, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonRestoreBackupFailed)
	g.Eventually(func(g Gomega) []string {
		return testenv.Warnings(g, c, ns, rc.Name, cachev1.ReasonRestoreBackupFailed)
	}, 30*time.Second).ShouldNot(BeEmpty())

	// A Complete backup whose status records no totals gives the restore
	// nothing to hold the store's manifest to: nothing runs.
	untotalled := builders.RedisClusterBackup(ns, "untotalled", "source").Obj()
	g.Expect(c.Create(context.Background(), untotalled)).To(Succeed())
	setBackupPhase(g, c, untotalled, cachev1.BackupComplete)
	other := restoringCluster(ns, "untotalled", "untotalled")
	g.Expect(c.Create(context.Background(), other)).To(Succeed())
	deleteAtEnd(t, c, other)
	expectCondition(g, c, nil, other, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonRestoreBackupFailed)
	g.Expect(conditions.Get(other, conditions.Ready).Message).To(ContainSubstring("records no totals"))
	err = c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: rediscluster.RestoreJobName(other)}, &batchv1.Job{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no restore Job: %v", err)
}

// Once the backup is Complete and the cluster has formed, one restore Job
// runs, restricted, with the store's and the cluster's secrets as files;
// the client Service appears and the cluster turns Ready only after it
// succeeded, with the keys it restored. The Job logs in as the restore's
// user, whose password only it mounts, never the clients'; the user goes
// from every node, and its Secret is deleted, once the restore is over.
// The controller runs under its generated role.
func TestRestoreRunsOnceBeforeReady(t *testing.T) {
	cfg, writes := testenv.CountWrites(testenv.GeneratedRoleConfig(t, rediscluster.Name))
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{Config: cfg})
	completeBackup(g, c, ns, "nightly")
	rc := restoringCluster(ns, "restored", "nightly")
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	deleteAtEnd(t, c, rc)
	k := newKubelet(t, c, ns, rc.Name)
	job := restoreJob(g, k, rc)
	spec := job.Spec.Template.Spec
	g.Expect(spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()))
	g.Expect(spec.Containers[0].Env).To(BeEmpty())
	g.Expect(spec.Containers[0].Args).To(ContainElements("restore", "--path="+ns+"/source/nightly",
		"--redis-username="+redisadmin.RestoreUser, "--redis-password-file=/var/run/secrets/redis-password/password",
		// What the backup's status recorded, which the run holds the
		// store's manifest to.
		"--expect-keys=42", "--expect-shards=2", "--expect-file=shard-000.rdb:"+backupSHA256))
	var secrets []string
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			secrets = append(secrets, v.Secret.SecretName)
		}
	}
	g.Expect(secrets).To(ConsistOf("s3-credentials", rediscluster.RestoreSecretName(rc)), "never the clients' password")
	password := expectRestoreUser(g, c, k, rc)
	asJSON, err := json.Marshal(job)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(asJSON)).NotTo(ContainSubstring(password), "the Job has the password as a file only")
	expectCondition(g, c, k, rc, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonRestoreRunning)
	err = c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: rc.Name}, &corev1.Service{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no client Service while restoring: %v", err)
	// While the Job runs, a reconcile writes nothing: Ready stays as it is.
	testenv.ExpectSteadyState(g, writes, rediscluster.Name, ns, func() { pokePod(g, c, ns, "restored-0", "1") })

	result := backupreport.Result{Complete: true, Keys: 42, Message: "restored 42 keys"}
	testenv.TerminatedJobPod(g, c, job, job.Name+"-a", 0, string(result.Encode()))
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(job), true)
	expectCondition(g, c, k, rc, cachev1.ConditionRestored, metav1.ConditionTrue, cachev1.ReasonRestored)
	g.Expect(rc.Status.Restore.Phase).To(Equal(cachev1.RestoreComplete))
	g.Expect(rc.Status.Restore.Keys).To(Equal(int64(42)))
	g.Expect(rc.Status.Restore.CompletionTime).NotTo(BeNil())
	svc := &corev1.Service{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: rc.Name}, svc)).To(Succeed())
	g.Expect(svc.Spec.Selector).To(Equal(rediscluster.DesiredClientService(rc).Spec.Selector))
	expectReady(g, k, rc, 2)
	expectNoRestoreUser(g, c, k, rc, password)
	g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Removed the password from Secret " + rediscluster.RestoreSecretName(rc))))
	// Restored for good: no second Job, nothing written.
	testenv.ExpectSteadyState(g, writes, rediscluster.Name, ns, func() { pokePod(g, c, ns, "restored-0", "2") })
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
	g.Expect(conditions.IsTrue(rc, cachev1.ConditionRestored)).To(BeTrue())
	expectRestoredOnce(g, c, ns, rc.Name, "restored 42 keys of RedisClusterBackup nightly")
}

// expectRestoredOnce expects one Restored event about the cluster, with
// note, recorded once (an event recorded again counts in its series).
func expectRestoredOnce(g Gomega, c client.Client, ns, name, note string) {
	var restored []eventsv1.Event
	for _, e := range testenv.EventObjects(g, c, ns, name) {
		if e.Reason == cachev1.ReasonRestored {
			restored = append(restored, e)
		}
	}
	g.Expect(restored).To(HaveLen(1))
	g.Expect(restored[0].Note).To(Equal(note))
	g.Expect(restored[0].Series).To(BeNil(), "recorded once")
}

// A restore that finds its client Service's name taken by a foreign
// Service is not Complete until the name is free: then the cluster gets
// its Service, the restore is Complete, and the Restored event is
// recorded once.
func TestRestoreCompletesOnlyWithItsClientService(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	completeBackup(g, c, ns, "nightly")
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "restored", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "other", Port: 1234}}}}
	g.Expect(c.Create(context.Background(), foreign)).To(Succeed())
	rc := restoringCluster(ns, "restored", "nightly")
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	deleteAtEnd(t, c, rc)
	k := newKubelet(t, c, ns, rc.Name)
	job := restoreJob(g, k, rc)
	result := backupreport.Result{Complete: true, Keys: 42, Message: "restored 42 keys"}
	testenv.TerminatedJobPod(g, c, job, job.Name+"-a", 0, string(result.Encode()))
	testenv.FinishJob(g, c, client.ObjectKeyFromObject(job), true)

	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(rc.Status.Restore).NotTo(BeNil())
		g.Expect(rc.Status.Restore.Phase).NotTo(Equal(cachev1.RestoreComplete), "no client Service of its own yet")
		g.Expect(conditions.IsTrue(rc, conditions.Ready)).To(BeFalse())
	}, 2*time.Second).Should(Succeed())

	g.Expect(c.Delete(context.Background(), foreign)).To(Succeed())
	expectCondition(g, c, k, rc, cachev1.ConditionRestored, metav1.ConditionTrue, cachev1.ReasonRestored)
	g.Expect(rc.Status.Restore.Phase).To(Equal(cachev1.RestoreComplete))
	g.Eventually(func(g Gomega) {
		expectRestoredOnce(g, c, ns, rc.Name, "restored 42 keys of RedisClusterBackup nightly")
	}).Should(Succeed())
}

// A restore Job that fails, or succeeds without a result that says the
// restore is complete, leaves the cluster not Ready, with its reason and a
// Warning, and no client Service.
func TestRestoreFailedIsNeverReady(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	completeBackup(g, c, ns, "nightly")
	for _, tc := range []struct {
		name      string
		succeeded bool
		// pod is the termination message of the Job's pod; none when empty.
		pod     string
		message string
	}{
		{name: "failing", pod: string(backupreport.Result{Reason: cachev1.ReasonRestoreFailed, Message: "OOM command not allowed"}.Encode()), message: "OOM command not allowed"},
		{name: "unreadable", succeeded: true, message: "without a result"},
		{name: "tampered", pod: string(backupreport.Result{Reason: cachev1.ReasonRestoreManifestMismatch,
			Message: "the backup's manifest.json disagrees with its RedisClusterBackup's status, which the restore trusts: it lists 1 shard files, the status 2"}.Encode()),
			message: "(RestoreManifestMismatch): the backup's manifest.json disagrees"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			rc := restoringCluster(ns, tc.name, "nightly")
			g.Expect(c.Create(context.Background(), rc)).To(Succeed())
			deleteAtEnd(t, c, rc)
			k := newKubelet(t, c, ns, rc.Name)
			job := restoreJob(g, k, rc)
			if tc.pod != "" {
				testenv.TerminatedJobPod(g, c, job, job.Name+"-a", 1, tc.pod)
			}
			password := expectRestoreUser(g, c, k, rc)
			testenv.FinishJob(g, c, client.ObjectKeyFromObject(job), tc.succeeded)
			expectCondition(g, c, k, rc, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonRestoreFailed)
			expectNoRestoreUser(g, c, k, rc, password)
			g.Expect(rc.Status.Restore.Phase).To(Equal(cachev1.RestoreFailed))
			g.Expect(conditions.Get(rc, conditions.Ready).Message).To(ContainSubstring(tc.message))
			g.Eventually(func(g Gomega) []string {
				return testenv.Warnings(g, c, ns, rc.Name, cachev1.ReasonRestoreFailed)
			}, 30*time.Second).ShouldNot(BeEmpty())
			g.Consistently(func(g Gomega) {
				k.sync(g)
				g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
				g.Expect(conditions.IsTrue(rc, conditions.Ready)).To(BeFalse())
				err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: rc.Name}, &corev1.Service{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
			}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
		})
	}
}

// A cluster restoring from a schedule waits while the schedule has no
// complete backup; one created when the schedule has several loads the
// newest complete one, chosen once: a newer backup after that does not
// change it.
func TestRestoreFromASchedulesNewestBackup(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	fromSchedule := func(name, schedule string) *cachev1.RedisCluster {
		rc := builders.RedisCluster(ns, name).Size(2).Obj()
		rc.Spec.RestoreFrom = &cachev1.RestoreSource{ScheduleName: schedule}
		g.Expect(c.Create(ctx, rc)).To(Succeed())
		deleteAtEnd(t, c, rc)
		return rc
	}
	waiting := fromSchedule("waiting", "empty")
	expectCondition(g, c, nil, waiting, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonRestorePending)
	g.Expect(conditions.Get(waiting, conditions.Ready).Message).To(ContainSubstring("RedisClusterBackupSchedule empty has no complete backup yet"))

	scheduled := func(name, schedule string, phase cachev1.BackupPhase, completed time.Time) {
		b := builders.RedisClusterBackup(ns, name, "source").Obj()
		b.Labels = map[string]string{cachev1.LabelBackupSchedule: schedule}
		g.Expect(c.Create(ctx, b)).To(Succeed())
		b.Status.Phase = phase
		if phase == cachev1.BackupComplete {
			b.Status.CompletionTime = &metav1.Time{Time: completed}
		}
		g.Expect(c.Status().Update(ctx, b)).To(Succeed())
	}
	now := time.Now().Truncate(time.Second)
	// Another schedule's newer one, and a failed one of this schedule, are
	// not taken.
	scheduled("weekly-1", "weekly", cachev1.BackupComplete, now)
	scheduled("nightly-3", "nightly", cachev1.BackupFailed, now)
	scheduled("nightly-1", "nightly", cachev1.BackupComplete, now.Add(-2*time.Hour))
	scheduled("nightly-2", "nightly", cachev1.BackupComplete, now.Add(-time.Hour))
	rc := fromSchedule("from-schedule", "nightly")
	chosen := func(g Gomega) string {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(rc.Status.Restore).NotTo(BeNil())
		return rc.Status.Restore.BackupName
	}
	g.Eventually(chosen, 60*time.Second, 200*time.Millisecond).Should(Equal("nightly-2"))

	scheduled("nightly-4", "nightly", cachev1.BackupComplete, now)
	g.Consistently(chosen, 3*time.Second, 200*time.Millisecond).Should(Equal("nightly-2"), "chosen once")
}

// The backup a cluster restoring from a schedule chose is kept on its
// restore Job: when the status write that recorded it is lost, the
// controller takes it back from the Job, even after a newer backup of the
// schedule completed, rather than choose again. The controller runs under
// its generated role.
func TestRestoreFromAScheduleKeepsTheJobsBackup(t *testing.T) {
	cfg := testenv.GeneratedRoleConfig(t, rediscluster.Name)
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{Config: cfg})
	ctx := context.Background()
	g.Expect(c.Create(ctx, storeCredentials(ns))).To(Succeed())
	scheduled := func(name string) {
		b := builders.RedisClusterBackup(ns, name, "source").Obj()
		b.Labels = map[string]string{cachev1.LabelBackupSchedule: "nightly"}
		completeStatus(g, c, b)
	}
	scheduled("nightly-1")
	scheduled("nightly-2")
	rc := builders.RedisCluster(ns, "from-schedule").Size(2).Obj()
	rc.Spec.RestoreFrom = &cachev1.RestoreSource{ScheduleName: "nightly"}
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	deleteAtEnd(t, c, rc)
	k := newKubelet(t, c, ns, rc.Name)
	job := restoreJob(g, k, rc)
	g.Expect(job.Annotations).To(HaveKeyWithValue(cachev1.AnnotationRestoreBackup, "nightly-2"))
	g.Expect(job.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--path=" + ns + "/source/nightly-2"))
	chosen := func(g Gomega) string {
		k.sync(g)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(rc.Status.Restore).NotTo(BeNil())
		return rc.Status.Restore.BackupName
	}
	g.Eventually(chosen, 60*time.Second, 200*time.Millisecond).Should(Equal("nightly-2"))

	// The status write is lost; a newer backup of the schedule completes
	// and wakes the cluster.
	g.Expect(c.Status().Patch(ctx, rc, client.RawPatch(types.MergePatchType, []byte(`{"status":{"restore":{"backupName":null}}}`)))).To(Succeed())
	scheduled("nightly-3")
	g.Eventually(chosen, 60*time.Second, 200*time.Millisecond).Should(Equal("nightly-2"), "taken back from the Job")
	g.Consistently(chosen, 3*time.Second, 200*time.Millisecond).Should(Equal("nightly-2"))

	// A tenant edits the Job's annotation, the status write is lost again
	// and another backup wakes the cluster: the choice comes from the
	// Job's pod template, which cannot be changed.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
	job.Annotations[cachev1.AnnotationRestoreBackup] = "nightly-1"
	g.Expect(c.Update(ctx, job)).To(Succeed())
	g.Expect(c.Status().Patch(ctx, rc, client.RawPatch(types.MergePatchType, []byte(`{"status":{"restore":{"backupName":null}}}`)))).To(Succeed())
	scheduled("nightly-4")
	g.Eventually(chosen, 60*time.Second, 200*time.Millisecond).Should(Equal("nightly-2"), "taken back from the Job's command line")
	expectCondition(g, c, k, rc, conditions.Ready, metav1.ConditionFalse, cachev1.ReasonRestoreRunning)
	g.Expect(conditions.Get(rc, conditions.Ready).Message).To(ContainSubstring("restores RedisClusterBackup nightly-2"))
}

// A Job of the restore Job's name that the cluster does not control, such
// as a tenant's with a forged result, is never trusted: the cluster is
// never Restored or Ready, and says the name is taken.
func TestForeignRestoreJobIsNotTrusted(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	completeBackup(g, c, ns, "weekly")
	result := backupreport.Result{Complete: true, Keys: 42, Message: "restored 42 keys"}
	testenv.ForgedJob(g, c, ns, "forged-restore", ownership.Labels("rediscluster-restore", "forged"), rediscluster.RestoreContainerName, string(result.Encode()))

	rc := restoringCluster(ns, "forged", "weekly")
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	deleteAtEnd(t, c, rc)
	k := newKubelet(t, c, ns, rc.Name)
	expectCondition(g, c, k, rc, conditions.Ready, metav1.ConditionFalse, conditions.ReasonResourceConflict)
	g.Consistently(func(g Gomega) {
		k.sync(g)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		g.Expect(conditions.IsTrue(rc, cachev1.ConditionRestored)).To(BeFalse())
		g.Expect(conditions.IsTrue(rc, conditions.Ready)).To(BeFalse())
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rc.Name}, &corev1.Service{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no client Service: %v", err)
}
