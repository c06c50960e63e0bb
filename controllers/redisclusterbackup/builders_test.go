package redisclusterbackup_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/redisclusterbackup"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/jobspec"
)

func TestDesiredJob(t *testing.T) {
	tlsCluster := builders.RedisCluster("team", "cache").TLS("cache-tls").Obj()
	plain := builders.RedisCluster("team", "cache").Obj()
	password := jobspec.Mount{Path: "/var/run/secrets/redis-backup", Source: "secret/cache-backup", Files: map[string]string{"password": "password"}, ReadOnly: true}
	creds := jobspec.Mount{Path: "/var/run/secrets/s3-credentials", Source: "secret/s3-credentials",
		Files: map[string]string{"accessKeyID": "accessKeyID", "secretAccessKey": "secretAccessKey"}, ReadOnly: true}
	for _, tc := range []struct {
		name     string
		backup   *cachev1.RedisClusterBackup
		cluster  *cachev1.RedisCluster
		mounts   map[string]jobspec.Mount
		location string
		args     []string
	}{
		{
			name: "object store with its CA in a ConfigMap",
			backup: builders.RedisClusterBackup("team", "nightly", "cache").S3(func(s *cachev1.S3Destination) {
				s.CABundle = &cachev1.CABundleSource{ConfigMapKeyRef: &cachev1.KeyRef{Name: "store-ca", Key: "ca.crt"}}
			}).Obj(),
			cluster: plain,
			mounts: map[string]jobspec.Mount{"redis-password": password, "s3-credentials": creds,
				"s3-ca": {Path: "/var/run/secrets/s3-ca", Source: "configmap/store-ca", Files: map[string]string{"ca.crt": "ca.crt"}, ReadOnly: true}},
			location: "s3://backups/team/cache/nightly/",
			args:     []string{"--s3-endpoint=https://s3.example.com", "--s3-bucket=backups"},
		},
		{
			name: "object store with its CA in a Secret, cluster with TLS",
			backup: builders.RedisClusterBackup("team", "nightly", "cache").S3(func(s *cachev1.S3Destination) {
				s.Prefix = "redis"
				s.CABundle = &cachev1.CABundleSource{SecretKeyRef: &cachev1.KeyRef{Name: "store-tls", Key: "root.pem"}}
			}).Obj(),
			cluster: tlsCluster,
			mounts: map[string]jobspec.Mount{"redis-password": password, "s3-credentials": creds,
				"redis-ca": {Path: "/var/run/secrets/redis-ca", Source: "secret/cache-tls", Files: map[string]string{"ca.crt": "ca.crt"}, ReadOnly: true},
				"s3-ca":    {Path: "/var/run/secrets/s3-ca", Source: "secret/store-tls", Files: map[string]string{"root.pem": "ca.crt"}, ReadOnly: true}},
			location: "s3://backups/redis/team/cache/nightly/",
			args:     []string{"--redis-ca-file=/var/run/secrets/redis-ca/ca.crt", "--s3-ca-file=/var/run/secrets/s3-ca/ca.crt", "--s3-prefix=redis"},
		},
		{
			name: "insecure object store",
			backup: builders.RedisClusterBackup("team", "nightly", "cache").S3(func(s *cachev1.S3Destination) {
				s.Endpoint, s.Insecure = "http://minio:9000", true
			}).Obj(),
			cluster:  plain,
			mounts:   map[string]jobspec.Mount{"redis-password": password, "s3-credentials": creds},
			location: "s3://backups/team/cache/nightly/",
			args:     []string{"--s3-endpoint=http://minio:9000", "--s3-insecure=true"},
		},
		{
			name: "object store, encrypted",
			backup: func() *cachev1.RedisClusterBackup {
				b := builders.RedisClusterBackup("team", "nightly", "cache").S3(func(*cachev1.S3Destination) {}).Obj()
				b.Spec.Destination.Encryption = &cachev1.BackupEncryption{KeySecretRef: cachev1.KeyRef{Name: "backup-key", Key: "aes"}}
				return b
			}(),
			cluster: plain,
			mounts: map[string]jobspec.Mount{"redis-password": password, "s3-credentials": creds,
				"encryption-key": {Path: "/var/run/secrets/backup-encryption", Source: "secret/backup-key", Files: map[string]string{"aes": "key"}, ReadOnly: true}},
			location: "s3://backups/team/cache/nightly/",
			args:     []string{"--encryption-key-file=/var/run/secrets/backup-encryption/key"},
		},
		{
			name:     "volume",
			backup:   builders.RedisClusterBackup("team", "nightly", "cache").PVC("backups").Obj(),
			cluster:  plain,
			mounts:   map[string]jobspec.Mount{"redis-password": password, "backup": {Path: "/backup", Source: "pvc/backups", Files: map[string]string{}}},
			location: "pvc://backups/team/cache/nightly/",
			args:     []string{"--dir=/backup"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := redisclusterbackup.Inputs{Cluster: tc.cluster}
			job := redisclusterbackup.DesiredJob(tc.backup, in, "registry.example/mo:v1")
			g.Expect(job.Name).To(Equal("nightly"))
			g.Expect(*job.Spec.BackoffLimit).To(BeNumerically("<=", 1))
			g.Expect(*job.Spec.ActiveDeadlineSeconds).To(BeNumerically(">", 0))
			g.Expect(job.Spec.PodFailurePolicy.Rules[0].OnExitCodes.Values).To(Equal([]int32{2}), "bad input is not retried")
			pod := job.Spec.Template.Spec
			g.Expect(pod.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
			g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
			g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
			g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			ctr := pod.Containers[0]
			g.Expect(*ctr.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*ctr.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
			g.Expect(ctr.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(ctr.Resources.Limits).To(HaveKey(corev1.ResourceMemory))
			g.Expect(ctr.Image).To(Equal("registry.example/mo:v1"))
			// No secret in the environment: every one is a file.
			g.Expect(ctr.Env).To(BeEmpty())
			g.Expect(ctr.EnvFrom).To(BeEmpty())
			g.Expect(ctr.TerminationMessagePath).To(Equal(corev1.TerminationMessagePathDefault))
			g.Expect(jobspec.Mounts(g, pod)).To(Equal(tc.mounts))

			// The arguments are the subcommand's command line, and name
			// files, never their contents.
			g.Expect(ctr.Args[0]).To(Equal("backup"))
			g.Expect(ctr.Args).To(ContainElements(tc.args))
			var got backupjob.Config
			fs := pflag.NewFlagSet("backup", pflag.ContinueOnError)
			got.Bind(fs)
			g.Expect(fs.Parse(ctr.Args[1:])).To(Succeed())
			g.Expect(got).To(Equal(redisclusterbackup.Config(tc.backup, in)))
			g.Expect(got.Validate()).To(Succeed())
			g.Expect(got.Seeds).To(Equal([]string{"cache.team.svc:6379", "cache-headless.team.svc:6379"}))
			g.Expect(got.Path).To(Equal("team/cache/nightly"))
			g.Expect(got.PasswordFile).To(Equal("/var/run/secrets/redis-backup/password"))
			g.Expect(got.TerminationLog).To(Equal(ctr.TerminationMessagePath))
			g.Expect(got.Timeout.Seconds()).To(BeNumerically("<", *job.Spec.ActiveDeadlineSeconds), "the run reports before the Job's deadline")

			g.Expect(redisclusterbackup.Location(tc.backup)).To(Equal(tc.location))

			// The cleanup Job: the same pod with the destination's volumes
			// only (the cluster may be gone), as `manager backup-delete`.
			cleanup := redisclusterbackup.DesiredCleanupJob(tc.backup, "registry.example/mo:v1")
			g.Expect(cleanup.Name).NotTo(Equal(job.Name))
			g.Expect(cleanup.Labels).To(Equal(job.Labels))
			g.Expect(*cleanup.Spec.BackoffLimit).To(BeNumerically(">", 0), "a store that blinked is retried")
			g.Expect(*cleanup.Spec.ActiveDeadlineSeconds).To(BeNumerically(">", 0))
			cpod := cleanup.Spec.Template.Spec
			g.Expect(cpod.SecurityContext).To(Equal(pod.SecurityContext))
			g.Expect(*cpod.AutomountServiceAccountToken).To(BeFalse())
			g.Expect(cpod.Containers[0].SecurityContext).To(Equal(ctr.SecurityContext))
			g.Expect(cpod.Containers[0].Env).To(BeEmpty())
			destination := map[string]jobspec.Mount{}
			for name, m := range tc.mounts {
				if name != "redis-password" && name != "redis-ca" && name != "encryption-key" {
					destination[name] = m
				}
			}
			g.Expect(jobspec.Mounts(g, cpod)).To(Equal(destination))
			cargs := cpod.Containers[0].Args
			g.Expect(cargs[0]).To(Equal("backup-delete"))
			g.Expect(cargs).NotTo(ContainElement(HavePrefix("--encryption-key-file")), "a cleanup reads no file: no key")
			var del backupjob.DeleteConfig
			fs = pflag.NewFlagSet("backup-delete", pflag.ContinueOnError)
			del.Bind(fs)
			g.Expect(fs.Parse(cargs[1:])).To(Succeed())
			g.Expect(del).To(Equal(redisclusterbackup.DeleteConfig(tc.backup)))
			g.Expect(del.Validate()).To(Succeed())
			g.Expect(del.Path).To(Equal(got.Path))
			g.Expect(del.Store).To(Equal(got.Store), "the cleanup names the destination as the backup does")
			g.Expect(del.Timeout.Seconds()).To(BeNumerically("<", *cleanup.Spec.ActiveDeadlineSeconds))
		})
	}
}

// The cleanup Job's name is a valid label value, whatever the backup's
// name, and never the Job name of a backup named like it.
func TestCleanupJobName(t *testing.T) {
	g := NewWithT(t)
	long := builders.RedisClusterBackup("team", strings.Repeat("a", 63), "cache").Obj()
	g.Expect(len(redisclusterbackup.CleanupJobName(long))).To(BeNumerically("<=", 63))
	short := builders.RedisClusterBackup("team", "nightly", "cache").Obj()
	name := redisclusterbackup.CleanupJobName(short)
	g.Expect(name).To(HavePrefix("nightly-delete-"))
	sibling := builders.RedisClusterBackup("team", "nightly-delete", "cache").Obj()
	g.Expect(redisclusterbackup.JobName(sibling)).NotTo(Equal(name), "a backup named nightly-delete keeps its own Job")
}
