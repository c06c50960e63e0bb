// Package pki makes the certificates the operator issues itself: a CA
// and the certificates it signs, on P-256 keys, PEM-encoded as Secrets
// hold them.
package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"slices"
	"time"
)

// ClockSkew is how far in the past a new certificate's NotBefore lies: a
// peer whose clock is a little behind ours must already accept a
// certificate we have just made.
const ClockSkew = 5 * time.Minute

// KeyPair is a certificate with its private key, parsed and PEM-encoded.
type KeyPair struct {
	// Cert is the parsed certificate.
	Cert *x509.Certificate
	// Key is its private key.
	Key crypto.Signer
	// CertPEM and KeyPEM are both in PEM, the key in PKCS #8.
	CertPEM []byte
	KeyPEM  []byte
}

// Leaf describes a certificate a CA signs.
type Leaf struct {
	// CommonName is the subject's name.
	CommonName string
	// DNSNames are the names a client checks, if it checks any.
	DNSNames []string
	// IPAddresses are the addresses a client checks when it dials one
	// without a name.
	IPAddresses []net.IP
	// Usages say whether it serves, authenticates a client, or both.
	Usages []x509.ExtKeyUsage
}

// newSerial returns a random positive 128-bit serial number. Random serials
// keep two replicas that generate at the same instant from issuing
// certificates that a client could confuse.
func newSerial() (*big.Int, error) {
	b := make([]byte, 16)
	for {
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		if n := new(big.Int).SetBytes(b); n.Sign() > 0 {
			return n, nil
		}
	}
}

// newKeyAndSerial returns what every new certificate needs: a P-256 key
// and a serial number.
func newKeyAndSerial() (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	return key, serial, nil
}

// NewCA makes a self-signed CA named commonName, valid from now (minus
// ClockSkew) for validity, that signs certificates but no other CA.
func NewCA(commonName string, now time.Time, validity time.Duration) (*KeyPair, error) {
	key, serial, err := newKeyAndSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-ClockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	return sign(tmpl, tmpl, key, key)
}

// Sign makes the certificate leaf describes, signed by ca, valid from now
// (minus ClockSkew) for validity. It never outlives ca, whose expiry would
// make it useless anyway.
func Sign(ca *KeyPair, leaf Leaf, now time.Time, validity time.Duration) (*KeyPair, error) {
	key, serial, err := newKeyAndSerial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(validity)
	if ca.Cert.NotAfter.Before(notAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: leaf.CommonName},
		DNSNames:              slices.Clone(leaf.DNSNames),
		IPAddresses:           slices.Clone(leaf.IPAddresses),
		NotBefore:             now.Add(-ClockSkew),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           slices.Clone(leaf.Usages),
		BasicConstraintsValid: true,
	}
	return sign(tmpl, ca.Cert, key, ca.Key)
}

func sign(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, signer crypto.Signer) (*KeyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &KeyPair{
		Cert:    cert,
		Key:     key,
		CertPEM: EncodeCerts(cert),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// EncodeCerts PEM-encodes certs in order, the form of ca.crt and of a
// caBundle.
func EncodeCerts(certs ...*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return buf.Bytes()
}
