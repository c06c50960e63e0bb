package tdset

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// NewWithClient is NewReconciler on client c, for tests that call Reconcile
// themselves and must read what they just wrote.
func NewWithClient(c client.Client, rec events.Recorder, opts reconciler.Options) *Reconciler {
	return newReconciler(c, rec, opts)
}

// IndexSource is SourceIndex's function.
var IndexSource = indexSource
