package reconciler

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// Options are what every controller's constructor takes besides the
// manager: NewReconciler(mgr ctrl.Manager, opts Options). The manager
// binary fills them in one place, pkg/manager's OptionsFromEnv; tests set
// them directly.
type Options struct {
	// Image is the operand image a custom resource runs unless it names its
	// own. Empty means the controller's default; controllers whose custom
	// resources always name their image ignore it.
	Image string
	// ExporterImage is the metrics exporter's image a custom resource runs
	// unless it names its own. Empty means the controller's default.
	ExporterImage string
	// ExporterScrapers says who may reach the metrics exporter's port, in
	// the form the controller documents (a namespace label selector for
	// RedisCluster). Empty means the controller's default.
	ExporterScrapers string
	// Clock tells the time. Nil means the real clock; tests inject one to
	// cross time boundaries without waiting for them.
	Clock clock.PassiveClock
	// StartupGrace is how long a new custom resource's first status waits
	// for its child to settle (see HoldFirstStatus). Zero writes it at once;
	// the manager binary sets DefaultStartupGrace.
	StartupGrace time.Duration
	// PerNamespace bounds the reconciles of one namespace that a controller
	// runs at once (see NamespaceShare); zero sets no bound.
	PerNamespace int
	// ScalableKinds are the kinds whose scale subresource a controller
	// that scales existing workloads (TDSet's spec.scaleTargetRef) may
	// write; the manager's --tdset-scalable-kinds. Nil means the
	// controller's default; controllers that scale only their own children
	// ignore it.
	ScalableKinds []schema.GroupKind
}

// ImageOr returns the configured image, or def when none is.
func (o Options) ImageOr(def string) string {
	if o.Image != "" {
		return o.Image
	}
	return def
}

// ClockOrReal returns the configured clock, or the real one.
func (o Options) ClockOrReal() clock.PassiveClock {
	if o.Clock != nil {
		return o.Clock
	}
	return clock.RealClock{}
}

// ExporterImageOr returns the configured exporter image, or def when none
// is.
func (o Options) ExporterImageOr(def string) string {
	if o.ExporterImage != "" {
		return o.ExporterImage
	}
	return def
}
