package webhookcert

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestOptionsDefaultsAndValidation(t *testing.T) {
	g := NewWithT(t)
	o, err := Options{Namespace: "ns", SecretName: "s", DNSNames: dnsNames, Rotate: true}.withDefaults()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.CAValidity).To(Equal(365 * 24 * time.Hour))
	g.Expect(o.CertValidity).To(Equal(90 * 24 * time.Hour))
	g.Expect(o.RefreshBefore).To(Equal(30 * 24 * time.Hour))
	g.Expect(o.CAGrace).To(Equal(DefaultCAGrace))
	g.Expect(o.caRefreshBefore()).To(BeNumerically(">", o.CertValidity), "a full serving certificate fits in the CA's last third")
	g.Expect(o.Clock).NotTo(BeNil())

	_, err = Options{Namespace: "ns", SecretName: "s"}.withDefaults()
	g.Expect(err).NotTo(HaveOccurred(), "cert-manager mode needs no DNS names")
	for name, bad := range map[string]Options{
		"no Secret":               {DNSNames: dnsNames, Rotate: true},
		"no DNS name":             {Namespace: "ns", SecretName: "s", Rotate: true},
		"cert outlives CA third":  {Namespace: "ns", SecretName: "s", DNSNames: dnsNames, Rotate: true, CAValidity: 90 * 24 * time.Hour},
		"refresh before issuance": {Namespace: "ns", SecretName: "s", DNSNames: dnsNames, Rotate: true, CertValidity: time.Hour, RefreshBefore: time.Hour},
	} {
		_, err := bad.withDefaults()
		g.Expect(err).To(HaveOccurred(), name)
	}
}

// TestPlan covers what a replica decides from what the Secret holds: keep
// what is valid, whoever wrote it; renew only what must change.
func TestPlan(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	c := newReplica(g, rotateOptions("ns", "s"), nil, nil)
	first, err := c.plan(nil, now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(first.reasons).To(ContainElement("no CA"))
	g.Expect(first.data).To(HaveKey(keyCAKey))
	g.Expect(first.wake).To(Equal(first.leaf.NotAfter.Add(-c.opts.RefreshBefore)))
	caPEM := first.data[keyCACert]

	replan := func(c *Certificates, data map[string][]byte, at time.Time) plan {
		p, err := c.plan(data, at)
		g.Expect(err).NotTo(HaveOccurred())
		return p
	}
	kept := replan(c, first.data, now.Add(59*24*time.Hour))
	g.Expect(kept.reasons).To(BeEmpty(), "valid certificates are kept")
	g.Expect(kept.data).To(Equal(first.data))

	renewed := replan(c, first.data, now.Add(60*24*time.Hour))
	g.Expect(renewed.reasons).To(ConsistOf(ContainSubstring("the serving certificate expires")))
	g.Expect(renewed.data[keyCACert]).To(Equal(caPEM), "the CA is kept")
	g.Expect(renewed.leaf.CheckSignatureFrom(first.ca)).To(Succeed())

	moved := newReplica(g, Options{Namespace: "ns", SecretName: "s", Rotate: true, DNSNames: []string{"other.ns.svc"}}, nil, nil)
	p := replan(moved, first.data, now)
	g.Expect(p.reasons).To(ConsistOf(ContainSubstring("not [other.ns.svc]")))
	g.Expect(p.leaf.DNSNames).To(Equal([]string{"other.ns.svc"}))
	g.Expect(p.data[keyCACert]).To(Equal(caPEM), "the CA is kept")
	reordered := newReplica(g, Options{Namespace: "ns", SecretName: "s", Rotate: true, DNSNames: []string{dnsNames[1], dnsNames[0]}}, nil, nil)
	g.Expect(replan(reordered, first.data, now).reasons).To(BeEmpty(), "the order of the names does not matter")

	lostKey := clone(first.data)
	lostKey[keyCAKey] = []byte("garbage")
	p = replan(c, lostKey, now)
	g.Expect(p.reasons).To(ConsistOf("the CA or its key is invalid"))
	g.Expect(p.bundle).To(HaveLen(2), "the old CA stays trusted: its certificate is still served")
	g.Expect(p.bundle[1].Equal(first.ca)).To(BeTrue())
	// The new CA is only trusted until every API server has it: the old
	// CA's certificate is served until the grace ends.
	g.Expect(p.leaf.Raw).To(Equal(first.leaf.Raw))
	graceEnd := p.ca.NotBefore.Add(clockSkew + c.opts.CAGrace)
	g.Expect(p.wake).To(Equal(graceEnd))
	g.Expect(replan(c, p.data, graceEnd.Add(-time.Second)).reasons).To(BeEmpty(), "nothing changes in the grace")
	afterGrace := replan(c, p.data, graceEnd)
	g.Expect(afterGrace.reasons).To(ConsistOf("the serving certificate is not signed by the current CA"))
	g.Expect(afterGrace.leaf.CheckSignatureFrom(p.ca)).To(Succeed())
	g.Expect(afterGrace.bundle).To(HaveLen(2))

	g.Expect(replan(c, map[string][]byte{keyCACert: []byte("x"), keyTLSCert: []byte("y")}, now).reasons).To(ContainElement("no CA"))

	// A CA someone else provided, its key as openssl's EC PRIVATE KEY: used, not replaced.
	ecKey, err := x509.MarshalECPrivateKey(mustSigner(g, first.data[keyCAKey]).(*ecdsa.PrivateKey))
	g.Expect(err).NotTo(HaveOccurred())
	provided := clone(first.data)
	provided[keyCAKey] = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecKey})
	g.Expect(replan(c, provided, now).reasons).To(BeEmpty())

	// The CA is renewed a third before its expiry; the old one stays until it expires.
	caRenewal := first.ca.NotAfter.Add(-c.opts.caRefreshBefore())
	g.Expect(replan(c, kept.data, caRenewal.Add(-time.Second)).reasons).To(ConsistOf(ContainSubstring("serving certificate expires")))
	switched := replan(c, kept.data, caRenewal)
	g.Expect(switched.reasons).To(ContainElement(ContainSubstring("the CA expires")))
	g.Expect(switched.bundle).To(HaveLen(2))
	g.Expect(switched.bundle[1].Equal(first.ca)).To(BeTrue())
	// CertValidity fits in the CA's last third, so the new serving
	// certificate's renewal comes before the old CA's expiry.
	g.Expect(switched.wake).To(Equal(switched.leaf.NotAfter.Add(-c.opts.RefreshBefore)))
	g.Expect(switched.wake).To(BeTemporally("<", first.ca.NotAfter))
	beforeExpiry := replan(c, switched.data, first.ca.NotAfter.Add(-time.Second))
	g.Expect(beforeExpiry.reasons).To(ConsistOf(ContainSubstring("the serving certificate expires")))
	g.Expect(beforeExpiry.bundle).To(HaveLen(2), "both CAs until the old one expires")
	g.Expect(beforeExpiry.wake).To(Equal(first.ca.NotAfter))
	dropped := replan(c, beforeExpiry.data, first.ca.NotAfter)
	g.Expect(dropped.reasons).To(ConsistOf(ContainSubstring("a previous CA expired")))
	g.Expect(dropped.bundle).To(HaveLen(1))
	g.Expect(dropped.bundle[0].Equal(switched.ca)).To(BeTrue())
	g.Expect(dropped.leaf.Raw).To(Equal(beforeExpiry.leaf.Raw), "the serving certificate is kept")
}

func TestServingCertificateNeverOutlivesItsCA(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	ca, err := newCA(now, time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	leaf, err := newServing(ca, dnsNames, now, 24*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(leaf.Cert.NotAfter).To(Equal(ca.Cert.NotAfter))
	other, err := newServing(ca, dnsNames, now, 10*time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(other.Cert.SerialNumber).NotTo(Equal(leaf.Cert.SerialNumber))
}

func clone(m map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mustSigner(g *WithT, keyPEM []byte) any {
	key, err := parseKey(keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	return key
}
