// This file is the contract every controller fills in: a Descriptor that
// says what it reconciles and manages, and a Setup built with SetupWith.
// pkg/manager turns the enabled descriptors into a running process.

package reconciler

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
	// Managed lists the other kinds the controller reads or writes: the
	// children it creates and objects it only reads, such as a StatefulSet's
	// Pods. The manager's cache holds only the ones labelled as managed by
	// this project.
	Managed []client.Object
	// Referenced lists kinds whose objects custom resources name, such as
	// Secrets with passwords. The cache holds only the ones labelled
	// multi-operator.dev/watch=true (ownership.LabelWatch), including those
	// the controller makes itself; a kind is Managed or Referenced, not both.
	Referenced []client.Object
	// Read lists custom resources of other kinds the controller only
	// reads, such as TDSet's Calendars. Users create them without this
	// project's labels, so the cache holds all of them, but only what a
	// controller reads of them: their labels, annotations, owner
	// references and finalizers are dropped (a kubectl-applied object's
	// last-applied annotation is as large as its spec). Their CRDs may be
	// missing: the cache maps a Read kind only once the controller watches
	// it, so a controller that asks first (manager.Serves) runs without
	// them.
	Read []client.Object
	// ImageEnv names the environment variable with the operand image, and
	// DefaultImage is the image when it is unset. Both are empty for a
	// controller whose custom resources always name their image.
	ImageEnv, DefaultImage string
	// ExporterImageEnv names the environment variable with the image of the
	// metrics exporter the controller runs beside its operand, and
	// DefaultExporterImage is that image when it is unset. Both are empty
	// for a controller without an exporter sidecar.
	ExporterImageEnv, DefaultExporterImage string
	// ExporterScrapersEnv names the environment variable that says who may
	// reach the exporter's metrics port, which the controller's
	// NetworkPolicy admits, and DefaultExporterScrapers is its value when it
	// is unset. Both are empty for a controller whose operands have no
	// NetworkPolicy.
	ExporterScrapersEnv, DefaultExporterScrapers string
	// Setup builds the controller with opts and registers it with the
	// manager. Only enabled controllers are set up, so a disabled one starts
	// no watch.
	Setup func(mgr ctrl.Manager, opts Options) error
	// Webhooks, when set, registers the controller's admission and
	// conversion webhooks with the manager's webhook server. The manager
	// serves webhooks only while an enabled controller has some.
	Webhooks func(mgr ctrl.Manager) error
	// Conversion says that For is served in several API versions converted
	// by the manager's /convert webhook, so the manager injects its CA
	// bundle into For's CRD.
	Conversion bool
}

// Registrar is what every controller's NewReconciler returns.
type Registrar interface {
	// SetupWithManager registers the reconciler and its watches.
	SetupWithManager(mgr ctrl.Manager) error
}

// sharer is a reconciler whose workers a NamespaceShare can bound, as
// every reconciler built on Flow is.
type sharer interface{ ShareWorkers(*NamespaceShare) }

// SetupWith turns a controller's NewReconciler into a Descriptor's Setup.
func SetupWith[R Registrar](newReconciler func(ctrl.Manager, Options) (R, error)) func(ctrl.Manager, Options) error {
	return func(mgr ctrl.Manager, opts Options) error {
		r, err := newReconciler(mgr, opts)
		if err != nil {
			return err
		}
		if shared, ok := any(r).(sharer); ok && opts.PerNamespace > 0 {
			shared.ShareWorkers(NewNamespaceShare(opts.PerNamespace))
		}
		return r.SetupWithManager(mgr)
	}
}
