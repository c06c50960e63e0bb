package manager

import (
	"k8s.io/client-go/rest"
)

// DefaultKubeAPIQPS is the manager's default client-side request rate, the
// one cluster-api and KEDA default to. A burst of new custom resources then
// yields to the API server's other clients: each new child sets off
// kube-controller-manager, the scheduler and the kubelet, and unthrottled,
// 500 new Memcacheds slowed a user's own creates 14-17x on the benchmark's
// cluster, 2.6-3.5x at 20 per second and 1.65x at 10; the price is
// convergence time, 130 s instead of 45 s for those 500 (README, Scale).
// 0 sets no client-side limit and leaves fairness to the API server's
// Priority and Fairness alone.
const DefaultKubeAPIQPS = 20

// DefaultKubeAPIBurst is the default burst above --kube-api-qps.
const DefaultKubeAPIBurst = 30

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
