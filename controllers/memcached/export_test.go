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

// SetStartupGrace sets how long r holds a new Memcached's first status for
// its servers to become available.
func SetStartupGrace(r *Reconciler, grace time.Duration) { r.startupGrace = grace }
