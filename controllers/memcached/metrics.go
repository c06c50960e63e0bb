package memcached

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/objectmetrics"
)

// The controller's own metrics, on controller-runtime's registry, so the
// manager's metrics endpoint serves them. Every series is labelled with
// the Memcached's namespace and name, and goes with the Memcached
// (forgetMetrics).
var (
	// serversDesired is spec.size as last reconciled, beside
	// serversAvailable so that one query finds a Memcached short of servers.
	serversDesired = objectmetrics.GaugeVec("memcached_servers_desired",
		"Servers the Memcached asks for (spec.size), as of its last status.")

	// serversAvailable is what the Deployment reports available.
	serversAvailable = objectmetrics.GaugeVec("memcached_servers_available",
		"Servers of the Memcached that its Deployment reports available, as of its last status.")
)

func init() {
	metrics.Registry.MustRegister(serversDesired, serversAvailable)
}

// recordServers sets the gauges from what the status was computed from.
func recordServers(m *cachev1alpha1.Memcached, d deploymentReport) {
	serversDesired.WithLabelValues(m.Namespace, m.Name).Set(float64(m.Spec.Size))
	serversAvailable.WithLabelValues(m.Namespace, m.Name).Set(float64(d.availableReplicas))
}

// forgetMetrics drops every series of a deleted Memcached.
func forgetMetrics(namespace, name string) {
	objectmetrics.Forget(namespace, name, serversDesired, serversAvailable)
}
