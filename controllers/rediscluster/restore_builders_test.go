package rediscluster_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/jobspec"
)

func TestDesiredRestoreJob(t *testing.T) {
	plain := builders.RedisCluster("team", "copy").Obj()
	creds := jobspec.Mount{Path: "/var/run/secrets/s3-credentials", Source: "secret/s3-credentials",
		Files: map[string]string{"accessKeyID": "accessKeyID", "secretAccessKey": "secretAccessKey"}, ReadOnly: true}
	// The restore user's password, whatever the clients': never theirs.
	password := jobspec.Mount{Path: "/var/run/secrets/redis-password", Source: "secret/copy-restore", Files: map[string]string{"password": "password"}, ReadOnly: true}
	s3 := builders.RedisClusterBackup("team", "nightly", "cache").Obj()
	for _, tc := range []struct {
		name    string
		backup  *cachev1.RedisClusterBackup
		cluster *cachev1.RedisCluster
		mounts  map[string]jobspec.Mount
		args    []string
	}{
		{
			name: "object store, generated password", backup: s3, cluster: plain,
			mounts: map[string]jobspec.Mount{"redis-password": password, "s3-credentials": creds},
			args: []string{"--s3-endpoint=https://s3.example.com", "--s3-bucket=backups",
				"--redis-username=restore", "--redis-password-file=/var/run/secrets/redis-password/password"},
		},
		{
			name: "object store with its CA, cluster with TLS and its own password",
			backup: builders.RedisClusterBackup("team", "nightly", "cache").S3(func(s *cachev1.S3Destination) {
				s.CABundle = &cachev1.CABundleSource{SecretKeyRef: &cachev1.KeyRef{Name: "store-tls", Key: "root.pem"}}
			}).Obj(),
			cluster: func() *cachev1.RedisCluster {
				rc := builders.RedisCluster("team", "copy").TLS("copy-tls").Obj()
				rc.Spec.Auth = &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: "mine", Key: "pw"}}
				return rc
			}(),
			mounts: map[string]jobspec.Mount{"redis-password": password, "s3-credentials": creds,
				"redis-ca": {Path: "/var/run/secrets/redis-ca", Source: "secret/copy-tls", Files: map[string]string{"ca.crt": "ca.crt"}, ReadOnly: true},
				"s3-ca":    {Path: "/var/run/secrets/s3-ca", Source: "secret/store-tls", Files: map[string]string{"root.pem": "ca.crt"}, ReadOnly: true}},
			args: []string{"--redis-ca-file=/var/run/secrets/redis-ca/ca.crt", "--s3-ca-file=/var/run/secrets/s3-ca/ca.crt"},
		},
		{
			name: "encrypted backup: its key mounted as a file",
			backup: func() *cachev1.RedisClusterBackup {
				b := builders.RedisClusterBackup("team", "nightly", "cache").Obj()
				b.Spec.Destination.Encryption = &cachev1.BackupEncryption{KeySecretRef: cachev1.KeyRef{Name: "backup-key", Key: "aes"}}
				return b
			}(),
			cluster: plain,
			mounts: map[string]jobspec.Mount{"redis-password": password, "s3-credentials": creds,
				"encryption-key": {Path: "/var/run/secrets/backup-encryption", Source: "secret/backup-key", Files: map[string]string{"aes": "key"}, ReadOnly: true}},
			args: []string{"--encryption-key-file=/var/run/secrets/backup-encryption/key"},
		},
		{
			name:   "volume, mounted read-only, cluster without authentication",
			backup: builders.RedisClusterBackup("team", "nightly", "cache").PVC("backups").Obj(),
			cluster: func() *cachev1.RedisCluster {
				rc := builders.RedisCluster("team", "copy").Obj()
				rc.Spec.Auth = &cachev1.AuthSpec{Disabled: true}
				return rc
			}(),
			mounts: map[string]jobspec.Mount{"backup": {Path: "/backup", Source: "pvc/backups", Files: map[string]string{}, ReadOnly: true},
				"redis-password": password},
			args: []string{"--dir=/backup", "--redis-username=restore", "--redis-password-file=/var/run/secrets/redis-password/password"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			job := rediscluster.DesiredRestoreJob(tc.cluster, tc.backup, "registry.example/mo:v1")
			g.Expect(job.Name).To(Equal("copy-restore"))
			g.Expect(job.Annotations).To(Equal(map[string]string{cachev1.AnnotationRestoreBackup: tc.backup.Name}), "the backup chosen, kept with the Job")
			jobspec.ExpectRestricted(g, job, "registry.example/mo:v1")
			pod := job.Spec.Template.Spec
			g.Expect(jobspec.Mounts(g, pod)).To(Equal(tc.mounts))
			for _, v := range pod.Volumes {
				if v.PersistentVolumeClaim != nil {
					g.Expect(v.PersistentVolumeClaim.ReadOnly).To(BeTrue(), "a restore only reads the backup")
				}
			}
			// Not the cluster's pods: the Services, the PodDisruptionBudget
			// and the StatefulSet do not select it.
			g.Expect(job.Spec.Template.Labels).NotTo(HaveKeyWithValue("app.kubernetes.io/name", "rediscluster"))

			ctr := pod.Containers[0]
			g.Expect(ctr.Args[0]).To(Equal("restore"))
			g.Expect(ctr.Args).To(ContainElements(tc.args))
			var got backupjob.RestoreConfig
			fs := pflag.NewFlagSet("restore", pflag.ContinueOnError)
			got.Bind(fs)
			g.Expect(fs.Parse(ctr.Args[1:])).To(Succeed())
			g.Expect(got).To(Equal(rediscluster.RestoreConfig(tc.cluster, tc.backup)))
			g.Expect(got.Seeds).To(Equal([]string{"copy-headless.team.svc:6379"}), "the client Service does not exist yet")
			g.Expect(got.Path).To(Equal("team/cache/nightly"))
			g.Expect(got.TerminationLog).To(Equal(ctr.TerminationMessagePath))
			g.Expect(got.Timeout.Seconds()).To(BeNumerically("<", *job.Spec.ActiveDeadlineSeconds), "the run reports before the Job's deadline")
			g.Expect(got.Expect).To(Equal(rediscluster.ExpectedOf(tc.backup)))
		})
	}
}

// The restore is held to what the backup's status recorded: its totals,
// and every file the status lists, even when it left some out.
func TestExpectedOf(t *testing.T) {
	sum := func(c byte) string { return strings.Repeat(string(c), 64) }
	complete := func(omitted int32, files ...string) *cachev1.RedisClusterBackup {
		b := builders.RedisClusterBackup("team", "nightly", "cache").Obj()
		b.Status.Phase = cachev1.BackupComplete
		b.Status.Totals = &cachev1.BackupTotals{Keys: 42, Bytes: 4096, Shards: int32(len(files)) + omitted}
		for _, f := range files {
			b.Status.Shards = append(b.Status.Shards, cachev1.BackupShardStatus{File: f, SHA256: sum(f[len(f)-5])})
		}
		b.Status.ShardsOmitted = omitted
		return b
	}
	for _, tc := range []struct {
		name   string
		backup *cachev1.RedisClusterBackup
		want   backupjob.Expected
		args   []string
	}{
		{name: "every file listed", backup: complete(0, "shard-000.rdb", "shard-001.rdb"),
			want: backupjob.Expected{Keys: 42, Shards: 2, Files: []backupjob.ExpectedFile{{Name: "shard-000.rdb", SHA256: sum('0')}, {Name: "shard-001.rdb", SHA256: sum('1')}}},
			args: []string{"--expect-keys=42", "--expect-shards=2", "--expect-file=shard-000.rdb:" + sum('0'), "--expect-file=shard-001.rdb:" + sum('1')}},
		{name: "some left out: the listed ones, and the counts", backup: complete(3, "shard-000.rdb"),
			want: backupjob.Expected{Keys: 42, Shards: 4, Files: []backupjob.ExpectedFile{{Name: "shard-000.rdb", SHA256: sum('0')}}},
			args: []string{"--expect-keys=42", "--expect-shards=4", "--expect-file=shard-000.rdb:" + sum('0')}},
		{name: "no totals: nothing the run accepts", backup: builders.RedisClusterBackup("team", "nightly", "cache").Obj(),
			want: backupjob.Expected{Keys: -1}, args: []string{"--expect-keys=-1", "--expect-shards=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(rediscluster.ExpectedOf(tc.backup)).To(Equal(tc.want))
			job := rediscluster.DesiredRestoreJob(builders.RedisCluster("team", "copy").Obj(), tc.backup, "registry.example/mo:v1")
			g.Expect(job.Spec.Template.Spec.Containers[0].Args).To(ContainElements(tc.args))
		})
	}
}

func TestNewestComplete(t *testing.T) {
	at := func(h int) *metav1.Time { return &metav1.Time{Time: time.Date(2026, 11, 29, h, 0, 0, 0, time.UTC)} }
	backup := func(name string, phase cachev1.BackupPhase, done *metav1.Time, deleting bool) cachev1.RedisClusterBackup {
		b := cachev1.RedisClusterBackup{ObjectMeta: metav1.ObjectMeta{Name: name}}
		b.Status.Phase, b.Status.CompletionTime = phase, done
		if deleting {
			b.DeletionTimestamp = at(0)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		list []cachev1.RedisClusterBackup
		want string
	}{
		{"none", nil, ""},
		{"only failed and running", []cachev1.RedisClusterBackup{backup("a", cachev1.BackupFailed, at(3), false), backup("b", cachev1.BackupRunning, nil, false)}, ""},
		{"the latest completion", []cachev1.RedisClusterBackup{backup("a", cachev1.BackupComplete, at(2), false), backup("b", cachev1.BackupComplete, at(3), false), backup("c", cachev1.BackupComplete, at(1), false)}, "b"},
		{"not one being deleted", []cachev1.RedisClusterBackup{backup("a", cachev1.BackupComplete, at(2), false), backup("b", cachev1.BackupComplete, at(3), true)}, "a"},
		{"equal times: the greater name", []cachev1.RedisClusterBackup{backup("a", cachev1.BackupComplete, at(2), false), backup("b", cachev1.BackupComplete, at(2), false)}, "b"},
		{"complete without a time is not trusted", []cachev1.RedisClusterBackup{backup("a", cachev1.BackupComplete, nil, false)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rediscluster.NewestComplete(tc.list)
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.want {
				t.Fatalf("chose %q, want %q", name, tc.want)
			}
		})
	}
}
