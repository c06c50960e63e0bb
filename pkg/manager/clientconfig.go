package manager

import (
	"k8s.io/client-go/rest"
)

// DefaultKubeAPIQPS is the manager's default client-side request rate,
// tuned so that a burst of new custom resources yields to the API server's
// other clients: each new child sets off kube-controller-manager, the
// scheduler and the kubelet, about 20 writes for a Deployment. On the
// benchmark's cluster, a user's 500 creates took 1.12x their time with no
// operator at 10 per second with a burst of 5 (seven paired rounds), 1.19x
// with a burst of 10, 1.20x at 15, 1.38x at 20 with a burst of 10 and
// 1.52x at 20 with a burst of 30, what cluster-api and KEDA default to,
// and about 15x unthrottled. The price is convergence time: 500 new
// Memcacheds, 5 requests each, take about 250 s (README, Scale). 0 sets no
// client-side limit and leaves fairness to the API server's Priority and
// Fairness alone.
const DefaultKubeAPIQPS = 10

// DefaultKubeAPIBurst is the default burst above --kube-api-qps: the
// requests one new custom resource makes at once (a Memcached's finalizer,
// Deployment, Service and event; its status follows once the Deployment
// is available, when the bucket has refilled), so that a single one
// converges without waiting, and no more: the burst is what an operator
// sends the moment a client's burst of new CRs begins, on top of the rate
// (a burst of 10 slowed the client's creates 1.19x, one of 5 1.12x).
const DefaultKubeAPIBurst = 5

// ClientConfig returns a copy of cfg for the manager. With qps above 0,
// every client made from it, whatever its kind, takes its requests from
// one token bucket of qps per second and burst at once: client-go would
// otherwise give each per-kind client a bucket of its own, and the
// manager's rate would grow with the kinds it watches. Requests that wait
// for a token go out together, every releaseQuantum. The bucket holds
// everything the manager sends on this config: the controllers' reads and
// writes, events, discovery, the webhook certificate's upkeep, the metrics
// endpoint's reviews and WhaleSay's log reads. With qps 0 or less there is
// no client-side limit.
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
// cache cost twice its size in peak memory: 17-22 KiB per Memcached with
// its Deployment and Service, against 7-9 KiB with 8 MiB of headroom
// (README, Scale).
const DefaultGCHeadroomMiB = 8
