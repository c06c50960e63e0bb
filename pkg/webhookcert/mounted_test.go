package webhookcert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/multi-operator/multi-operator/pkg/webhookcert/webhookcerttest"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// mountSecret writes a serving certificate for dnsNames, signed by a new
// CA, into dir the way the kubelet mounts a Secret volume: the files are
// symbolic links through ..data to a directory of this generation, and
// ..data is swapped in one rename, as OLM's renewal of the Secret makes
// the kubelet do. It returns the CA.
func mountSecret(g Gomega, dir string, generation int) *x509.Certificate {
	ca, err := newCA(time.Now(), time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	leaf, err := newServing(ca, dnsNames, time.Now(), 20*time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	gen := "..gen" + strconv.Itoa(generation)
	g.Expect(os.MkdirAll(filepath.Join(dir, gen), 0o700)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, gen, keyTLSCert), leaf.CertPEM, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, gen, keyTLSKey), leaf.KeyPEM, 0o600)).To(Succeed())
	g.Expect(os.Symlink(gen, filepath.Join(dir, "..data_tmp"))).To(Succeed())
	g.Expect(os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data"))).To(Succeed())
	for _, key := range []string{keyTLSCert, keyTLSKey} {
		link := filepath.Join(dir, key)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			g.Expect(os.Symlink(filepath.Join("..data", key), link)).To(Succeed())
		}
	}
	return ca.Cert
}

func TestMountedIn(t *testing.T) {
	write := func(dir string, names ...string) {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(dir string) string
		want  bool
	}{
		{"no directory flag", func(string) string { return "" }, false},
		{"missing directory", func(dir string) string { return filepath.Join(dir, "absent") }, false},
		{"empty directory", func(dir string) string { return dir }, false},
		{"certificate without key", func(dir string) string { write(dir, keyTLSCert); return dir }, false},
		{"key without certificate", func(dir string) string { write(dir, keyTLSKey); return dir }, false},
		{"tls.crt is a directory", func(dir string) string {
			write(dir, keyTLSKey)
			_ = os.Mkdir(filepath.Join(dir, keyTLSCert), 0o700)
			return dir
		}, false},
		{"both", func(dir string) string { write(dir, keyTLSCert, keyTLSKey); return dir }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(MountedIn(tc.setup(t.TempDir()))).To(Equal(tc.want))
		})
	}
}

// TestMountedCertificateIsServedAndReloaded mounts a certificate as OLM
// does: the webhook server completes a handshake with it at once, then with
// the renewed one after the Secret volume's swap, and nothing is written
// to the API server (no Secret appears).
func TestMountedCertificateIsServedAndReloaded(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	dir := t.TempDir()
	firstCA := mountSecret(g, dir, 1)
	g.Expect(MountedIn(dir)).To(BeTrue())
	port := webhookcerttest.FreePort(g)

	var certs *certwatcher.CertWatcher
	env.StartManager(t, testenv.ManagerOptions{}, func(mgr ctrl.Manager) error {
		var err error
		if certs, err = SetupMounted(mgr, dir); err != nil {
			return err
		}
		return mgr.Add(webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, TLSOpts: []func(*tls.Config){
			func(c *tls.Config) { c.GetCertificate = certs.GetCertificate },
		}}))
	})
	g.Eventually(func() error { return handshake(port, firstCA) }).Should(Succeed())

	renewedCA := mountSecret(g, dir, 2)
	g.Eventually(func() error { return handshake(port, renewedCA) }, time.Minute).Should(Succeed(), "the renewal is served without a restart")
	g.Expect(handshake(port, firstCA)).NotTo(Succeed(), "the old certificate is no longer served")

	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(context.Background(), secrets, client.InNamespace(ns))).To(Succeed())
	g.Expect(secrets.Items).To(BeEmpty(), "nothing is written to the API server")
}

func TestSetupMountedRejectsABrokenPair(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, keyTLSCert), []byte("not a certificate"), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, keyTLSKey), []byte("not a key"), 0o600)).To(Succeed())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = SetupMounted(mgr, dir)
	g.Expect(err).To(MatchError(ContainSubstring(dir)))
}

// handshake completes a TLS handshake with the webhook server on port,
// trusting ca alone, for the first of dnsNames.
func handshake(port int, ca *x509.Certificate) error {
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: pool, ServerName: dnsNames[0], MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	return conn.Close()
}
