package main

import (
	"crypto/tls"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/webhookcert"
)

// defaultNamespace is the namespace of the kustomize overlays, for a
// manager that runs outside a cluster (make run) and has no POD_NAMESPACE.
const defaultNamespace = "multi-operator-system"

// webhookOptions are the flags of the webhook server and its certificates.
type webhookOptions struct {
	port          int
	rotate        bool
	namespace     string
	secret        string
	service       string
	hosts         []string
	configuration string
	reusePort     bool
	certDir       string
	// getCertificate serves what setup loaded, whoever issues it: the
	// manager itself (webhookcert.Certificates) or OLM, which mounts it.
	getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

func (w *webhookOptions) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&w.port, "webhook-port", webhook.DefaultPort, "Port of the webhook server (TDSet conversion and validation); every replica serves it. 0 turns it off.")
	fs.BoolVar(&w.rotate, "webhook-cert-rotation", true, "Create and rotate the webhook server's CA and certificate in --webhook-secret and inject the CA into the CRDs and the webhook configuration; false when cert-manager does that.")
	fs.StringVar(&w.namespace, "webhook-namespace", "", "Namespace of --webhook-secret and --webhook-service; defaults to $POD_NAMESPACE, else "+defaultNamespace+".")
	fs.StringVar(&w.secret, "webhook-secret", "multi-operator-webhook-server-cert", "Secret with the webhook server's certificate (tls.crt, tls.key, ca.crt).")
	fs.StringVar(&w.service, "webhook-service", "multi-operator-webhook-service", "Service in front of the webhook server; the certificate is made for its DNS names.")
	fs.StringSliceVar(&w.hosts, "webhook-host", nil, "More DNS names for the certificate, such as localhost when the API server calls the webhooks at a URL (make run).")
	fs.StringVar(&w.configuration, "webhook-configuration", "multi-operator-validating-webhook-configuration", "ValidatingWebhookConfiguration the CA bundle is injected into.")
	fs.BoolVar(&w.reusePort, "webhook-reuse-port", false, "Bind the webhook port with SO_REUSEPORT, so that two managers on one host (a local run and its standby) serve it together.")
	fs.StringVar(&w.certDir, "webhook-cert-dir", webhookcert.DefaultCertDir, "Directory where an issuer mounts the webhook server's tls.crt and tls.key, as OLM does. When both exist at start, the manager serves them and reloads them on change, and neither keeps --webhook-secret nor injects a CA bundle; empty never looks.")
}

// namespaceOrDefault is --webhook-namespace, $POD_NAMESPACE or the overlays' namespace.
func (w *webhookOptions) namespaceOrDefault() string {
	if w.namespace != "" {
		return w.namespace
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return defaultNamespace
}

// server returns the webhook server for ctrl.Options. It serves the
// certificates setup loads once the manager exists. With no enabled
// controller that has webhooks, or --webhook-port=0, there is no server.
func (w *webhookOptions) server(enabled []reconciler.Descriptor) webhook.Server {
	if w.port == 0 || len(manager.WithWebhooks(enabled)) == 0 {
		return nil
	}
	return manager.NewWebhookServer(webhook.Options{
		Port: w.port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			// setup runs before the manager starts the server.
			c.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) { return w.getCertificate(hello) }
		}},
	}, w.reusePort)
}

// setup loads or makes the certificates, registers every enabled
// controller's webhooks and the readiness checks: a replica is ready once
// it has a certificate and its server listens.
func (w *webhookOptions) setup(mgr ctrl.Manager, srv webhook.Server, enabled []reconciler.Descriptor) error {
	if err := w.certificate(mgr, enabled); err != nil {
		return fmt.Errorf("webhook certificates: %w", err)
	}
	for _, d := range manager.WithWebhooks(enabled) {
		if err := d.Webhooks(mgr); err != nil {
			return fmt.Errorf("webhooks of %s: %w", d.Name, err)
		}
	}
	return mgr.AddReadyzCheck("webhook-server", srv.StartedChecker())
}

// certificate sets up the mounted certificate when --webhook-cert-dir
// holds one (OLM's: it issues, rotates and injects it, under a webhook
// configuration name of its own, so the manager must not fight it over
// the CRD's caBundle; it is loaded before the server starts), else the one
// the manager keeps in --webhook-secret, which is ready once loaded.
func (w *webhookOptions) certificate(mgr ctrl.Manager, enabled []reconciler.Descriptor) error {
	if webhookcert.MountedIn(w.certDir) {
		mgr.GetLogger().WithName("setup").Info("serving the webhook certificate mounted in --webhook-cert-dir; not keeping --webhook-secret nor injecting a CA bundle", "dir", w.certDir)
		mounted, err := webhookcert.SetupMounted(mgr, w.certDir)
		if err != nil {
			return err
		}
		w.getCertificate = mounted.GetCertificate
		return nil
	}
	crds, err := manager.ConversionCRDs(mgr.GetScheme(), enabled)
	if err != nil {
		return err
	}
	ns := w.namespaceOrDefault()
	dns := append([]string{
		fmt.Sprintf("%s.%s.svc", w.service, ns),
		fmt.Sprintf("%s.%s.svc.cluster.local", w.service, ns),
	}, w.hosts...)
	certs, err := webhookcert.Setup(mgr, webhookcert.Options{
		Namespace:                       ns,
		SecretName:                      w.secret,
		DNSNames:                        dns,
		ConversionCRDs:                  crds,
		ValidatingWebhookConfigurations: []string{w.configuration},
		Rotate:                          w.rotate,
	})
	if err != nil {
		return err
	}
	w.getCertificate = certs.GetCertificate
	return mgr.AddReadyzCheck("webhook-certificate", certs.ReadyCheck())
}
