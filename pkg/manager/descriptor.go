// Package manager holds what the manager binary needs to run a set of
// controllers: the controller descriptor, the --controllers selection, the
// cache that holds only managed children, and the check that each enabled
// controller's CRD is installed.
package manager

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultMaxConcurrentReconciles is how many reconciles each controller
// runs in parallel unless --max-concurrent-reconciles says otherwise. A
// reconcile spends most of its time waiting for the API server, so a few
// hundred objects that need work at the same instant (a burst of creates, a
// TDSet window boundary) are worked through in parallel, not one by one.
const DefaultMaxConcurrentReconciles = 16

// Descriptor describes one controller the manager can run.
type Descriptor struct {
	// Name is what --controllers calls it.
	Name string
	// Description is its one line in --help.
	Description string
	// AddToScheme registers the controller's API types.
	AddToScheme func(*runtime.Scheme) error
	// For is the custom resource the controller reconciles. Its CRD must be
	// installed while the controller is enabled.
	For client.Object
	// Owns lists the kinds of child objects the controller creates. The
	// manager's cache holds only the ones labelled as managed by this project.
	Owns []client.Object
	// Setup registers the controller with the manager. Only enabled
	// controllers are set up, so a disabled one starts no watch.
	Setup func(mgr ctrl.Manager) error
}
