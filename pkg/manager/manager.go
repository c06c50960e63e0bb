// Package manager is the manager process's plumbing: the --controllers
// selection, the options each controller is built with, the client's rate
// limit, the cache that holds only managed objects, the webhook server, and
// the check that each enabled controller's CRD is installed. Controllers do
// not import it: they describe themselves with reconciler.Descriptor.
package manager

// DefaultMaxConcurrentReconciles is how many reconciles each controller
// runs in parallel unless --max-concurrent-reconciles says otherwise. A
// reconcile spends most of its time waiting for the API server, so a few
// hundred objects that need work at the same instant (a burst of creates, a
// TDSet window boundary) are worked through in parallel, not one by one.
const DefaultMaxConcurrentReconciles = 16
