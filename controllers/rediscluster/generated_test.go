package rediscluster_test

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// controlledBy makes s controlled by the object apiVersion/kind name uid.
func controlledBy(s *corev1.Secret, apiVersion, kind, name, uid string) *corev1.Secret {
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}}
	return s
}

// generatedBy makes s a Secret the operator generated for the RedisCluster name.
func generatedBy(s *corev1.Secret, name, uid string) *corev1.Secret {
	return controlledBy(s, cachev1.GroupVersion.String(), "RedisCluster", name, uid)
}

func TestRefuseGenerated(t *testing.T) {
	own := rc(1, 0) // named rc
	own.UID = "uid-rc"
	for _, tc := range []struct {
		name   string
		secret *corev1.Secret
		field  string
		// refused are substrings of the message; none when it is kept.
		refused []string
	}{
		{name: "a user's Secret", secret: secret("mine", nil), field: rediscluster.PasswordSecretField},
		{name: "a user's Secret owned without being controlled", secret: func() *corev1.Secret {
			s := generatedBy(secret("mine", nil), "a", "uid-a")
			s.OwnerReferences[0].Controller = nil
			return s
		}(), field: rediscluster.PasswordSecretField},
		{name: "controlled by another kind", secret: controlledBy(secret("cert", nil), "cert-manager.io/v1", "Certificate", "c", "uid-c"), field: rediscluster.TLSSecretField},
		{name: "controlled by a RedisCluster of another group", secret: controlledBy(secret("x", nil), "example.org/v1", "RedisCluster", "a", "uid-a"), field: rediscluster.PasswordSecretField},
		{name: "its own <name>-auth as its password", secret: generatedBy(secret("rc-auth", nil), "rc", "uid-rc"), field: rediscluster.PasswordSecretField},

		{name: "another cluster's <name>-auth", secret: generatedBy(secret("a-auth", nil), "a", "uid-a"), field: rediscluster.PasswordSecretField,
			refused: []string{"Secret a-auth belongs to RedisCluster a", "spec.auth.passwordSecret cannot name it", "name a Secret you created"}},
		{name: "another cluster's <name>-operator", secret: generatedBy(secret("a-operator", nil), "a", "uid-a"), field: rediscluster.PasswordSecretField,
			refused: []string{"Secret a-operator belongs to RedisCluster a"}},
		{name: "another cluster's <name>-acl as the certificate", secret: generatedBy(secret("a-acl", nil), "a", "uid-a"), field: rediscluster.TLSSecretField,
			refused: []string{"Secret a-acl belongs to RedisCluster a", "spec.tls.secretName cannot name it"}},
		{name: "a Secret of an earlier cluster of the same name", secret: generatedBy(secret("rc-auth", nil), "rc", "uid-before"), field: rediscluster.PasswordSecretField,
			refused: []string{"Secret rc-auth belongs to RedisCluster rc"}},
		{name: "its own <name>-acl as its password", secret: generatedBy(secret("rc-acl", nil), "rc", "uid-rc"), field: rediscluster.PasswordSecretField,
			refused: []string{"Secret rc-acl belongs to this RedisCluster (rc)"}},
		{name: "its own <name>-auth as the certificate", secret: generatedBy(secret("rc-auth", nil), "rc", "uid-rc"), field: rediscluster.TLSSecretField,
			refused: []string{"Secret rc-auth belongs to this RedisCluster (rc)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := rediscluster.RefuseGenerated(own, tc.secret, tc.field)
			if tc.refused == nil {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(reasonOf(g, err)).To(Equal(cachev1.ReasonSecretGenerated))
			for _, s := range tc.refused {
				g.Expect(err.Error()).To(ContainSubstring(s))
			}
		})
	}
}

func TestRecoverablePassword(t *testing.T) {
	own := rc(1, 0)
	own.UID = "uid-rc"
	users := func(password string) map[string]string {
		return map[string]string{rediscluster.ACLKey: redisadmin.Access{Passwords: []string{password}, OperatorPassword: "op"}.ConfigFile()}
	}
	for _, tc := range []struct {
		name       string
		acl        *corev1.Secret
		want       string
		found      bool
		wantReason string
	}{
		{name: "its own users file", acl: generatedBy(secret("rc-acl", users("current")), "rc", "uid-rc"), want: "current", found: true},
		{name: "no users file: a new cluster", acl: &corev1.Secret{}},
		{name: "a users file without authentication",
			acl: generatedBy(secret("rc-acl", map[string]string{rediscluster.ACLKey: redisadmin.Access{OperatorPassword: "op"}.ConfigFile()}), "rc", "uid-rc")},
		{name: "a users file of an earlier cluster of the same name", acl: generatedBy(secret("rc-acl", users("theirs")), "rc", "uid-before")},
		{name: "a users file nobody controls", acl: secret("rc-acl", users("anyone's"))},
		{name: "an unreadable masterauth", acl: generatedBy(secret("rc-acl", map[string]string{rediscluster.ACLKey: "masterauth \"secret-value\n"}), "rc", "uid-rc"),
			wantReason: cachev1.ReasonPasswordUnrecoverable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, found, err := rediscluster.RecoverablePassword(own, tc.acl)
			if tc.wantReason != "" {
				g.Expect(reasonOf(g, err)).To(Equal(tc.wantReason))
				g.Expect(err.Error()).To(ContainSubstring("rc-auth"))
				g.Expect(err.Error()).NotTo(ContainSubstring("secret-value"), "the message holds no password")
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(Equal(tc.found))
			g.Expect(got).To(Equal(tc.want), fmt.Sprintf("from %v", tc.acl.Data))
		})
	}
}
