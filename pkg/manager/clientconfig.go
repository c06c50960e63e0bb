package manager

import (
	"k8s.io/client-go/rest"
)

// DefaultKubeAPIQPS is the manager's default client-side request rate,
// tuned so that a burst of new custom resources yields to the API server's
// other clients: each new child sets off kube-controller-manager, the
// scheduler and the kubelet, many writes for each Deployment. A lower rate
// slows other clients less during a burst and costs convergence time
// (docs/scale.md has the measured trade-off). 0 sets no client-side limit
// and leaves fairness to the API server's Priority and Fairness alone.
const DefaultKubeAPIQPS = 10

// DefaultKubeAPIBurst is the default burst above --kube-api-qps: the
// requests one new custom resource makes at once (a Memcached's finalizer,
// Deployment, Service and event; its status follows once the Deployment
// is available, when the bucket has refilled), so that a single one
// converges without waiting, and no more: the burst is what an operator
// sends the moment a client's burst of new CRs begins, on top of the rate,
// so a larger one slows the client more (docs/scale.md).
const DefaultKubeAPIBurst = 5

// ClientConfig returns a copy of cfg for the manager. With qps above 0,
// every client made from it, whatever its kind, takes its requests from
// one token bucket of qps per second and burst at once: client-go would
// otherwise give each per-kind client a bucket of its own, and the
// manager's rate would grow with the kinds it watches. Requests that wait
// for a token go out together, every releaseQuantum. The bucket holds
// everything the manager sends on this config: the controllers' reads and
// writes, events, discovery, the webhook certificate's upkeep and
// WhaleSay's log reads; the metrics endpoint's reviews have a budget of
// their own (metricsauth.Provider). With qps 0 or less there is no
// client-side limit.
//
// It also asks for uncompressed responses: the API server gzips responses
// above 128 KiB, the informers' initial lists and relists of many objects,
// and decompressing them costs the manager more CPU than the loopback or
// in-cluster network saves.
func ClientConfig(cfg *rest.Config, qps float32, burst int) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.DisableCompression = true
	if qps <= 0 {
		out.QPS, out.Burst, out.RateLimiter = -1, 0, nil
		return out
	}
	if burst < 1 {
		burst = 1
	}
	out.QPS, out.Burst = qps, burst
	out.RateLimiter = newQuantizedLimiter(qps, burst, releaseQuantum)
	return out
}

// LeaderElectionConfig returns a copy of cfg for leader election alone: no
// client-side limit, so that renewing the lease never waits behind the
// controllers' requests and a busy leader does not lose its lease.
func LeaderElectionConfig(cfg *rest.Config) *rest.Config {
	return ClientConfig(cfg, 0, 0)
}

// DefaultGCHeadroomMiB is how far, in MiB, the manager's heap may grow past
// its live objects before Go collects (pkg/gcheadroom), once more than that
// is live. Go's default lets it double, so that each custom resource in the
// cache would cost twice its size in peak memory (docs/scale.md).
const DefaultGCHeadroomMiB = 8
