package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	uberzap "go.uber.org/zap"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/multi-operator/multi-operator/pkg/gcheadroom"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/metricsauth"
)

// start runs the manager until ctx ends and returns the exit code. Errors a
// user must act on are also printed to stderr as one plain line.
func (o *options) start(ctx context.Context, stderr io.Writer) int {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap), zap.RawZapOpts(uberzap.WrapCore(lazyFields))))
	log := ctrl.Log.WithName("setup")
	log.Info("controllers selected", "enabled", manager.Names(o.enabled), "disabled", manager.Names(o.disabled))
	defer gcheadroom.Start(uint64(o.gcHeadroomMiB) << 20)()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	for _, d := range o.enabled {
		utilruntime.Must(d.AddToScheme(scheme))
	}

	kubeconfig, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "no Kubernetes configuration: set --kubeconfig or KUBECONFIG, or run in a cluster")
		return 1
	}
	limit, err := o.clientLimit(ctx, kubeconfig)
	if err != nil {
		log.Error(err, "falling back to a client-side limit")
	}
	log.Info("client-side limit on requests to the API server", "qps", limit.QPS, "burst", limit.Burst, "reason", limit.Reason)
	cfg := manager.ClientConfig(kubeconfig, limit.QPS, limit.Burst)
	lease := o.leaseDuration
	var leaderElectionConfig *rest.Config
	if o.leaderElect {
		// Renewing the lease must not wait behind the controllers'
		// requests in their bucket.
		leaderElectionConfig = manager.LeaderElectionConfig(kubeconfig)
	}
	webhookServer := o.webhook.server(o.enabled)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Cache:  manager.CacheOptions(o.enabled, o.watchNamespaces),
		// A controller's cache of its own watches the same namespaces
		// (manager.OwnCacheOptions).
		NewCache: manager.NewCache,
		Metrics: metricsserver.Options{
			BindAddress:   o.metricsAddr,
			SecureServing: true,
			// The reviews have a budget of their own: anyone may send a
			// token, and none of it may come out of the reconcilers'.
			FilterProvider: metricsauth.Provider(kubeconfig, o.metricsAuthQPS, metricsauth.DefaultBurst),
			TLSOpts:        []func(*tls.Config){metricsauth.SelfSignedTLS},
		},
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionConfig:    leaderElectionConfig,
		LeaderElectionID:        o.leaderElectionID,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		LeaseDuration:           &lease,
		// The process exits at once when it loses leadership, so a new
		// leader never overlaps with the old one.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    ctrlconfig.Controller{MaxConcurrentReconciles: o.maxConcurrentReconciles},
		WebhookServer:                 webhookServer,
	})
	if err != nil {
		log.Error(err, "unable to create the manager")
		return 1
	}
	if err := manager.CheckCRDs(mgr.GetRESTMapper(), scheme, o.enabled); err != nil {
		fprintf(stderr, "error: %v\n", err)
		return 1
	}
	for _, d := range o.enabled {
		opts := manager.OptionsFromEnv(d)
		opts.PerNamespace = o.perNamespaceReconciles()
		opts.ScalableKinds = o.scalableKinds
		if err := d.Setup(mgr, opts); err != nil {
			log.Error(err, "unable to set up controller", "controller", d.Name)
			return 1
		}
	}
	if webhookServer != nil {
		if err := o.webhook.setup(mgr, webhookServer, o.enabled); err != nil {
			log.Error(err, "unable to set up the webhook server")
			return 1
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "unable to set up the health check")
		return 1
	}
	if err := mgr.AddReadyzCheck("informers-synced", cachesSynced(mgr.GetCache())); err != nil {
		log.Error(err, "unable to set up the ready check")
		return 1
	}
	log.Info("starting manager")
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "manager stopped with an error")
		return 1
	}
	return 0
}

// clientLimit is the client-side limit the flags set, or without
// --kube-api-qps the one manager.DefaultClientLimit chooses by asking the
// API server (an explicit --kube-api-burst still applies to its fallback).
func (o *options) clientLimit(ctx context.Context, kubeconfig *rest.Config) (manager.ClientLimit, error) {
	if o.kubeAPIQPSSet {
		return manager.ClientLimit{QPS: o.kubeAPIQPS, Burst: o.kubeAPIBurst, Reason: manager.LimitReasonFlags}, nil
	}
	limit, err := manager.DefaultClientLimit(ctx, kubeconfig)
	if o.kubeAPIBurstSet && limit.QPS > 0 {
		limit.Burst = o.kubeAPIBurst
	}
	return limit, err
}

// cachesSynced is a ready check that passes once every informer the
// manager has started by then holds the API server's current state, and
// from then on: an informer started later (a new leader's controllers, a
// lazily watched kind) does not take a serving replica, and the webhooks
// it serves, out of its Service while it lists.
func cachesSynced(c cache.Cache) healthz.Checker {
	var synced atomic.Bool
	return func(req *http.Request) error {
		if synced.Load() {
			return nil
		}
		ctx, cancel := context.WithTimeout(req.Context(), 100*time.Millisecond)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("informers not synced yet")
		}
		synced.Store(true)
		return nil
	}
}
