package webhookcert

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// DefaultCertDir is controller-runtime's default certificate directory for
// its webhook server. OLM mounts the serving certificate it issues for a
// CSV's webhookdefinitions there (tls.crt and tls.key of the Secret
// <deployment>-service-cert), whatever the Deployment of the CSV says, so a
// manager finds it without a flag of its own.
var DefaultCertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")

// MountedIn tells whether dir holds a certificate to serve: both tls.crt
// and tls.key exist. A directory with only one of them holds none.
func MountedIn(dir string) bool {
	if dir == "" {
		return false
	}
	for _, key := range []string{keyTLSCert, keyTLSKey} {
		if st, err := os.Stat(filepath.Join(dir, key)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// SetupMounted serves a certificate that someone else issues and mounts
// as files, as OLM does: it reads tls.crt and tls.key in dir and registers
// with mgr a watch that re-reads them on every replica when they change (a
// renewal updates the mounted Secret). Nothing is written to the API
// server: the issuer also injects its CA into the CRDs and webhook
// configurations, which it may name as it likes. It fails when the files
// do not make a key pair, at start rather than at the first handshake; the
// watcher's GetCertificate serves them from then on.
func SetupMounted(mgr ctrl.Manager, dir string) (*certwatcher.CertWatcher, error) {
	w, err := certwatcher.New(filepath.Join(dir, keyTLSCert), filepath.Join(dir, keyTLSKey))
	if err != nil {
		return nil, fmt.Errorf("reading the webhook certificate mounted in %s: %w", dir, err)
	}
	log := mgr.GetLogger().WithName("webhookcert").WithValues("dir", dir)
	w.RegisterCallback(func(cert tls.Certificate) {
		if cert.Leaf == nil {
			return
		}
		setExpiry("serving", cert.Leaf.NotAfter)
		log.Info("serving the mounted webhook certificate", "serial", cert.Leaf.SerialNumber.Text(16),
			"dnsNames", cert.Leaf.DNSNames, "issuer", cert.Leaf.Issuer.CommonName, "notAfter", cert.Leaf.NotAfter)
	})
	// The watcher needs no leader election: every replica serves webhooks.
	if err := mgr.Add(w); err != nil {
		return nil, err
	}
	return w, nil
}
