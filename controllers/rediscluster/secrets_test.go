package rediscluster_test

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// reasonOf is the Ready reason an invalid-Secret error carries.
func reasonOf(g Gomega, err error) string {
	var invalid *rediscluster.InvalidSecretError
	g.ExpectWithOffset(1, errors.As(err, &invalid)).To(BeTrue(), "error %T is an InvalidSecretError", err)
	return invalid.Reason
}

func secret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestSecretsNames(t *testing.T) {
	g := NewWithT(t)
	c := rc(3, 0)
	g.Expect(rediscluster.AuthSecretName(c)).To(Equal("rc-auth"))
	g.Expect(rediscluster.OperatorSecretName(c)).To(Equal("rc-operator"))
	g.Expect(rediscluster.ACLSecretName(c)).To(Equal("rc-acl"))
	g.Expect(rediscluster.BackupSecretName(c)).To(Equal("rc-backup"))
}

func TestPasswordRef(t *testing.T) {
	for _, tc := range []struct {
		name   string
		auth   *cachev1.AuthSpec
		want   cachev1.SecretKeyRef
		wantOK bool
	}{
		{name: "no auth spec: generated secret", want: cachev1.SecretKeyRef{Name: "rc-auth", Key: "password"}, wantOK: true},
		{name: "empty auth spec: generated secret", auth: &cachev1.AuthSpec{},
			want: cachev1.SecretKeyRef{Name: "rc-auth", Key: "password"}, wantOK: true},
		{name: "previous key alone keeps the generated secret", auth: &cachev1.AuthSpec{PreviousPasswordKey: "old"},
			want: cachev1.SecretKeyRef{Name: "rc-auth", Key: "password"}, wantOK: true},
		{name: "spec password secret", auth: &cachev1.AuthSpec{PasswordSecret: &cachev1.SecretKeyRef{Name: "mine", Key: "pw"}},
			want: cachev1.SecretKeyRef{Name: "mine", Key: "pw"}, wantOK: true},
		{name: "disabled", auth: &cachev1.AuthSpec{Disabled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(3, 0)
			c.Spec.Auth = tc.auth
			ref, ok := rediscluster.PasswordRef(c)
			g.Expect(ok).To(Equal(tc.wantOK))
			g.Expect(ref).To(Equal(tc.want))
		})
	}
}

func TestClientPasswords(t *testing.T) {
	for _, tc := range []struct {
		name        string
		data        map[string]string
		key         string
		previousKey string
		want        []string
		// wantReason and wantMessage (substrings) describe the error.
		wantReason  string
		wantMessage []string
	}{
		{name: "current only", data: map[string]string{"password": "current", "other": "ignored"}, key: "password",
			want: []string{"current"}},
		{name: "current then previous", data: map[string]string{"new": "n3w", "old": "0ld", "other": "ignored"}, key: "new", previousKey: "old",
			want: []string{"n3w", "0ld"}},
		{name: "bytes are kept as they are", data: map[string]string{"pw": " p w\n"}, key: "pw",
			want: []string{" p w\n"}},
		{name: "missing current key", data: map[string]string{"other": "x"}, key: "pw",
			wantReason: cachev1.ReasonSecretKeyMissing, wantMessage: []string{"Secret mine", "key pw"}},
		{name: "missing previous key", data: map[string]string{"pw": "x"}, key: "pw", previousKey: "old",
			wantReason: cachev1.ReasonSecretKeyMissing, wantMessage: []string{"Secret mine", "key old"}},
		{name: "empty current password", data: map[string]string{"pw": ""}, key: "pw",
			wantReason: cachev1.ReasonPasswordEmpty, wantMessage: []string{"Secret mine", "key pw", "empty"}},
		{name: "empty previous password", data: map[string]string{"pw": "x", "old": ""}, key: "pw", previousKey: "old",
			wantReason: cachev1.ReasonPasswordEmpty, wantMessage: []string{"Secret mine", "key old", "empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := secret("mine", tc.data)
			got, err := rediscluster.ClientPasswords(s, cachev1.SecretKeyRef{Name: "mine", Key: tc.key}, tc.previousKey)
			if tc.wantReason == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got).To(Equal(tc.want))
				return
			}
			g.Expect(err).To(HaveOccurred())
			g.Expect(got).To(BeEmpty())
			for _, m := range tc.wantMessage {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
			g.Expect(reasonOf(g, err)).To(Equal(tc.wantReason))
			// An error never shows a password.
			for _, v := range tc.data {
				if v != "" {
					g.Expect(err.Error()).NotTo(ContainSubstring(v))
				}
			}
		})
	}
}

func TestParseTLSSecret(t *testing.T) {
	ca := redistest.NewCA(t)
	cert := ca.Issue(t)
	other := ca.Issue(t)
	otherCA := redistest.NewCA(t)
	foreign := otherCA.Issue(t)
	garbage := "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"

	for _, tc := range []struct {
		name string
		data map[string]string
		// wantMessage are substrings of the error; none means valid.
		wantMessage []string
	}{
		{name: "valid", data: map[string]string{"tls.crt": string(cert.Cert), "tls.key": string(cert.Key), "ca.crt": string(cert.CA)}},
		{name: "ca bundle with an extra CA", data: map[string]string{"tls.crt": string(cert.Cert), "tls.key": string(cert.Key),
			"ca.crt": string(otherCA.PEM) + string(cert.CA)}},
		{name: "missing ca.crt", data: map[string]string{"tls.crt": string(cert.Cert), "tls.key": string(cert.Key)},
			wantMessage: []string{"ca.crt"}},
		{name: "missing tls.key", data: map[string]string{"tls.crt": string(cert.Cert), "ca.crt": string(cert.CA)},
			wantMessage: []string{"tls.key"}},
		{name: "missing tls.crt", data: map[string]string{"tls.key": string(cert.Key), "ca.crt": string(cert.CA)},
			wantMessage: []string{"tls.crt"}},
		{name: "empty tls.key", data: map[string]string{"tls.crt": string(cert.Cert), "tls.key": "", "ca.crt": string(cert.CA)},
			wantMessage: []string{"tls.key"}},
		{name: "key of another certificate", data: map[string]string{"tls.crt": string(cert.Cert), "tls.key": string(other.Key), "ca.crt": string(cert.CA)},
			wantMessage: []string{"tls.crt", "tls.key"}},
		{name: "ca.crt did not sign tls.crt", data: map[string]string{"tls.crt": string(foreign.Cert), "tls.key": string(foreign.Key), "ca.crt": string(cert.CA)},
			wantMessage: []string{"tls.crt", "ca.crt", "not signed"}},
		{name: "garbage tls.crt", data: map[string]string{"tls.crt": garbage, "tls.key": string(cert.Key), "ca.crt": string(cert.CA)},
			wantMessage: []string{"tls.crt"}},
		{name: "tls.crt not PEM", data: map[string]string{"tls.crt": "hello", "tls.key": string(cert.Key), "ca.crt": string(cert.CA)},
			wantMessage: []string{"tls.crt"}},
		{name: "garbage ca.crt", data: map[string]string{"tls.crt": string(cert.Cert), "tls.key": string(cert.Key), "ca.crt": "not pem"},
			wantMessage: []string{"ca.crt"}},
		{name: "undecodable ca.crt", data: map[string]string{"tls.crt": string(cert.Cert), "tls.key": string(cert.Key), "ca.crt": garbage},
			wantMessage: []string{"ca.crt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := rediscluster.ParseTLSSecret(secret("rc-cert", tc.data))
			if len(tc.wantMessage) > 0 {
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).To(ContainSubstring("rc-cert"), "the message names the Secret")
				for _, m := range tc.wantMessage {
					g.Expect(err.Error()).To(ContainSubstring(m))
				}
				g.Expect(reasonOf(g, err)).To(Equal(cachev1.ReasonTLSSecretInvalid))
				g.Expect(got.Certificate).To(BeEmpty())
				g.Expect(got.RootCAs).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Certificate).To(Equal([]byte(tc.data["tls.crt"])))
			// The roots verify the nodes' certificate, and not another CA's.
			g.Expect(got.RootCAs).NotTo(BeNil())
			g.Expect(verify(t, cert.Cert, got.RootCAs)).To(Succeed())
			if !strings.Contains(tc.data["ca.crt"], string(otherCA.PEM)) {
				g.Expect(verify(t, foreign.Cert, got.RootCAs)).NotTo(Succeed())
			}
		})
	}
}

func verify(t *testing.T, certPEM []byte, roots *x509.CertPool) error {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("not PEM")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}

func TestGeneratePassword(t *testing.T) {
	g := NewWithT(t)
	alnum := regexp.MustCompile(`^[A-Za-z0-9]+$`)
	seen := map[string]bool{}
	for range 20 {
		p, err := rediscluster.GeneratePassword()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(len(p)).To(BeNumerically(">=", 32))
		g.Expect(p).To(MatchRegexp(alnum.String()))
		g.Expect(seen).NotTo(HaveKey(p), "two calls gave the same password")
		seen[p] = true
	}
}

func TestSecretsDesiredPasswordSecret(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing map[string][]byte
		want     map[string][]byte
	}{
		{name: "new", want: map[string][]byte{"password": []byte("n3w")}},
		{name: "keeps the other keys", existing: map[string][]byte{"password": []byte("old"), "previous": []byte("prev"), "note": []byte("x")},
			want: map[string][]byte{"password": []byte("n3w"), "previous": []byte("prev"), "note": []byte("x")}},
		{name: "same password", existing: map[string][]byte{"password": []byte("n3w")},
			want: map[string][]byte{"password": []byte("n3w")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(3, 0)
			var before map[string][]byte
			if tc.existing != nil {
				before = map[string][]byte{}
				for k, v := range tc.existing {
					before[k] = append([]byte(nil), v...)
				}
			}
			s := rediscluster.DesiredPasswordSecret(c, "rc-auth", "n3w", tc.existing)
			g.Expect(s.Name).To(Equal("rc-auth"))
			g.Expect(s.Namespace).To(Equal("ns"))
			g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
			g.Expect(s.Data).To(Equal(tc.want))
			g.Expect(s.StringData).To(BeEmpty())
			g.Expect(s.Labels).To(HaveKeyWithValue("multi-operator.dev/watch", "true"))
			g.Expect(s.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(s.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", "rc"))
			// The caller's data (the existing Secret's) is left alone.
			g.Expect(tc.existing).To(Equal(before))
		})
	}
}

func TestSecretsDesiredACLSecret(t *testing.T) {
	operator, err := rediscluster.GeneratePassword()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		passwords  []string
		masterauth string // the expected masterauth line, if any
	}{
		{name: "generated password", passwords: []string{"Cl1entPassw0rdCl1entPassw0rd1234"},
			masterauth: `masterauth "Cl1entPassw0rdCl1entPassw0rd1234"`},
		{name: "rotation", passwords: []string{"currentSecretValue", "previousSecretValue"},
			masterauth: `masterauth "currentSecretValue"`},
		{name: "password with quotes and spaces", passwords: []string{`my "pass" word\x`},
			masterauth: `masterauth "my \"pass\" word\\x"`},
		{name: "auth disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := rc(3, 0)
			s := rediscluster.DesiredACLSecret(c, redisadmin.Access{Passwords: tc.passwords, OperatorPassword: operator})
			g.Expect(s.Name).To(Equal("rc-acl"))
			g.Expect(s.Namespace).To(Equal("ns"))
			g.Expect(s.Labels).To(HaveKeyWithValue("multi-operator.dev/watch", "true"))
			g.Expect(s.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
			g.Expect(s.Data).To(HaveKey("users.conf"))
			conf := string(s.Data["users.conf"])

			// Passwords are there as their hashes only.
			g.Expect(conf).To(ContainSubstring("#" + redisadmin.Hash(operator)))
			for _, p := range tc.passwords {
				g.Expect(conf).To(ContainSubstring("#" + redisadmin.Hash(p)))
			}
			var masterauth []string
			for _, line := range strings.Split(conf, "\n") {
				if strings.HasPrefix(line, "masterauth") {
					masterauth = append(masterauth, line)
					continue
				}
				g.Expect(line).NotTo(ContainSubstring(operator), "the operator password in plain text")
				for _, p := range tc.passwords {
					g.Expect(line).NotTo(ContainSubstring(p), "a client password in plain text")
				}
			}
			g.Expect(conf).To(MatchRegexp(`(?m)^user multi-operator .*#` + redisadmin.Hash(operator)))
			if tc.masterauth == "" {
				g.Expect(masterauth).To(BeEmpty())
				g.Expect(conf).To(MatchRegexp(`(?m)^user default .*\bnopass\b`))
				return
			}
			// Replicas present the current client password, quoted.
			g.Expect(masterauth).To(Equal([]string{tc.masterauth}))
			g.Expect(conf).NotTo(ContainSubstring("nopass"))
			g.Expect(conf).To(MatchRegexp(`(?m)^user default .*#` + redisadmin.Hash(tc.passwords[0])))
		})
	}
}

func TestBusSecretIsAClusterCAAndOneCertificateForEveryNode(t *testing.T) {
	g := NewWithT(t)
	c := rc(3, 1)
	now := time.Now()
	s, err := rediscluster.DesiredBusSecret(c, now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Name).To(Equal("rc-bus"))
	g.Expect(s.Labels).To(HaveKeyWithValue("multi-operator.dev/watch", "true"))
	g.Expect(s.Data).To(HaveLen(3), "tls.crt, tls.key and ca.crt; the CA's key is not kept")
	material, err := rediscluster.ParseTLSSecret(s)
	g.Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode(material.Certificate)
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	// Nodes are servers and clients of each other on the bus.
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		_, err := cert.Verify(x509.VerifyOptions{Roots: material.RootCAs, KeyUsages: []x509.ExtKeyUsage{usage}})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(cert.NotAfter).To(BeTemporally(">", now.AddDate(9, 0, 0)), "nothing renews it")

	// Every cluster gets a CA of its own: another's certificate fails.
	other, err := rediscluster.DesiredBusSecret(c, now)
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(other.Data["ca.crt"])).To(BeTrue())
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots})
	g.Expect(err).To(HaveOccurred())
}
