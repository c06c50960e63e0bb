package webhookcert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Secret's keys: those of a kubernetes.io/tls Secret as cert-manager
// writes it, plus the CA's key when this package is the CA.
const (
	keyCACert  = "ca.crt"
	keyCAKey   = "ca.key"
	keyTLSCert = corev1.TLSCertKey
	keyTLSKey  = corev1.TLSPrivateKeyKey
)

// maxWriteAttempts bounds the conflicts one sync goes through; each one
// means another replica wrote, and the next attempt adopts what it wrote.
const maxWriteAttempts = 5

// plan is what the Secret should hold at some instant, decided from what it
// holds.
type plan struct {
	// data is the Secret's data as it should be.
	data map[string][]byte
	// reasons say why the data must change; none when it holds what it should.
	reasons []string
	// ca signs leaf; bundle is ca.crt, ca first.
	ca, leaf *x509.Certificate
	bundle   []*x509.Certificate
	// wake is when the plan changes by itself: a renewal or an old CA's expiry.
	wake time.Time
}

// plan decides what the Secret should hold at now. It keeps whatever is
// still good, whoever wrote it, so that replicas converge on the first
// valid write instead of overwriting each other.
func (c *Certificates) plan(have map[string][]byte, now time.Time) (plan, error) {
	o := c.opts
	var reasons []string
	bundle, err := parseCerts(have[keyCACert])
	var ca *keyPair
	if err != nil {
		reasons = append(reasons, "no CA")
	} else {
		key, err := parseKey(have[keyCAKey])
		switch {
		case err != nil || !bundle[0].IsCA || !keyMatches(bundle[0], key):
			reasons = append(reasons, "the CA or its key is invalid")
		case !now.Before(bundle[0].NotAfter.Add(-o.caRefreshBefore())):
			reasons = append(reasons, "the CA expires at "+bundle[0].NotAfter.UTC().Format(time.RFC3339))
		default:
			ca = &keyPair{Cert: bundle[0], Key: key, KeyPEM: have[keyCAKey]}
		}
	}
	if ca == nil {
		if ca, err = newCA(now, o.CAValidity); err != nil {
			return plan{}, fmt.Errorf("generating a CA: %w", err)
		}
	}
	// The CA that signs first, then the older ones until they expire: a
	// serving certificate of the old CA, which another replica may still
	// serve, stays trusted while the new one spreads.
	cas := []*x509.Certificate{ca.Cert}
	for _, old := range bundle {
		switch {
		case slices.ContainsFunc(cas, old.Equal):
		case !old.IsCA:
			reasons = append(reasons, "ca.crt holds a certificate that is no CA")
		case !now.Before(old.NotAfter):
			reasons = append(reasons, "a previous CA expired at "+old.NotAfter.UTC().Format(time.RFC3339))
		default:
			cas = append(cas, old)
		}
	}

	var serving *keyPair
	// A CA made by this plan or a recent one is only trusted at first; the
	// certificate an older CA signed is served until the grace ends.
	graceEnd := ca.Cert.NotBefore.Add(clockSkew + o.CAGrace)
	inGrace := false
	pair, err := tls.X509KeyPair(have[keyTLSCert], have[keyTLSKey])
	switch {
	case err != nil:
		reasons = append(reasons, "no valid serving certificate")
	case !sameNames(pair.Leaf.DNSNames, o.DNSNames):
		reasons = append(reasons, fmt.Sprintf("the serving certificate is for %v, not %v", pair.Leaf.DNSNames, o.DNSNames))
	case !now.Before(pair.Leaf.NotAfter.Add(-o.RefreshBefore)):
		reasons = append(reasons, "the serving certificate expires at "+pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	case pair.Leaf.CheckSignatureFrom(ca.Cert) == nil:
		serving = &keyPair{Cert: pair.Leaf, CertPEM: have[keyTLSCert], KeyPEM: have[keyTLSKey]}
	case now.Before(graceEnd) && signedByOneOf(pair.Leaf, cas[1:]):
		serving = &keyPair{Cert: pair.Leaf, CertPEM: have[keyTLSCert], KeyPEM: have[keyTLSKey]}
		inGrace = true
	default:
		reasons = append(reasons, "the serving certificate is not signed by the current CA")
	}
	if serving == nil {
		if serving, err = newServing(ca, o.DNSNames, now, o.CertValidity); err != nil {
			return plan{}, fmt.Errorf("generating a serving certificate: %w", err)
		}
	}

	data := maps.Clone(have)
	if data == nil {
		data = map[string][]byte{}
	}
	data[keyCACert] = encodeCerts(cas...)
	data[keyCAKey] = ca.KeyPEM
	data[keyTLSCert] = serving.CertPEM
	data[keyTLSKey] = serving.KeyPEM
	if len(reasons) == 0 && !maps.EqualFunc(have, data, bytes.Equal) {
		reasons = append(reasons, "ca.crt is not in canonical form")
	}

	wake := serving.Cert.NotAfter.Add(-o.RefreshBefore)
	if t := ca.Cert.NotAfter.Add(-o.caRefreshBefore()); t.Before(wake) {
		wake = t
	}
	for _, old := range cas[1:] {
		if old.NotAfter.Before(wake) {
			wake = old.NotAfter
		}
	}
	if inGrace && graceEnd.Before(wake) {
		wake = graceEnd
	}
	return plan{data: data, reasons: reasons, ca: ca.Cert, leaf: serving.Cert, bundle: cas, wake: wake}, nil
}

// sync brings the Secret, the CA bundles and the served certificate up to
// date. It returns when it must run again by itself (zero: only on a
// change).
func (c *Certificates) sync(ctx context.Context) (time.Time, error) {
	if !c.opts.Rotate {
		return time.Time{}, c.syncReadOnly(ctx)
	}
	secret, err := c.cachedSecret(ctx)
	if err != nil {
		return time.Time{}, err
	}
	var p plan
	for attempt := 1; ; attempt++ {
		var have map[string][]byte
		if secret != nil {
			have = secret.Data
		}
		if p, err = c.plan(have, c.opts.Clock.Now()); err != nil {
			return time.Time{}, err
		}
		if len(p.reasons) == 0 {
			break
		}
		if attempt > maxWriteAttempts {
			return time.Time{}, fmt.Errorf("gave up after %d conflicting writes in a row to Secret %s/%s", maxWriteAttempts, c.opts.Namespace, c.opts.SecretName)
		}
		err = c.writeSecret(ctx, secret, p.data)
		if err == nil {
			c.log.Info("wrote the webhook certificates", "reasons", p.reasons,
				"ca", p.ca.Subject.CommonName, "caNotAfter", p.ca.NotAfter, "cas", len(p.bundle),
				"servingSerial", p.leaf.SerialNumber.Text(16), "servingNotAfter", p.leaf.NotAfter)
			break
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return time.Time{}, fmt.Errorf("writing Secret %s/%s: %w", c.opts.Namespace, c.opts.SecretName, err)
		}
		// Another replica wrote first; what it wrote is as good as ours.
		// The cache may not have it yet, so read past it.
		c.log.V(1).Info("another replica wrote the webhook certificates first; adopting them")
		if secret, err = c.freshSecret(ctx); err != nil {
			return time.Time{}, err
		}
	}
	setExpiry("ca", p.ca.NotAfter)
	pair, err := tls.X509KeyPair(p.data[keyTLSCert], p.data[keyTLSKey])
	if err != nil {
		return time.Time{}, err // plan checked or made it: cannot happen
	}
	// Inject before serving: the API server must trust a new CA before any
	// replica hands out a certificate it signed.
	injectErr := c.inject(ctx, p.data[keyCACert])
	if cur := c.cert.Load(); injectErr != nil && cur != nil && c.opts.Clock.Now().Before(cur.Leaf.NotAfter) && !sameIssuer(cur.Leaf, pair.Leaf) {
		c.log.Info("keeping the current serving certificate until the new CA is injected")
		return p.wake, injectErr
	}
	c.load(&pair)
	return p.wake, injectErr
}

// syncReadOnly loads what the Secret holds, in cert-manager mode.
func (c *Certificates) syncReadOnly(ctx context.Context) error {
	secret, err := c.cachedSecret(ctx)
	if err != nil || secret == nil {
		if err == nil {
			c.log.Info("waiting for the Secret with the webhook certificate")
		}
		return err
	}
	pair, err := tls.X509KeyPair(secret.Data[keyTLSCert], secret.Data[keyTLSKey])
	if err != nil {
		// Its next change syncs again; a retry would read the same.
		c.log.Info("the Secret holds no valid serving certificate yet", "reason", err.Error())
		return nil
	}
	if cas, err := parseCerts(secret.Data[keyCACert]); err == nil {
		setExpiry("ca", cas[0].NotAfter)
	}
	c.load(&pair)
	return nil
}

// load serves pair from now on, unless it is already served.
func (c *Certificates) load(pair *tls.Certificate) {
	if cur := c.cert.Load(); cur != nil && bytes.Equal(cur.Certificate[0], pair.Certificate[0]) {
		return
	}
	c.cert.Store(pair)
	setExpiry("serving", pair.Leaf.NotAfter)
	c.log.Info("serving a new webhook certificate", "serial", pair.Leaf.SerialNumber.Text(16),
		"dnsNames", pair.Leaf.DNSNames, "issuer", pair.Leaf.Issuer.CommonName, "notAfter", pair.Leaf.NotAfter)
}

// signedByOneOf tells whether one of cas signed leaf.
func signedByOneOf(leaf *x509.Certificate, cas []*x509.Certificate) bool {
	return slices.ContainsFunc(cas, func(ca *x509.Certificate) bool { return leaf.CheckSignatureFrom(ca) == nil })
}

// sameIssuer tells whether two certificates were signed by the same CA.
func sameIssuer(a, b *x509.Certificate) bool {
	return bytes.Equal(a.RawIssuer, b.RawIssuer) && bytes.Equal(a.AuthorityKeyId, b.AuthorityKeyId)
}

func (c *Certificates) secretKey() client.ObjectKey {
	return client.ObjectKey{Namespace: c.opts.Namespace, Name: c.opts.SecretName}
}

// cachedSecret reads the Secret from its watch; nil when there is none.
func (c *Certificates) cachedSecret(ctx context.Context) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := c.watch.secret.Get(ctx, c.secretKey(), s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return s, nil
}

// freshSecret reads the Secret from the API server; nil when there is none.
func (c *Certificates) freshSecret(ctx context.Context) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := c.client.Get(ctx, c.secretKey(), s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return s, nil
}

// writeSecret creates the Secret, or updates the one read with its
// resourceVersion, so that a write never replaces one it did not see.
func (c *Certificates) writeSecret(ctx context.Context, secret *corev1.Secret, data map[string][]byte) error {
	if secret == nil {
		return c.client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.opts.Namespace, Name: c.opts.SecretName},
			Type:       corev1.SecretTypeTLS,
			Data:       data,
		})
	}
	s := secret.DeepCopy()
	s.Data = data
	return c.client.Update(ctx, s)
}
