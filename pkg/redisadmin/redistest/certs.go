package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority made for one test.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA's certificate.
	PEM []byte
}

// Certificate is a node's certificate, key and CA in PEM, the keys of a
// cert-manager Secret: tls.crt, tls.key and ca.crt.
type Certificate struct {
	Cert, Key, CA []byte
}

// NewCA makes a CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := template(t, "multi-operator test CA")
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	cert := sign(t, tmpl, tmpl, key, key)
	return &CA{cert: cert, key: key, PEM: EncodeCertificate(cert)}
}

// Issue makes a certificate for servers and clients (Redis nodes are
// both, on the cluster bus), naming 127.0.0.1 and the given IPs.
func (ca *CA) Issue(t testing.TB, ips ...string) Certificate {
	t.Helper()
	key := newKey(t)
	tmpl := template(t, "redis")
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	cert := sign(t, tmpl, ca.cert, key, ca.key)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Certificate{
		Cert: EncodeCertificate(cert),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		CA:   ca.PEM,
	}
}

// template is a certificate valid for a day, an hour back.
func template(t testing.TB, commonName string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
}

// sign makes the certificate tmpl for key, signed by parent's parentKey.
func sign(t testing.TB, tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// Pool is a pool with the CA's certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// WriteFiles writes tls.crt, tls.key and ca.crt into dir, replacing the
// files at once as the kubelet does when it renews a mounted Secret.
func (c Certificate) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tls.crt": c.Cert, "tls.key": c.Key, "ca.crt": c.CA} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// ClientConfig trusts the certificate's CA. Like the operator, it checks
// the chain and not the host name, since servers listen on any loopback IP.
func (c Certificate) ClientConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CA)
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // the chain is verified below
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no certificate")
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool})
			return err
		},
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// EncodeCertificate returns cert in PEM.
func EncodeCertificate(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// ServedCertificate returns the PEM certificate the server presents to a
// new connection now.
func (s *Server) ServedCertificate() ([]byte, error) {
	if s.Options.TLS == nil {
		return nil, errors.New("the server does not speak TLS")
	}
	conn, err := tls.Dial("tcp", s.Addr(), s.Options.TLS.ClientConfig())
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return EncodeCertificate(conn.ConnectionState().PeerCertificates[0]), nil
}
