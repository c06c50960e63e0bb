package metricsauth

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestSelfSignedCertificateIsMadeOnceAndRenewedBeforeItExpires(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	s := &selfSigned{now: func() time.Time { return now }}
	first, err := s.get(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(first.Leaf.DNSNames).To(ConsistOf("localhost"))
	g.Expect(first.Leaf.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageServerAuth))
	g.Expect(first.PrivateKey).To(BeAssignableToTypeOf(&ecdsa.PrivateKey{}), "a P-256 key, not RSA")
	g.Expect(first.Certificate).To(HaveLen(2), "the chain carries its CA")
	ca, err := x509.ParseCertificate(first.Certificate[1])
	g.Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	_, err = first.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: pool, CurrentTime: now})
	g.Expect(err).NotTo(HaveOccurred())

	now = now.Add(certValidity - certRenewBefore - time.Hour)
	again, err := s.get(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(BeIdenticalTo(first), "made once, not at every handshake")

	now = now.Add(2 * time.Hour)
	renewed, err := s.get(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(renewed).NotTo(BeIdenticalTo(first))
	g.Expect(renewed.Leaf.NotAfter).To(BeTemporally(">", now.Add(certValidity-time.Hour)))
}

func TestSelfSignedTLSServesAHandshake(t *testing.T) {
	g := NewWithT(t)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	SelfSignedTLS(cfg)
	g.Expect(cfg.GetCertificate).NotTo(BeNil())
	cert, err := cfg.GetCertificate(&tls.ClientHelloInfo{ServerName: "localhost"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cert.Leaf.NotAfter).To(BeTemporally("~", time.Now().Add(certValidity), time.Minute))
}
