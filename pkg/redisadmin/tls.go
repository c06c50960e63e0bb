package redisadmin

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"sync"
)

// servedCert records the leaf certificate a node presented.
type servedCert struct {
	mu  sync.Mutex
	der []byte
}

func (s *servedCert) record(der []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.der = der
}

// matches reports whether the node presented the certificate der.
func (s *servedCert) matches(der []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Equal(s.der, der)
}

// tlsConfig returns nil without Options.TLSRootCAs. Otherwise it verifies
// the node's chain against them (and no host name), and records the leaf
// in served when served is not nil.
func (a *Admin) tlsConfig(served *servedCert) *tls.Config {
	return chainTLS(a.opts.TLSRootCAs, served)
}

// TLSConfig is how the operator's clients speak TLS to a node: they
// verify its chain against roots, not its host name (nodes are reached
// by pod IP, which their certificates need not name). Nil without roots.
func TLSConfig(roots *x509.CertPool) *tls.Config { return chainTLS(roots, nil) }

func chainTLS(roots *x509.CertPool, served *servedCert) *tls.Config {
	if roots == nil {
		return nil
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain is verified below; only the host name check is skipped.
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the node presented no certificate")
			}
			intermediates := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				intermediates.AddCert(c)
			}
			leaf := cs.PeerCertificates[0]
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates}); err != nil {
				return err
			}
			if served != nil {
				served.record(leaf.Raw)
			}
			return nil
		},
	}
}
