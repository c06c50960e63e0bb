package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/webhookcert/webhookcerttest"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, tdset.Descriptor().AddToScheme)) }

const testSecret = "webhook-server-cert"

// TestWebhookServesOLMsMountedCertificate runs the webhook setup of the
// manager binary with a certificate mounted in --webhook-cert-dir, as OLM
// mounts it: the server hands out that certificate, and the manager neither
// creates its Secret nor injects a CA bundle, which would fight OLM's.
func TestWebhookServesOLMsMountedCertificate(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	dir := t.TempDir()
	leaf := writeMountedCertificate(t, g, dir)
	w, port := startWebhookSetup(t, g, ns, dir)

	g.Eventually(func() ([]byte, error) { return servedCertificate(port) }).Should(Equal(leaf.Raw))
	g.Consistently(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: testSecret}, &corev1.Secret{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "no Secret is created")
		g.Expect(webhookcerttest.CABundles(g, env.Client, w.configuration)).To(HaveEach(BeEmpty()), "no CA bundle is injected")
	}, 3*time.Second).Should(Succeed())
}

// TestWebhookKeepsItsOwnCertificateWithoutAMount is the same setup with an
// empty --webhook-cert-dir: the manager makes the Secret and injects its
// CA, which shows that the test above would see it.
func TestWebhookKeepsItsOwnCertificateWithoutAMount(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	w, port := startWebhookSetup(t, g, ns, t.TempDir())

	secret := &corev1.Secret{}
	g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: testSecret}, secret)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(webhookcerttest.CABundles(g, env.Client, w.configuration)).To(HaveEach(Not(BeEmpty())))
	}).Should(Succeed())
	block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
	g.Expect(block).NotTo(BeNil())
	g.Eventually(func() ([]byte, error) { return servedCertificate(port) }).Should(Equal(block.Bytes))
}

// startWebhookSetup runs the tdset controller's webhook setup as the
// manager binary does, with certificates from dir, against a webhook
// configuration of its own, until the test ends. Its server listens on
// loopback only; it returns the options and the port.
func startWebhookSetup(t *testing.T, g *WithT, ns, dir string) (*webhookOptions, int) {
	t.Helper()
	env := testenv.Get(t)
	w := &webhookOptions{
		port: webhookcerttest.FreePort(g), rotate: true, namespace: ns, secret: testSecret,
		service: "webhook-service", configuration: webhookcerttest.CreateWebhookConfiguration(t, env.Client, "manager-test-"+ns, "nothing.manager.test"), certDir: dir,
	}
	enabled := []reconciler.Descriptor{tdset.Descriptor()}
	srv := manager.NewWebhookServer(webhook.Options{Host: "127.0.0.1", Port: w.port, TLSOpts: []func(*tls.Config){
		func(c *tls.Config) {
			c.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) { return w.getCertificate(hello) }
		},
	}}, false)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0", WebhookServer: srv,
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.setup(mgr, srv, enabled)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with an error: %v", err)
		}
	})
	return w, w.port
}

// writeMountedCertificate writes a self-signed serving certificate as
// tls.crt and tls.key into dir and returns it.
func writeMountedCertificate(t *testing.T, g *WithT, dir string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "olm-issued"},
		DNSNames:     []string{"multi-operator-controller-manager-service.test.svc"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	g.Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, corev1.TLSCertKey), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, corev1.TLSPrivateKeyKey), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)).To(Succeed())
	cert, err := x509.ParseCertificate(der)
	g.Expect(err).NotTo(HaveOccurred())
	return cert
}

// servedCertificate is the DER of the certificate the server on port
// hands out; the test looks at it, so it trusts any.
func servedCertificate(port int) ([]byte, error) {
	conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // only reads the certificate
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0].Raw, nil
}

// A request body above the cap is refused with 413 before it is read, on
// /convert and on the validator alike; one sent without a length ends at
// the cap and fails to decode; and the server goes on answering.
func TestWebhookServerRefusesOversizedBodies(t *testing.T) {
	g := NewWithT(t)
	_, port := startWebhookSetup(t, g, testenv.Get(t).Namespace(t), t.TempDir())
	httpClient := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // the test checks the answers, not the server
	}}
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	// review is a ConversionReview of one object whose field holds size bytes.
	review := func(size int) string {
		return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"schedule.rs/v1","objects":[{"apiVersion":"schedule.rs/v2","kind":"TDSet","metadata":{"name":"x"},"spec":{"big":"` +
			strings.Repeat("a", size) + `"}}]}}`
	}
	post := func(path string, body io.Reader) (int, error) {
		resp, err := httpClient.Post(base+path, "application/json", body)
		if err != nil {
			return 0, err
		}
		defer func() { _ = resp.Body.Close() }()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	g.Eventually(func() (int, error) { return post("/convert", strings.NewReader(review(10))) }).Should(Equal(http.StatusOK))

	oversized := review(manager.MaxWebhookRequestBytes)
	for _, path := range []string{"/convert", "/validate-schedule-rs-v2-tdset"} {
		g.Expect(post(path, strings.NewReader(oversized))).To(Equal(http.StatusRequestEntityTooLarge), path)
	}
	// Without a length (chunked), the body ends at the cap.
	g.Expect(post("/convert", io.MultiReader(strings.NewReader(oversized)))).To(Equal(http.StatusBadRequest))
	g.Expect(post("/convert", strings.NewReader(review(10)))).To(Equal(http.StatusOK), "the server goes on")
}
