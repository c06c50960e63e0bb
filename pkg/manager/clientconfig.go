package manager

import (
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// EventsQPS and EventsBurst are the budget of the manager's events, apart
// from the controllers' requests: an event storm (every custom resource
// failing at once) neither delays the reconcilers nor, without a
// client-side limit, floods the API server; the event recorder queues and
// then drops what the budget cannot send.
const (
	EventsQPS   = 5
	EventsBurst = 25
)

// ClientConfig returns a copy of cfg for the manager. Requests take their
// tokens by class, each class from a bucket of its own: events from the
// events' bucket (EventsQPS), every other request from one bucket of qps
// per second and burst at once, whatever its kind (client-go would
// otherwise give each per-kind client a bucket of its own, and the
// manager's rate would grow with the kinds it watches). Requests that wait
// for a token go out together, every releaseQuantum. The controllers'
// bucket holds everything else the manager sends on this config: reads
// and writes, discovery, the webhook certificate's upkeep and WhaleSay's
// log reads; leader election (LeaderElectionConfig) and the metrics
// endpoint's reviews (metricsauth.Provider) have budgets of their own.
// With qps 0 or less the controllers' requests have no client-side limit.
//
// It also asks for uncompressed responses: the API server gzips responses
// above 128 KiB, the informers' initial lists and relists of many objects,
// and decompressing them costs the manager more CPU than the loopback or
// in-cluster network saves.
func ClientConfig(cfg *rest.Config, qps float32, burst int) *rest.Config {
	out, _ := clientConfig(cfg, qps, burst)
	return out
}

// budgets are the token buckets of one ClientConfig; a nil bucket sets no
// limit.
type budgets struct {
	requests, events flowcontrol.RateLimiter
}

func clientConfig(cfg *rest.Config, qps float32, burst int) (*rest.Config, *budgets) {
	out := rest.CopyConfig(cfg)
	out.DisableCompression = true
	// client-go's own limiter is per client and sees no request; the
	// budgets are applied by the transport, which sees each one.
	out.QPS, out.Burst, out.RateLimiter = -1, 0, nil
	b := &budgets{events: newQuantizedLimiter(EventsQPS, EventsBurst, releaseQuantum)}
	if qps > 0 {
		b.requests = newQuantizedLimiter(qps, max(burst, 1), releaseQuantum)
	}
	out.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &budgetTransport{budgets: b, next: next}
	})
	return out, b
}

// budgetTransport waits for a token from its request's budget before it
// sends the request.
type budgetTransport struct {
	*budgets
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *budgetTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	bucket := t.requests
	if isEvent(req.URL.Path) {
		bucket = t.events
	}
	if bucket != nil {
		if err := bucket.Wait(req.Context()); err != nil {
			return nil, err
		}
	}
	return t.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go's debugging wrappers reach the
// transport underneath.
func (t *budgetTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// isEvent reports whether an API path (after any prefix of the server's
// URL) is a request on events, of events.k8s.io or of the core group.
func isEvent(p string) bool {
	if strings.Contains(p, "/apis/events.k8s.io/") {
		return true
	}
	i := strings.Index(p, "/api/v1/")
	if i < 0 {
		return false
	}
	parts := strings.Split(strings.Trim(p[i+len("/api/v1/"):], "/"), "/")
	if len(parts) >= 3 && parts[0] == "namespaces" {
		return parts[2] == "events"
	}
	return parts[0] == "events"
}

// LeaderElectionConfig returns a copy of cfg for leader election alone: no
// client-side limit, so that renewing the lease never waits behind the
// controllers' requests and a busy leader does not lose its lease; and a
// connection of its own. client-go shares one cached transport, and so
// one HTTP/2 connection, among configs that differ only in their limits;
// a config with a Dial function is never taken from that cache (client-go
// wraps the function anew on every transport it builds, so no two keys
// match), which gives the lease a connection the controllers' watches and
// requests do not share: it never queues for a stream behind them, nor
// dies with their connection.
func LeaderElectionConfig(cfg *rest.Config) *rest.Config {
	out := ClientConfig(cfg, 0, 0)
	if out.Dial == nil {
		out.Dial = (&net.Dialer{Timeout: leaseDialTimeout, KeepAlive: leaseDialTimeout}).DialContext
	}
	return out
}

// leaseDialTimeout is client-go's own dial timeout and keep-alive, which
// the lease's connection keeps.
const leaseDialTimeout = 30 * time.Second

// DefaultGCHeadroomMiB is how far, in MiB, the manager's heap may grow past
// its live objects before Go collects (pkg/gcheadroom), once more than that
// is live. Go's default lets it double, so that each custom resource in the
// cache would cost twice its size in peak memory (docs/scale.md).
const DefaultGCHeadroomMiB = 8
