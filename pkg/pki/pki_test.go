package pki_test

import (
	"crypto/x509"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/pki"
)

func TestSignedLeafVerifiesAndNeverOutlivesItsCA(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	ca, err := pki.NewCA("test-ca", now, time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ca.Cert.IsCA).To(BeTrue())
	usages := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	leaf, err := pki.Sign(ca, pki.Leaf{CommonName: "node", Usages: usages}, now, 24*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(leaf.Cert.NotAfter).To(Equal(ca.Cert.NotAfter))
	g.Expect(leaf.Cert.NotBefore).To(BeTemporally("~", now.Add(-pki.ClockSkew), time.Second))
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(ca.CertPEM)).To(BeTrue())
	for _, u := range usages {
		_, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{u}})
		g.Expect(err).NotTo(HaveOccurred())
	}
	other, err := pki.NewCA("other-ca", now, time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(leaf.Cert.CheckSignatureFrom(other.Cert)).To(HaveOccurred())
}
