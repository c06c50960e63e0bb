package webhookcert

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// expiry exposes when the certificates expire, so that an alert can fire
// well before the API server starts rejecting the webhook's handshakes,
// whatever the reason renewal stopped (RBAC, cert-manager, a stuck replica).
var expiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "webhook_certificate_expiry_timestamp_seconds",
	Help: "When the webhook server's certificate expires, in seconds since the Unix epoch: certificate=serving for the one this replica serves, certificate=ca for the CA that signs it.",
}, []string{"certificate"})

func init() { metrics.Registry.MustRegister(expiry) }

// setExpiry records a certificate's expiry; a zero time leaves it unset.
func setExpiry(certificate string, notAfter time.Time) {
	if !notAfter.IsZero() {
		expiry.WithLabelValues(certificate).Set(float64(notAfter.Unix()))
	}
}
