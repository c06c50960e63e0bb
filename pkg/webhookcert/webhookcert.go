// Package webhookcert gives the manager the certificates of its webhook
// server without cert-manager: a self-signed CA and a serving certificate
// kept in one Secret, loaded into memory, and the CA bundle injected into
// the CRDs that convert through the webhook and into the
// ValidatingWebhookConfigurations that call it.
//
// Every replica serves the webhooks, so every replica runs it (it needs no
// leader election). Replicas share the Secret and agree through optimistic
// concurrency: the first write wins and the others adopt its certificates.
// The serving certificate is handed to the webhook server through
// tls.Config.GetCertificate, so no file is mounted and a renewal is served
// as soon as the Secret's watch event arrives, not after the kubelet's sync
// of a mounted Secret. Wire it as:
//
//	var certs *webhookcert.Certificates
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		WebhookServer: webhook.NewServer(webhook.Options{TLSOpts: []func(*tls.Config){
//			func(c *tls.Config) { c.GetCertificate = certs.GetCertificate },
//		}}),
//	})
//	certs, err = webhookcert.Setup(mgr, webhookcert.Options{...})
//	mgr.AddReadyzCheck("webhook-certificate", certs.ReadyCheck())
//
// (the TLS options run when the server starts, after Setup). With
// Options.Rotate false, cert-manager (or anyone) owns the Secret and the CA
// injection; the package then only reads the Secret and never writes.
//
// Under OLM, which issues the certificate, mounts it into the Deployment at
// DefaultCertDir and injects its CA itself, SetupMounted serves the mounted
// files instead: no Secret, no rotation, no injection.
//
// It watches only the objects it names, each through an informer of its
// own restricted by a metadata.name field selector, so that neither the
// manager's memory nor its RBAC covers every Secret, CRD or webhook
// configuration of the cluster.
package webhookcert

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// Defaults of Options. A CA lives long, so that its rotation (the delicate
// part, where the API server must trust two CAs) is rare; a serving
// certificate lives short, so that a leaked key is useful only briefly.
const (
	// DefaultCAValidity is how long a new CA is valid: a year.
	DefaultCAValidity = 365 * 24 * time.Hour
	// DefaultCAGrace is how long a new CA is trusted before it signs the
	// served certificate.
	DefaultCAGrace = 5 * time.Minute
	// DefaultCertValidity is how long a new serving certificate is valid:
	// 90 days, renewed 30 days before it expires.
	DefaultCertValidity = 90 * 24 * time.Hour
)

// Options say which Secret holds the certificates, what they are for and
// where the CA bundle goes.
type Options struct {
	// Namespace and SecretName name the Secret with the keys ca.crt, ca.key
	// (Rotate only), tls.crt and tls.key. ca.crt may hold several CAs: the
	// one that signs first, then older ones not yet expired.
	Namespace, SecretName string
	// DNSNames are the names the API server dials, such as
	// multi-operator-webhook-service.multi-operator-system.svc; the first is
	// also the certificate's common name. A change renews the certificate.
	DNSNames []string
	// ConversionCRDs name the CRDs whose
	// spec.conversion.webhook.clientConfig.caBundle gets the CA bundle. A CRD
	// is left alone unless its conversion strategy is Webhook, or while it
	// does not exist.
	ConversionCRDs []string
	// ValidatingWebhookConfigurations name the configurations whose every
	// webhook's clientConfig.caBundle gets the CA bundle.
	ValidatingWebhookConfigurations []string
	// Rotate makes this package own the certificates: create, renew and
	// inject them. When false (cert-manager mode) it only reads tls.crt,
	// tls.key and ca.crt from the Secret and never writes anything.
	Rotate bool
	// CAValidity is how long a new CA is valid (DefaultCAValidity when 0).
	// The CA is renewed when less than a third of it is left, early enough
	// for a full serving certificate and for the API server to learn the new
	// CA while it still trusts the old one.
	CAValidity time.Duration
	// CertValidity is how long a new serving certificate is valid
	// (DefaultCertValidity when 0); at most a third of CAValidity, so that
	// every serving certificate runs its full term under one CA.
	CertValidity time.Duration
	// RefreshBefore is how long before its expiry the serving certificate is
	// renewed (a third of CertValidity when 0): long enough to retry through
	// an API server outage.
	RefreshBefore time.Duration
	// CAGrace is how long a new CA is only trusted before it signs the
	// served certificate (DefaultCAGrace when 0): every API server, each
	// with its own watch of the webhook configurations and CRDs, must
	// trust the new CA before a replica serves a certificate it signed.
	CAGrace time.Duration
	// Clock tells the time (the real one when nil), so that tests can
	// travel to the renewal. When it also implements clock.Clock, as the
	// fake clock of k8s.io/utils/clock/testing does, its timers wake the
	// renewal too.
	Clock clock.PassiveClock
}

// withDefaults fills the zero values and rejects options that could not
// work, at Setup rather than at the first renewal.
func (o Options) withDefaults() (Options, error) {
	o.DNSNames = slices.Clone(o.DNSNames)
	if o.CAValidity == 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.CertValidity == 0 {
		o.CertValidity = DefaultCertValidity
	}
	if o.RefreshBefore == 0 {
		o.RefreshBefore = o.CertValidity / 3
	}
	if o.CAGrace == 0 {
		o.CAGrace = DefaultCAGrace
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	var errs []error
	if o.Namespace == "" || o.SecretName == "" {
		errs = append(errs, errors.New("the Secret's namespace and name are required"))
	}
	if o.Rotate && len(o.DNSNames) == 0 {
		errs = append(errs, errors.New("at least one DNS name is required to issue a certificate"))
	}
	if o.CAValidity < 0 || o.CertValidity < 0 || o.RefreshBefore < 0 || o.CAGrace < 0 {
		errs = append(errs, errors.New("validities must not be negative"))
	}
	if o.CertValidity > o.CAValidity/3 {
		errs = append(errs, fmt.Errorf("CertValidity %s exceeds a third of CAValidity %s", o.CertValidity, o.CAValidity))
	}
	if o.RefreshBefore >= o.CertValidity {
		errs = append(errs, fmt.Errorf("RefreshBefore %s must be shorter than CertValidity %s", o.RefreshBefore, o.CertValidity))
	}
	return o, errors.Join(errs...)
}

// caRefreshBefore is how long before its expiry the CA is renewed.
func (o Options) caRefreshBefore() time.Duration { return o.CAValidity / 3 }

// Certificates is the webhook server's certificate as this replica knows
// it. Setup returns it; it is safe for concurrent use.
type Certificates struct {
	opts   Options
	log    logr.Logger
	client client.Client // uncached: writes, and reads that must be fresh
	// timers wake the loop at the renewal time; opts.Clock when it can.
	timers  clock.Clock
	mgr     ctrl.Manager
	cert    atomic.Pointer[tls.Certificate]
	trigger chan struct{}
	// watch holds the dedicated caches, set once Start built them.
	watch *watches
	// syncs counts finished syncs, so that tests know one ran.
	syncs atomic.Int64
}

// Setup registers with mgr a runnable that keeps the certificates (every
// replica runs it, not only the leader) and returns the certificates it
// keeps. Nothing is read before the manager starts.
func Setup(mgr ctrl.Manager, opts Options) (*Certificates, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("webhook certificate options: %w", err)
	}
	for _, obj := range []client.Object{&corev1.Secret{}, &admissionregistrationv1.ValidatingWebhookConfiguration{}} {
		if _, err := apiutil.GVKForObject(obj, mgr.GetScheme()); err != nil {
			return nil, fmt.Errorf("the manager's scheme must know the built-in kinds: %w", err)
		}
	}
	// An uncached client of its own: a Get through the manager's client
	// would start a cluster-wide informer of Secrets.
	c, err := client.New(mgr.GetConfig(), client.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	certs := &Certificates{
		opts:    opts,
		log:     mgr.GetLogger().WithName("webhookcert").WithValues("secret", opts.Namespace+"/"+opts.SecretName),
		client:  c,
		timers:  clockFor(opts),
		mgr:     mgr,
		trigger: make(chan struct{}, 1),
	}
	if err := mgr.Add(runnable{certs}); err != nil {
		return nil, err
	}
	return certs, nil
}

// GetCertificate returns the current serving certificate, for
// tls.Config.GetCertificate: each TLS handshake gets the newest one, so a
// renewal needs no restart. It fails until a certificate is loaded, which
// fails the handshake rather than serving something the API server cannot
// trust.
func (c *Certificates) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cert := c.cert.Load()
	if cert == nil {
		return nil, errors.New("no webhook serving certificate loaded yet")
	}
	return cert, nil
}

// ReadyCheck fails until a serving certificate is loaded, so that the
// Service sends the API server's webhook calls only to replicas that can
// complete a handshake.
func (c *Certificates) ReadyCheck() healthz.Checker {
	return func(*http.Request) error {
		if c.cert.Load() == nil {
			return errors.New("no webhook serving certificate loaded yet")
		}
		return nil
	}
}

// clockFor is the clock whose timers wake the loop: opts.Clock when it has
// timers, so that a fake clock's Step fires the renewal, else the real one.
func clockFor(opts Options) clock.Clock {
	if c, ok := opts.Clock.(clock.Clock); ok {
		return c
	}
	return clock.RealClock{}
}

// poke asks the loop for a sync; pokes while one is pending coalesce.
func (c *Certificates) poke() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}
