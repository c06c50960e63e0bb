package metricsauth

import (
	"crypto/tls"
	"sync"
	"time"

	"github.com/multi-operator/multi-operator/pkg/webhookcert"
)

// The metrics endpoint's own certificate is valid for a year and made
// anew a day before it expires, so that a manager that runs for longer
// never serves an expired one.
const (
	certValidity    = 365 * 24 * time.Hour
	certRenewBefore = 24 * time.Hour
)

// SelfSignedTLS is a metrics server TLS option
// (metricsserver.Options.TLSOpts): the endpoint serves a self-signed P-256
// certificate for localhost, made at the first handshake. Scrapers
// authenticate with a token (see Provider) and do not verify the endpoint,
// as with controller-runtime's own fallback, which makes two 2048-bit RSA
// keys at every start instead, at a far higher CPU cost.
func SelfSignedTLS(c *tls.Config) {
	c.GetCertificate = (&selfSigned{now: time.Now}).get
}

// selfSigned holds the current certificate.
type selfSigned struct {
	now  func() time.Time
	mu   sync.Mutex
	cert *tls.Certificate
}

func (s *selfSigned) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.cert == nil || now.After(s.cert.Leaf.NotAfter.Add(-certRenewBefore)) {
		cert, err := webhookcert.SelfSigned([]string{"localhost"}, now, certValidity)
		if err != nil {
			return nil, err
		}
		s.cert = cert
	}
	return s.cert, nil
}
