package webhookcert

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/webhookcert/webhookcerttest"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// dnsNames are the names a test's certificates are for.
var dnsNames = []string{"webhook-service.test-system.svc", "webhook-service.test-system.svc.cluster.local"}

// suffix returns random lower-case letters, to name cluster-scoped objects
// apart across the tests of one control plane.
func suffix() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = 'a' + b[i]%26
	}
	return string(b)
}

// createConversionCRD creates a CRD whose conversion strategy is Webhook
// and returns its name. Nothing calls the webhook: it has one version.
func createConversionCRD(t *testing.T, g *WithT, strategy string) string {
	t.Helper()
	s := suffix()
	crd := newCRD()
	crd.SetName("things" + s + ".webhookcert.test")
	crd.Object["spec"] = map[string]any{
		"group": "webhookcert.test",
		"scope": "Namespaced",
		"names": map[string]any{"plural": "things" + s, "singular": "thing" + s, "kind": "Thing" + s, "listKind": "Thing" + s + "List"},
		"versions": []any{map[string]any{
			"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
		}},
	}
	conversion := map[string]any{"strategy": strategy}
	if strategy == "Webhook" {
		conversion["webhook"] = map[string]any{
			"conversionReviewVersions": []any{"v1"},
			"clientConfig":             map[string]any{"url": "https://127.0.0.1:1/convert"},
		}
	}
	crd.Object["spec"].(map[string]any)["conversion"] = conversion
	env := testenv.Get(t)
	g.Expect(env.Client.Create(context.Background(), crd)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })
	return crd.GetName()
}

// createVWC creates a ValidatingWebhookConfiguration with two webhooks for
// a resource that does not exist, so that the API server never calls them.
func createVWC(t *testing.T) string {
	t.Helper()
	return webhookcerttest.CreateWebhookConfiguration(t, testenv.Get(t).Client, "webhookcert-"+suffix(), "a.webhookcert.test", "b.webhookcert.test")
}

// secretData reads the Secret's data; nil when there is none.
func secretData(g Gomega, c client.Client, ns, name string) map[string][]byte {
	s := &corev1.Secret{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)
	if err != nil {
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return nil
	}
	return s.Data
}

// crdBundle is the caBundle of a CRD's conversion webhook.
func crdBundle(g Gomega, c client.Client, name string) []byte {
	crd := newCRD()
	g.Expect(c.Get(context.Background(), client.ObjectKey{Name: name}, crd)).To(Succeed())
	b64, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	out, err := base64.StdEncoding.DecodeString(b64)
	g.Expect(err).NotTo(HaveOccurred())
	return out
}

// serving is the certificate GetCertificate hands out; nil before one is loaded.
func serving(certs *Certificates) *tls.Certificate {
	cert, err := certs.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		return nil
	}
	return cert
}

// expectVerifies checks that cert is valid at now for every DNS name
// against bundle alone, as the API server checks the webhook's handshake.
func expectVerifies(g Gomega, cert *tls.Certificate, bundle []byte, now time.Time) {
	g.Expect(cert).NotTo(BeNil(), "a certificate is loaded")
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(bundle)).To(BeTrue(), "the bundle holds certificates")
	for _, name := range dnsNames {
		_, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now})
		g.Expect(err).NotTo(HaveOccurred(), "the serving certificate verifies for %s", name)
	}
}

// caCerts parses a CA bundle.
func caCerts(g Gomega, bundle []byte) []*x509.Certificate {
	certs, err := parseCerts(bundle)
	g.Expect(err).NotTo(HaveOccurred())
	return certs
}

// foreignBundle is a valid CA certificate of another CA, what someone who
// tampers with a caBundle would put there.
func foreignBundle(g Gomega) []byte {
	ca, err := newCA(time.Now(), time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	return ca.CertPEM
}

func rotateOptions(ns, secret string) Options {
	return Options{Namespace: ns, SecretName: secret, DNSNames: dnsNames, Rotate: true}
}
