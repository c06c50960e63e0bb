package webhookcert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/multi-operator/multi-operator/pkg/webhookcert/webhookcerttest"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

const secretName = "webhook-server-cert"

// setup is Setup for StartManager, keeping what it returns.
func setup(certs **Certificates, opts Options) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		var err error
		*certs, err = Setup(mgr, opts)
		return err
	}
}

// converged waits until the Secret holds certificates, every target's
// bundle is its ca.crt and the replica serves its tls.crt, and returns the
// Secret's data.
func converged(g *WithT, c client.Client, certs *Certificates, ns, crd, vwc string) map[string][]byte {
	var data map[string][]byte
	g.Eventually(func(g Gomega) { data = state(g, c, certs, ns, crd, vwc) }).Should(Succeed())
	return data
}

// state asserts the converged state once and returns the Secret's data.
func state(g Gomega, c client.Client, certs *Certificates, ns, crd, vwc string) map[string][]byte {
	data := secretData(g, c, ns, secretName)
	g.Expect(data).To(HaveKey(keyCACert))
	if crd != "" {
		g.Expect(crdBundle(g, c, crd)).To(Equal(data[keyCACert]), "the CRD's bundle")
	}
	if vwc != "" {
		g.Expect(webhookcerttest.CABundles(g, c, vwc)).To(HaveEach(Equal(data[keyCACert])), "every webhook's bundle")
	}
	g.Expect(leafRaw(certs)).NotTo(BeNil())
	g.Expect(encodeCerts(serving(certs).Leaf)).To(Equal(data[keyTLSCert]), "the replica serves the Secret's certificate")
	return data
}

// leafRaw is the DER of the served certificate; nil before one is loaded.
func leafRaw(certs *Certificates) []byte {
	if cert := serving(certs); cert != nil {
		return cert.Leaf.Raw
	}
	return nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// ready polls certs' readiness check.
func ready(certs *Certificates) func() error {
	return func() error { return certs.ReadyCheck()(nil) }
}

// TestCreatesSecretServesAndInjects starts from nothing: the Secret is
// created, the webhook server serves its certificate through GetCertificate
// and the API server's view (the injected bundles) verifies it for every
// DNS name. A CRD without a conversion webhook and missing targets are left
// alone.
func TestCreatesSecretServesAndInjects(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	crd := createConversionCRD(t, g, "Webhook")
	noWebhook := createConversionCRD(t, g, "None")
	vwc := createVWC(t)
	opts := rotateOptions(ns, secretName)
	opts.ConversionCRDs = []string{crd, noWebhook, "absent.webhookcert.test"}
	opts.ValidatingWebhookConfigurations = []string{vwc, "absent"}
	port := webhookcerttest.FreePort(g)

	var certs *Certificates
	env.StartManager(t, testenv.ManagerOptions{}, func(mgr ctrl.Manager) error {
		if err := setup(&certs, opts)(mgr); err != nil {
			return err
		}
		g.Expect(certs.ReadyCheck()(nil)).To(HaveOccurred(), "not ready before the manager starts")
		return mgr.Add(webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, TLSOpts: []func(*tls.Config){
			func(c *tls.Config) { c.GetCertificate = certs.GetCertificate },
		}}))
	})
	data := converged(g, env.Client, certs, ns, crd, vwc)
	g.Expect(certs.ReadyCheck()(nil)).To(Succeed())

	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: secretName}, secret)).To(Succeed())
	g.Expect(secret.Type).To(Equal(corev1.SecretTypeTLS))
	g.Expect(secret.Data).To(HaveKey(keyCAKey))
	cert := serving(certs)
	expectVerifies(g, cert, crdBundle(g, env.Client, crd), time.Now())
	g.Expect(crdBundle(g, env.Client, noWebhook)).To(BeEmpty(), "a CRD without a conversion webhook is left alone")

	ca := caCerts(g, data[keyCACert])
	g.Expect(ca).To(HaveLen(1))
	for _, c := range []*x509.Certificate{ca[0], cert.Leaf} {
		key, ok := c.PublicKey.(*ecdsa.PublicKey)
		g.Expect(ok).To(BeTrue(), "an ECDSA key")
		g.Expect(key.Curve).To(Equal(elliptic.P256()))
		g.Expect(c.SerialNumber.BitLen()).To(BeNumerically("<=", 128))
		g.Expect(c.SerialNumber.BitLen()).To(BeNumerically(">", 64), "a random 128-bit serial")
		g.Expect(c.NotBefore).To(BeTemporally("<", time.Now().Add(-4*time.Minute)), "NotBefore allows for clock skew")
	}
	g.Expect(cert.Leaf.NotAfter).To(BeTemporally("~", time.Now().Add(DefaultCertValidity), time.Minute))
	g.Expect(ca[0].NotAfter).To(BeTemporally("~", time.Now().Add(DefaultCAValidity), time.Minute))
	g.Expect(cert.Leaf.ExtKeyUsage).To(Equal([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}))

	// A client that trusts only the bundle completes a real handshake.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(crdBundle(g, env.Client, crd))
	g.Eventually(func() error {
		conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: pool, ServerName: dnsNames[1]})
		if err == nil {
			_ = conn.Close()
		}
		return err
	}).Should(Succeed())

	g.Expect(testutil.ToFloat64(expiry.WithLabelValues("serving"))).To(Equal(float64(cert.Leaf.NotAfter.Unix())))
	g.Expect(testutil.ToFloat64(expiry.WithLabelValues("ca"))).To(Equal(float64(ca[0].NotAfter.Unix())))
}

// TestTamperedBundlesAreCorrectedAndSteadyStateWritesNothing changes what
// it watches in ways that alter nothing (no write follows), then breaks
// the bundles and deletes the Secret (exactly the repairs follow).
func TestTamperedBundlesAreCorrectedAndSteadyStateWritesNothing(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	crd := createConversionCRD(t, g, "Webhook")
	vwc := createVWC(t)
	opts := rotateOptions(ns, secretName)
	opts.ConversionCRDs = []string{crd}
	opts.ValidatingWebhookConfigurations = []string{vwc}
	cfg, writes := testenv.CountWrites(env.Config)
	var certs *Certificates
	env.StartManager(t, testenv.ManagerOptions{Config: cfg}, setup(&certs, opts))
	data := converged(g, env.Client, certs, ns, crd, vwc)
	first := serving(certs)

	g.Eventually(func() []string {
		writes.Reset()
		time.Sleep(500 * time.Millisecond)
		return writes.Requests()
	}).Should(BeEmpty(), "the writes of convergence settle")
	before := certs.syncs.Load()
	annotate := []byte(`{"metadata":{"annotations":{"test/poke":"1"}}}`)
	secretObj := &corev1.Secret{}
	secretObj.Namespace, secretObj.Name = ns, secretName
	vwcObj := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	vwcObj.Name = vwc
	crdObj := newCRD()
	crdObj.SetName(crd)
	for _, obj := range []client.Object{secretObj, vwcObj, crdObj} {
		g.Expect(env.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, annotate))).To(Succeed())
	}
	g.Eventually(certs.syncs.Load).Should(BeNumerically(">", before), "the pokes were seen")
	g.Consistently(writes.Requests, 2*time.Second).Should(BeEmpty(), "no write at steady state")
	g.Expect(serving(certs)).To(BeIdenticalTo(first))

	// Someone puts another CA into the bundles: the replica puts its own back.
	foreign := foreignBundle(g)
	g.Expect(env.Client.Patch(ctx, vwcObj, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/webhooks/1/clientConfig/caBundle","value":"`+b64(foreign)+`"}]`)))).To(Succeed())
	g.Expect(env.Client.Patch(ctx, crdObj, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/conversion/webhook/clientConfig/caBundle","value":"`+b64(foreign)+`"}]`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(webhookcerttest.CABundles(g, env.Client, vwc)).To(HaveEach(Equal(data[keyCACert])))
		g.Expect(crdBundle(g, env.Client, crd)).To(Equal(data[keyCACert]))
	}).Should(Succeed())
	g.Expect(writes.Requests("/secrets")).To(BeEmpty(), "the certificates did not change")
	g.Expect(serving(certs)).To(BeIdenticalTo(first))

	// The Secret is deleted: a new CA and certificate, injected and served.
	g.Expect(env.Client.Delete(ctx, secretObj)).To(Succeed())
	g.Eventually(func(g Gomega) {
		again := state(g, env.Client, certs, ns, crd, vwc)
		g.Expect(again[keyCACert]).NotTo(Equal(data[keyCACert]))
	}).Should(Succeed())
	expectVerifies(g, serving(certs), crdBundle(g, env.Client, crd), time.Now())
}

// TestReplicasAgreeOnOneCertificate starts two replicas at once on one
// Secret: whichever writes first, both serve the same certificate.
func TestReplicasAgreeOnOneCertificate(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	vwc := createVWC(t)
	opts := rotateOptions(ns, secretName)
	opts.ValidatingWebhookConfigurations = []string{vwc}
	var a, b *Certificates
	env.StartManager(t, testenv.ManagerOptions{}, setup(&a, opts))
	env.StartManager(t, testenv.ManagerOptions{}, setup(&b, opts))
	data := converged(g, env.Client, a, ns, "", vwc)
	converged(g, env.Client, b, ns, "", vwc)
	g.Consistently(func(g Gomega) {
		g.Expect(serving(a).Certificate).To(Equal(serving(b).Certificate))
		g.Expect(secretData(g, env.Client, ns, secretName)).To(Equal(data))
	}, time.Second).Should(Succeed())
}

// staleReader plays a cache that has not seen the latest write: it
// returns a fixed Secret, or NotFound when nil.
type staleReader struct {
	client.Reader
	secret *corev1.Secret
}

func (r staleReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.secret == nil {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	r.secret.DeepCopyInto(obj.(*corev1.Secret))
	return nil
}

// newReplica is a Certificates without a manager, reading the Secret
// through reader, for driving one sync by hand.
func newReplica(g *WithT, opts Options, c client.Client, reader client.Reader) *Certificates {
	opts, err := opts.withDefaults()
	g.Expect(err).NotTo(HaveOccurred())
	return &Certificates{opts: opts, log: ctrl.Log.WithName("test-replica"), client: c, timers: clockFor(opts), trigger: make(chan struct{}, 1), watch: &watches{secret: reader}}
}

// TestAdoptsTheCertificateAnotherReplicaWrote drives the two ways a replica
// loses a race, with a cache that has not seen the winner's write: its
// create meets AlreadyExists, its update meets Conflict. Either way it
// re-reads and serves the winner's certificate without writing again.
func TestAdoptsTheCertificateAnotherReplicaWrote(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	opts := rotateOptions(ns, secretName)
	winner := newReplica(g, opts, env.Client, staleReader{})
	p, err := winner.plan(nil, time.Now())
	g.Expect(err).NotTo(HaveOccurred())

	t.Run("create meets AlreadyExists", func(t *testing.T) {
		g := NewWithT(t)
		secret := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: p.data}
		secret.Namespace, secret.Name = ns, secretName
		g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
		loser := newReplica(g, opts, env.Client, staleReader{})
		_, err := loser.sync(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(serving(loser).Certificate[0]).To(Equal(p.leaf.Raw), "the winner's certificate")
		after := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), after)).To(Succeed())
		g.Expect(after.ResourceVersion).To(Equal(secret.ResourceVersion), "not written again")
	})

	t.Run("update meets Conflict", func(t *testing.T) {
		g := NewWithT(t)
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, secret)).To(Succeed())
		// What the loser's cache still shows: a Secret it must renew.
		stale := secret.DeepCopy()
		stale.Data = map[string][]byte{keyTLSCert: []byte("expired"), keyTLSKey: []byte("garbage")}
		stale.ResourceVersion = "1"
		loser := newReplica(g, opts, env.Client, staleReader{secret: stale})
		_, err := loser.sync(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(serving(loser).Certificate[0]).To(Equal(p.leaf.Raw), "the winner's certificate")
		after := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), after)).To(Succeed())
		g.Expect(after.ResourceVersion).To(Equal(secret.ResourceVersion), "not written again")
	})
}

// TestRotationWithAFakeClock travels through a CA's life: the serving
// certificate is renewed exactly when RefreshBefore is left, under the same
// CA; the CA is renewed when a third of it is left, and the bundle holds
// the old and the new CA until the old one expires.
func TestRotationWithAFakeClock(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	crd := createConversionCRD(t, g, "Webhook")
	vwc := createVWC(t)
	fake := clocktesting.NewFakeClock(time.Now())
	const day = 24 * time.Hour
	opts := rotateOptions(ns, secretName)
	opts.ConversionCRDs = []string{crd}
	opts.ValidatingWebhookConfigurations = []string{vwc}
	opts.CAValidity, opts.CertValidity, opts.RefreshBefore = 30*day, 3*day, day
	opts.Clock = fake
	var certs *Certificates
	env.StartManager(t, testenv.ManagerOptions{}, setup(&certs, opts))
	data := converged(g, env.Client, certs, ns, crd, vwc)
	ca1 := caCerts(g, data[keyCACert])
	g.Expect(ca1).To(HaveLen(1))
	first := serving(certs).Leaf
	g.Expect(first.NotAfter).To(BeTemporally("~", fake.Now().Add(3*day), time.Second))

	// travel sets the fake time once the loop waits on its timer.
	travel := func(to time.Time) {
		g.Eventually(fake.HasWaiters).Should(BeTrue(), "the loop waits for the renewal time")
		fake.SetTime(to)
	}
	renewal := first.NotAfter.Add(-day)
	travel(renewal.Add(-time.Second))
	g.Consistently(func() *x509.Certificate { return serving(certs).Leaf }, 500*time.Millisecond).Should(BeIdenticalTo(first), "no renewal before its time")
	travel(renewal)
	g.Eventually(func() []byte { return leafRaw(certs) }).ShouldNot(Equal(first.Raw), "renewed at its time")
	data = converged(g, env.Client, certs, ns, crd, vwc)
	second := serving(certs).Leaf
	g.Expect(data[keyCACert]).To(Equal(encodeCerts(ca1...)), "the CA is kept")
	g.Expect(second.CheckSignatureFrom(ca1[0])).To(Succeed())
	g.Expect(second.NotAfter).To(BeTemporally("~", renewal.Add(3*day), time.Second))

	// Ten days (a third) before the CA expires, a new CA signs; both are trusted.
	travel(ca1[0].NotAfter.Add(-10 * day))
	g.Eventually(func(g Gomega) {
		data = state(g, env.Client, certs, ns, crd, vwc)
		g.Expect(caCerts(g, data[keyCACert])).To(HaveLen(2))
	}).Should(Succeed())
	cas := caCerts(g, data[keyCACert])
	g.Expect(cas[1].Equal(ca1[0])).To(BeTrue(), "the old CA follows the new one")
	g.Expect(serving(certs).Leaf.CheckSignatureFrom(cas[0])).To(Succeed(), "the new CA signs")
	expectVerifies(g, serving(certs), crdBundle(g, env.Client, crd), fake.Now())
	g.Expect(testutil.ToFloat64(expiry.WithLabelValues("ca"))).To(Equal(float64(cas[0].NotAfter.Unix())))

	// The old CA expires: it leaves the bundle.
	travel(ca1[0].NotAfter)
	g.Eventually(func(g Gomega) {
		data = state(g, env.Client, certs, ns, crd, vwc)
		g.Expect(data[keyCACert]).To(Equal(encodeCerts(cas[0])))
	}).Should(Succeed())
	expectVerifies(g, serving(certs), webhookcerttest.CABundles(g, env.Client, vwc)[0], fake.Now())
}

// TestCertManagerModeOnlyReads leaves the Secret and the bundles to
// someone else: not ready until the Secret holds a certificate, then it
// serves it and each renewal, and never writes.
func TestCertManagerModeOnlyReads(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	vwc := createVWC(t)
	cfg, writes := testenv.CountWrites(env.Config)
	opts := Options{Namespace: ns, SecretName: secretName, ValidatingWebhookConfigurations: []string{vwc}}
	var certs *Certificates
	env.StartManager(t, testenv.ManagerOptions{Config: cfg}, setup(&certs, opts))

	g.Consistently(ready(certs), time.Second).Should(HaveOccurred(), "no Secret: not ready")
	secret := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{keyTLSCert: {}, keyTLSKey: {}}}
	secret.Namespace, secret.Name = ns, secretName
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	g.Consistently(ready(certs), time.Second).Should(HaveOccurred(), "an empty Secret: not ready")

	issue := func() *keyPair {
		ca, err := newCA(time.Now(), 30*24*time.Hour)
		g.Expect(err).NotTo(HaveOccurred())
		leaf, err := newServing(ca, dnsNames, time.Now(), 24*time.Hour)
		g.Expect(err).NotTo(HaveOccurred())
		// As cert-manager writes it: no ca.key.
		secret.Data = map[string][]byte{keyCACert: ca.CertPEM, keyTLSCert: leaf.CertPEM, keyTLSKey: leaf.KeyPEM}
		g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
		return leaf
	}
	leaf := issue()
	g.Eventually(ready(certs)).Should(Succeed())
	g.Expect(serving(certs).Leaf.Raw).To(Equal(leaf.Cert.Raw))
	renewed := issue()
	g.Eventually(func() []byte { return leafRaw(certs) }).Should(Equal(renewed.Cert.Raw))

	g.Consistently(writes.Requests, time.Second).Should(BeEmpty(), "cert-manager mode never writes")
	g.Expect(webhookcerttest.CABundles(g, env.Client, vwc)).To(HaveEach(BeEmpty()), "the bundles are cert-manager's business")
}
