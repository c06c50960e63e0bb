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

func backup(change func(*builders.RedisClusterBackupWrapper)) *cachev1.RedisClusterBackup {
	w := builders.RedisClusterBackup("", "", "cache")
	change(w)
	return w.Obj()
}

func backupS3(change func(*cachev1.S3Destination)) *cachev1.RedisClusterBackup {
	return backup(func(w *builders.RedisClusterBackupWrapper) { w.S3(change) })
}

func backupNamed(name string) *cachev1.RedisClusterBackup {
	return backup(func(w *builders.RedisClusterBackupWrapper) { w.Name = name })
}

const (
	httpsOnly  = "spec.destination.s3.endpoint must start with https://; an http:// endpoint needs insecure: true"
	oneOfDest  = "spec.destination must set exactly one of s3 or persistentVolumeClaim"
	oneOfCA    = "must set exactly one of configMapKeyRef or secretKeyRef"
	badPattern = "should match"
)

func TestRedisClusterBackupBounds(t *testing.T) {
	ca := &cachev1.CABundleSource{ConfigMapKeyRef: &cachev1.KeyRef{Name: "store-ca", Key: "ca.crt"}}
	expectBounds(t, []bound{
		{name: "an https endpoint", obj: backupS3(func(s *cachev1.S3Destination) {})},
		{name: "an https endpoint with a port and a slash", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint = "https://10.0.0.1:8333/" })},
		{name: "an IPv6 endpoint", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint = "https://[fd00::1]:9000" })},
		{name: "an http endpoint", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint = "http://minio:9000" }), refused: httpsOnly},
		{name: "an http endpoint, insecure", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint, s.Insecure = "http://minio:9000", true })},
		{name: "an endpoint with a path", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint = "https://s3.example.com/other-bucket" }), refused: badPattern},
		{name: "an endpoint with credentials", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint = "https://user:pw@s3.example.com" }), refused: badPattern},
		{name: "an endpoint without a scheme", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint = "s3.example.com:443" }), refused: badPattern},
		{name: "an endpoint of 281 characters", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint = "https://" + strings.Repeat("a", 273) }), refused: tooLong + " 280"},
		{name: "a CA bundle for https", obj: backupS3(func(s *cachev1.S3Destination) { s.CABundle = ca })},
		{name: "a CA bundle for http", obj: backupS3(func(s *cachev1.S3Destination) { s.Endpoint, s.Insecure, s.CABundle = "http://minio:9000", true, ca }), refused: "caBundle applies to an https:// endpoint only"},
		{name: "a CA bundle in both", obj: backupS3(func(s *cachev1.S3Destination) {
			s.CABundle = &cachev1.CABundleSource{ConfigMapKeyRef: ca.ConfigMapKeyRef, SecretKeyRef: &cachev1.KeyRef{Name: "s", Key: "ca.crt"}}
		}), refused: oneOfCA},
		{name: "a CA bundle in neither", obj: backupS3(func(s *cachev1.S3Destination) { s.CABundle = &cachev1.CABundleSource{} }), refused: oneOfCA},

		{name: "a bucket of 63 characters", obj: backupS3(func(s *cachev1.S3Destination) { s.Bucket = strings.Repeat("b", 63) })},
		{name: "a bucket of 64 characters", obj: backupS3(func(s *cachev1.S3Destination) { s.Bucket = strings.Repeat("b", 64) }), refused: tooLong + " 63"},
		{name: "a bucket with a slash", obj: backupS3(func(s *cachev1.S3Destination) { s.Bucket = "a/b" }), refused: badPattern},
		{name: "a prefix", obj: backupS3(func(s *cachev1.S3Destination) { s.Prefix = "redis-backups_2026.v1" })},
		{name: "a prefix of two folders", obj: backupS3(func(s *cachev1.S3Destination) { s.Prefix = "team/other-namespace" }), refused: badPattern},
		{name: "a prefix that climbs", obj: backupS3(func(s *cachev1.S3Destination) { s.Prefix = ".." }), refused: badPattern},
		{name: "a prefix of 129 characters", obj: backupS3(func(s *cachev1.S3Destination) { s.Prefix = strings.Repeat("p", 129) }), refused: tooLong + " 128"},
		{name: "a region", obj: backupS3(func(s *cachev1.S3Destination) { s.Region = "eu-west-1" })},
		{name: "a region with a space", obj: backupS3(func(s *cachev1.S3Destination) { s.Region = "eu west" }), refused: badPattern},
		{name: "no credentials", obj: backupS3(func(s *cachev1.S3Destination) { s.CredentialsSecret = "" }), refused: "spec.destination.s3.credentialsSecret"},
		{name: "credentials of 254 characters", obj: backupS3(func(s *cachev1.S3Destination) { s.CredentialsSecret = strings.Repeat("c", 254) }), refused: tooLong + " 253"},

		{name: "a volume", obj: backup(func(w *builders.RedisClusterBackupWrapper) { w.PVC("backups") })},
		{name: "a volume and a bucket", obj: backup(func(w *builders.RedisClusterBackupWrapper) {
			w.PVC("backups").S3(func(s *cachev1.S3Destination) { *s = *builders.RedisClusterBackup("", "", "c").Spec.Destination.S3 })
		}), refused: oneOfDest},
		{name: "no destination", obj: backup(func(w *builders.RedisClusterBackupWrapper) { w.Spec.Destination = cachev1.BackupDestination{} }), refused: oneOfDest},
		{name: "a claim name with capitals", obj: backup(func(w *builders.RedisClusterBackupWrapper) { w.PVC("Backups") }), refused: badPattern},

		{name: "a cluster name of 53 characters", obj: backup(func(w *builders.RedisClusterBackupWrapper) { w.Spec.ClusterName = strings.Repeat("c", 53) }), refused: tooLong + " 52"},
		{name: "a cluster name with a dot", obj: backup(func(w *builders.RedisClusterBackupWrapper) { w.Spec.ClusterName = "a.b" }), refused: badPattern},
		{name: "a name of 63 characters", obj: backupNamed(strings.Repeat("n", 63))},
		{name: "a name of 64 characters", obj: backupNamed(strings.Repeat("n", 64)), refused: "the name must have at most 63 characters"},
		{name: "a name with a dot", obj: backupNamed("nightly.1"), refused: "the name must consist of lower-case letters, digits and '-'"},
	})
}

// A backup is taken once: its spec cannot change.
func TestRedisClusterBackupSpecIsImmutable(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	b := builders.RedisClusterBackup(env.Namespace(t), "once", "cache").Obj()
	g.Expect(env.Client.Create(ctx, b)).To(Succeed())
	b.Spec.Destination.S3.Bucket = "elsewhere"
	err := env.Client.Update(ctx, b)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec is immutable: a backup is taken once"))
}
