package podmonitor

import (
	"context"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultRefresh is how often Served asks the API server again: installing
// the Prometheus Operator is rare, and a minute's wait for its PodMonitors
// costs nothing.
const DefaultRefresh = time.Minute

// Served knows whether the API server serves the PodMonitor kind. It is a
// manager Runnable that asks discovery at start and every Refresh, and
// calls OnChange when the answer changes, so that the controllers using it
// reconcile their custom resources once, rather than each asking the API
// server or retrying while the kind is absent.
type Served struct {
	// Discovery asks the API server.
	Discovery discovery.DiscoveryInterface
	// Refresh is how often it asks; DefaultRefresh when zero.
	Refresh time.Duration
	// OnChange, when set, is called with the new answer after it changed,
	// and after a first answer of true, since reconciles that ran before
	// it saw false.
	OnChange func(ctx context.Context, served bool)

	served atomic.Bool
	// asked is set once the first answer is in.
	asked atomic.Bool
}

// Served says whether the PodMonitor kind was served when last asked;
// false before the first answer.
func (s *Served) Served() bool { return s.served.Load() }

// Start asks discovery until ctx ends. A failed question keeps the last
// answer: an API server briefly unavailable does not delete PodMonitors.
func (s *Served) Start(ctx context.Context) error {
	refresh := s.Refresh
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	ticker := time.NewTicker(refresh)
	defer ticker.Stop()
	for {
		s.ask(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// ask updates the answer from discovery.
func (s *Served) ask(ctx context.Context) {
	served, err := ServedBy(s.Discovery)
	if err != nil {
		log.FromContext(ctx).V(1).Info("cannot tell whether PodMonitors are served; keeping the last answer", "error", err)
		return
	}
	old := s.served.Swap(served)
	first := !s.asked.Swap(true)
	if !first && old != served && s.OnChange != nil {
		s.OnChange(ctx, served)
	}
	if first && served && s.OnChange != nil {
		// Reconciles that ran before the first answer saw false.
		s.OnChange(ctx, served)
	}
}

// ServedBy asks d whether the PodMonitor kind is served. Its group
// version missing is an answer (false), not an error.
func ServedBy(d discovery.DiscoveryInterface) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion(GVK.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Kind == GVK.Kind {
			return true, nil
		}
	}
	return false, nil
}
