package manager

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// ClientConfigWithBudgets is ClientConfig that also returns the buckets of
// the controllers' requests (nil without a limit) and of the events.
func ClientConfigWithBudgets(cfg *rest.Config, qps float32, burst int) (*rest.Config, flowcontrol.RateLimiter, flowcontrol.RateLimiter) {
	out, b := clientConfig(cfg, qps, burst)
	return out, b.requests, b.events
}

// IsEvent exposes isEvent to the table test.
var IsEvent = isEvent
