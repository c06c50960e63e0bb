package backupinputs_test

import (
	"testing"

	. "github.com/onsi/gomega"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupinputs"
)

// References name every Secret and ConfigMap a Job of the destination
// mounts, which the controllers' watches wake waiting Jobs with.
func TestReferences(t *testing.T) {
	s3 := func(ca *cachev1.CABundleSource) *cachev1.S3Destination {
		return &cachev1.S3Destination{Endpoint: "https://s3.example.com", Bucket: "b", CredentialsSecret: "creds", CABundle: ca}
	}
	key := &cachev1.BackupEncryption{KeySecretRef: cachev1.KeyRef{Name: "aes", Key: "key"}}
	for _, tc := range []struct {
		name string
		dest cachev1.BackupDestination
		want []string
	}{
		{"a store", cachev1.BackupDestination{S3: s3(nil)}, []string{"Secret/creds"}},
		{"its CA in a ConfigMap", cachev1.BackupDestination{S3: s3(&cachev1.CABundleSource{ConfigMapKeyRef: &cachev1.KeyRef{Name: "ca", Key: "ca.crt"}})},
			[]string{"Secret/creds", "ConfigMap/ca"}},
		{"its CA in a Secret, encrypted", cachev1.BackupDestination{S3: s3(&cachev1.CABundleSource{SecretKeyRef: &cachev1.KeyRef{Name: "ca", Key: "ca.crt"}}), Encryption: key},
			[]string{"Secret/creds", "Secret/ca", "Secret/aes"}},
		{"a volume, encrypted", cachev1.BackupDestination{PersistentVolumeClaim: &cachev1.PVCDestination{ClaimName: "v"}, Encryption: key}, []string{"Secret/aes"}},
		{"a volume", cachev1.BackupDestination{PersistentVolumeClaim: &cachev1.PVCDestination{ClaimName: "v"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(backupinputs.References(tc.dest)).To(Equal(tc.want))
		})
	}
}
