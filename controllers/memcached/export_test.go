package memcached

import (
	"context"
	"time"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
)

// WrapCleanup replaces r's cleanup with wrap applied to it, so that a test
// can make the cleanup fail and later let the real one run.
func WrapCleanup(r *Reconciler, wrap func(real func(context.Context, *cachev1alpha1.Memcached) error) func(context.Context, *cachev1alpha1.Memcached) error) {
	r.cleanup = wrap(r.cleanup)
}

// SetPodMonitorRefresh makes r ask sooner whether PodMonitors are served,
// so that a test sees a CRD installed mid-test quickly.
func SetPodMonitorRefresh(r *Reconciler, d time.Duration) { r.podMonitors.Served.Refresh = d }
