package redisclusterbackupschedule

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// NewWithClient is NewReconciler on any client, for tests that drive
// Reconcile themselves.
func NewWithClient(c client.Client, rec events.Recorder, opts reconciler.Options) *Reconciler {
	return newReconciler(c, rec, opts)
}
