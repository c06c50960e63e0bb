package rediscluster

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/pki"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// Keys of the Secrets the operator makes, and of a TLS Secret.
const (
	// PasswordKey holds a password in <name>-auth, <name>-operator and the
	// service users' Secrets.
	PasswordKey = "password"
	// ExporterPasswordFileKey holds in <name>-exporter the exporter user's
	// password as redis_exporter's password file: a JSON object from the
	// address it scrapes to the password. It is the only key the exporter
	// container mounts.
	ExporterPasswordFileKey = "redis-passwords.json"
	// ACLKey holds the nodes' users and masterauth in <name>-acl.
	ACLKey = "users.conf"
	// KnownPasswordsKey holds in <name>-operator, as a JSON list, the
	// clients' passwords every node enforced when the access phase last
	// completed. Only the default user may change passwords, so the
	// operator logs in with one of these when the spec's have changed.
	KnownPasswordsKey = "default-user-passwords"
	// BusCopyCertKey, BusCopyKeyKey and BusCopyCAKey hold in
	// <name>-operator a copy of <name>-bus. Running nodes trust only the
	// CA they started with, and its key is not kept: a deleted <name>-bus
	// is made again from this copy, not from a new CA that would split
	// the cluster at the next restart.
	BusCopyCertKey = "bus-tls.crt"
	BusCopyKeyKey  = "bus-tls.key"
	BusCopyCAKey   = "bus-ca.crt"
	// TLSCertKey, TLSKeyKey and TLSCAKey are the keys cert-manager writes.
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
	TLSCAKey   = "ca.crt"
)

// passwordLength is the length of a generated password: 40 characters of
// 62 give 238 bits.
const passwordLength = 40

const passwordAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// GeneratePassword returns a password from a cryptographic source.
func GeneratePassword() (string, error) {
	out := make([]byte, passwordLength)
	limit := big.NewInt(int64(len(passwordAlphabet)))
	for i := range out {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", err
		}
		out[i] = passwordAlphabet[n.Int64()]
	}
	return string(out), nil
}

// AuthSecretName names the generated Secret with the clients' password.
func AuthSecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-auth" }

// OperatorSecretName names the Secret with the password of the operator's
// own ACL user. No pod mounts it.
func OperatorSecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-operator" }

// ExporterSecretName names the generated Secret with the password of the
// exporter's ACL user. Only the exporter container mounts it.
func ExporterSecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-exporter" }

// BackupSecretName names the generated Secret with the password of the
// backups' ACL user (redisadmin.BackupUser). Only backup Jobs mount it.
func BackupSecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-backup" }

// RestoreSecretName names the generated Secret with the password of the
// restore's ACL user (redisadmin.RestoreUser). It exists only while the
// cluster restores, and only the restore Job mounts it.
func RestoreSecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-restore" }

// ExporterPasswordFile is redis_exporter's password file for password:
// the same password for both addresses the exporter may scrape (plain and
// TLS), so that the file does not depend on spec.tls.
func ExporterPasswordFile(password string) []byte {
	file, _ := json.Marshal(map[string]string{ExporterRedisAddr(false): password, ExporterRedisAddr(true): password})
	return file
}

// ACLSecretName names the Secret with the users and masterauth every node
// reads at start.
func ACLSecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-acl" }

// BusSecretName names the generated Secret with the certificate every node
// presents on the cluster bus, and the CA that signed it alone.
func BusSecretName(rc *cachev1.RedisCluster) string { return rc.Name + "-bus" }

// busValidity is how long a bus certificate and its CA are valid. Nothing
// renews them, so it outlasts any cluster; the CA's key is not kept, so
// no other certificate can ever be signed by it.
const busValidity = 10 * 365 * 24 * time.Hour

// DesiredBusSecret is a new <name>-bus: a CA made for rc alone and one
// certificate for all its nodes, for servers and clients (nodes are both on
// the bus; Redis checks no host names there), valid from now.
func DesiredBusSecret(rc *cachev1.RedisCluster, now time.Time) (*corev1.Secret, error) {
	ca, err := pki.NewCA(fmt.Sprintf("%s/%s bus CA", rc.Namespace, rc.Name), now, busValidity)
	if err != nil {
		return nil, err
	}
	node, err := pki.Sign(ca, pki.Leaf{
		CommonName: fmt.Sprintf("%s/%s", rc.Namespace, rc.Name),
		Usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, now, busValidity)
	if err != nil {
		return nil, err
	}
	return desiredSecret(rc, BusSecretName(rc), map[string][]byte{
		TLSCertKey: node.CertPEM, TLSKeyKey: node.KeyPEM, TLSCAKey: ca.CertPEM,
	}), nil
}

// busCopyKeys pair the keys of <name>-bus with those of its copy.
var busCopyKeys = [][2]string{{TLSCertKey, BusCopyCertKey}, {TLSKeyKey, BusCopyKeyKey}, {TLSCAKey, BusCopyCAKey}}

// BusCopy returns the data of <name>-bus that operator, <name>-operator,
// keeps a copy of; ok is false when a key of it is missing or empty.
func BusCopy(operator *corev1.Secret) (data map[string][]byte, ok bool) {
	data = map[string][]byte{}
	for _, k := range busCopyKeys {
		v := operator.Data[k[1]]
		if len(v) == 0 {
			return nil, false
		}
		data[k[0]] = v
	}
	return data, true
}

// WithBusCopy returns operator, <name>-operator, holding a copy of bus,
// the data of <name>-bus.
func WithBusCopy(operator *corev1.Secret, bus map[string][]byte) *corev1.Secret {
	out := operator.DeepCopy()
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	for _, k := range busCopyKeys {
		out.Data[k[1]] = bus[k[0]]
	}
	return out
}

// authEnabled reports whether rc's nodes require a password.
func authEnabled(rc *cachev1.RedisCluster) bool {
	return rc.Spec.Auth == nil || !rc.Spec.Auth.Disabled
}

// PasswordRef is the Secret and key with the clients' password: spec's, or
// the generated <name>-auth. ok is false when authentication is off.
func PasswordRef(rc *cachev1.RedisCluster) (ref cachev1.SecretKeyRef, ok bool) {
	if !authEnabled(rc) {
		return cachev1.SecretKeyRef{}, false
	}
	if rc.Spec.Auth != nil && rc.Spec.Auth.PasswordSecret != nil {
		return *rc.Spec.Auth.PasswordSecret, true
	}
	return cachev1.SecretKeyRef{Name: AuthSecretName(rc), Key: PasswordKey}, true
}

// secretLabels are a generated Secret's labels: the children's, and the
// watch label under which the cache holds Secrets.
func secretLabels(rc *cachev1.RedisCluster) map[string]string {
	l := ownership.Labels(appName, rc.Name)
	l[ownership.LabelWatch] = ownership.WatchValue
	return l
}

// desiredSecret is an opaque Secret of rc named name with data.
func desiredSecret(rc *cachev1.RedisCluster, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rc.Namespace, Labels: secretLabels(rc)},
		Type:       corev1.SecretTypeOpaque,
		Data:       maps.Clone(data),
	}
}

// DesiredPasswordSecret is a generated Secret holding password under
// PasswordKey, plus what else the existing one holds: a user may add a
// previous password to <name>-auth. <name>-exporter also holds the
// password as the exporter's password file, which follows PasswordKey.
func DesiredPasswordSecret(rc *cachev1.RedisCluster, name, password string, existing map[string][]byte) *corev1.Secret {
	s := desiredSecret(rc, name, existing)
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[PasswordKey] = []byte(password)
	if name == ExporterSecretName(rc) {
		s.Data[ExporterPasswordFileKey] = ExporterPasswordFile(password)
	}
	return s
}

// DesiredACLSecret holds the part of the nodes' configuration with secrets.
func DesiredACLSecret(rc *cachev1.RedisCluster, access redisadmin.Access) *corev1.Secret {
	return desiredSecret(rc, ACLSecretName(rc), map[string][]byte{ACLKey: []byte(access.ConfigFile())})
}

// InvalidSecretError is bad input in a Secret the cluster needs: it is
// reported as Ready=False with Reason, and nothing is changed.
type InvalidSecretError struct {
	// Reason is the Ready condition's reason, a constant of apis/cache/v1.
	Reason string
	// Message names the Secret and the key.
	Message string
}

// Error returns the message, which names the Secret and the key.
func (e *InvalidSecretError) Error() string { return e.Message }

// ClientPasswords reads the clients' passwords from secret: the current
// one at ref.Key, then the previous one at previousKey when it is set.
func ClientPasswords(secret *corev1.Secret, ref cachev1.SecretKeyRef, previousKey string) ([]string, error) {
	var out []string
	for _, key := range []string{ref.Key, previousKey} {
		if key == "" {
			continue
		}
		value, ok := secret.Data[key]
		switch {
		case !ok:
			return nil, &InvalidSecretError{cachev1.ReasonSecretKeyMissing, fmt.Sprintf("Secret %s has no key %s", secret.Name, key)}
		case len(value) == 0:
			return nil, &InvalidSecretError{cachev1.ReasonPasswordEmpty, fmt.Sprintf("the password at key %s of Secret %s is empty", key, secret.Name)}
		}
		out = append(out, string(value))
	}
	return out, nil
}

// TLSMaterial is what a valid TLS Secret gives the operator.
type TLSMaterial struct {
	// Certificate is the PEM certificate the nodes must serve.
	Certificate []byte
	// RootCAs verify the nodes.
	RootCAs *x509.CertPool
}

// ParseTLSSecret checks that secret holds a certificate with its key and a
// CA, and returns what the operator needs of them.
func ParseTLSSecret(secret *corev1.Secret) (TLSMaterial, error) {
	invalid := func(format string, args ...any) error {
		return &InvalidSecretError{cachev1.ReasonTLSSecretInvalid, fmt.Sprintf("TLS Secret %s: ", secret.Name) + fmt.Sprintf(format, args...)}
	}
	for _, key := range []string{TLSCertKey, TLSKeyKey, TLSCAKey} {
		if len(secret.Data[key]) == 0 {
			return TLSMaterial{}, invalid("%s is missing or empty", key)
		}
	}
	if _, err := tls.X509KeyPair(secret.Data[TLSCertKey], secret.Data[TLSKeyKey]); err != nil {
		return TLSMaterial{}, invalid("%s and %s are not a certificate and its key: %v", TLSCertKey, TLSKeyKey, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data[TLSCAKey]) {
		return TLSMaterial{}, invalid("%s holds no PEM certificate", TLSCAKey)
	}
	// The nodes verify each other against ca.crt: a certificate it did not
	// sign would split the cluster.
	pair, _ := tls.X509KeyPair(secret.Data[TLSCertKey], secret.Data[TLSKeyKey])
	intermediates := x509.NewCertPool()
	var leaf *x509.Certificate
	for i, der := range pair.Certificate {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return TLSMaterial{}, invalid("%s: %v", TLSCertKey, err)
		}
		if i == 0 {
			leaf = c
		} else {
			intermediates.AddCert(c)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return TLSMaterial{}, invalid("%s is not signed by %s: %v", TLSCertKey, TLSCAKey, err)
	}
	return TLSMaterial{Certificate: secret.Data[TLSCertKey], RootCAs: roots}, nil
}

// KnownPasswords reads KnownPasswordsKey of the operator's Secret. A value
// that does not decode counts as none: the passwords of the spec are
// tried anyway.
func KnownPasswords(operator *corev1.Secret) []string {
	var known []string
	if err := json.Unmarshal(operator.Data[KnownPasswordsKey], &known); err != nil {
		return nil
	}
	return known
}

// WithKnownPasswords returns the operator's Secret with KnownPasswordsKey
// set to passwords.
func WithKnownPasswords(operator *corev1.Secret, passwords []string) *corev1.Secret {
	out := operator.DeepCopy()
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	encoded, _ := json.Marshal(append([]string{}, passwords...))
	out.Data[KnownPasswordsKey] = encoded
	return out
}
