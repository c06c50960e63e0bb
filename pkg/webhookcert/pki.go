package webhookcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/multi-operator/multi-operator/pkg/pki"
)

// clockSkew is how far in the past a new certificate's NotBefore lies: an
// API server whose clock is a little behind ours must already accept a
// certificate we have just made.
const clockSkew = pki.ClockSkew

// keyPair is a certificate with its private key, parsed and PEM-encoded.
type keyPair = pki.KeyPair

// newCA makes a self-signed CA valid from now (minus clockSkew) for
// validity. Its name carries the time, so that two generations of the CA
// are told apart in logs and by `openssl x509`.
func newCA(now time.Time, validity time.Duration) (*keyPair, error) {
	return pki.NewCA(fmt.Sprintf("multi-operator-webhook-ca@%d", now.Unix()), now, validity)
}

// newServing makes a serving certificate for dnsNames signed by ca. It
// never outlives ca, whose expiry would make it useless anyway.
func newServing(ca *keyPair, dnsNames []string, now time.Time, validity time.Duration) (*keyPair, error) {
	return pki.Sign(ca, pki.Leaf{CommonName: dnsNames[0], DNSNames: dnsNames, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, now, validity)
}

// encodeCerts PEM-encodes certs in order, the form of ca.crt and of a
// caBundle.
func encodeCerts(certs ...*x509.Certificate) []byte { return pki.EncodeCerts(certs...) }

// parseCerts parses every CERTIFICATE block of data; other blocks are
// skipped. It fails when there is none or one does not parse.
func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no certificate")
	}
	return out, nil
}

// parseKey parses the first private key of data in any of the encodings
// that openssl, cert-manager and this package write, so that a CA someone
// provided in the Secret is used rather than replaced.
func parseKey(data []byte) (crypto.Signer, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no private key")
		}
		var key any
		var err error
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		switch k := key.(type) {
		case *ecdsa.PrivateKey:
			return k, nil
		case *rsa.PrivateKey:
			return k, nil
		case crypto.Signer:
			return k, nil
		}
		return nil, fmt.Errorf("unsupported private key %T", key)
	}
}

// keyMatches tells whether key is the private key of cert.
func keyMatches(cert *x509.Certificate, key crypto.Signer) bool {
	pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(key.Public())
}

// sameNames tells whether a certificate's DNS names are the wanted ones, in
// any order.
func sameNames(have, want []string) bool {
	a, b := slices.Clone(have), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// SelfSigned returns a serving certificate for dnsNames, valid from now for
// validity, signed by a CA made for it alone and then forgotten, the chain
// with both, on P-256 keys. It is for a server that only needs its traffic
// encrypted, such as the metrics endpoint, whose scrapers prove who they
// are with a token and, as for kube-controller-manager's, do not verify
// the server. P-256 keys cost far less CPU to make than the 2048-bit RSA
// keys of controller-runtime's own fallback, made at every start.
func SelfSigned(dnsNames []string, now time.Time, validity time.Duration) (*tls.Certificate, error) {
	if len(dnsNames) == 0 {
		return nil, errors.New("a certificate needs at least one DNS name")
	}
	ca, err := newCA(now, validity)
	if err != nil {
		return nil, err
	}
	serving, err := newServing(ca, dnsNames, now, validity)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(append(serving.CertPEM, ca.CertPEM...), serving.KeyPEM)
	if err != nil {
		return nil, err
	}
	return &cert, nil
}
