// Command tutorialmemcached is the kubebuilder tutorial's Memcached operator,
// written again for `make bench`'s side-by-side run; it is a benchmark peer,
// not part of the product.
//
// It follows the kubebuilder v4 book's "Getting Started" project
// (docs/book/src/getting-started/testdata/project: internal/controller and
// cmd/main.go) closely enough that it makes the same API requests for the
// same Memcached objects: the same reads, the same writes in the same order,
// the same requeues, one worker, the same For/Owns watches and informers,
// and controller-runtime's defaults everywhere else (client QPS and burst
// included). It serves the Memcached API of this repository
// (cache.example.com/v1alpha1), whose group, kind, spec.size and
// spec.containerPort are the tutorial's.
//
// Where it departs from the tutorial, on purpose and without changing the
// API traffic:
//   - metrics, when --metrics-bind-address is set, are plain HTTP with no
//     authentication filter, so that the benchmark can scrape them without a
//     token (the tutorial serves them over HTTPS behind TokenReview and
//     SubjectAccessReview calls, which would add API requests per scrape);
//   - the image can be overridden with MEMCACHED_IMAGE (the default is the
//     tutorial's), and the container port is spec.containerPort (which the
//     CRD defaults to the tutorial's fixed 11211);
//   - there are no webhook server, certificate watchers or HTTP/2 switch:
//     the tutorial registers no webhook, so its server never starts.
//
// Usage:
//
//	tutorialmemcached --kubeconfig FILE [--metrics-bind-address :8080]
//	    [--health-probe-bind-address :8081] [--leader-elect]
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
)

// leaderElectionID is the tutorial's Lease name.
const leaderElectionID = "4b13cc52.example.com"

// newScheme holds what the tutorial's scheme holds: the built-in types and
// the Memcached API.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(cachev1alpha1.AddToScheme(s))
	return s
}

func main() {
	// --kubeconfig is controller-runtime's own flag, registered on
	// flag.CommandLine by its config package; ctrl.GetConfigOrDie reads it,
	// then KUBECONFIG, then the in-cluster config, then ~/.kube/config.
	var metricsAddr, probeAddr string
	var enableLeaderElection bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to, served over plain HTTP (e.g. :8080). 0 disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081",
		"The address the probe endpoint binds to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Enable leader election, so that only one manager is active.")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog := ctrl.Log.WithName("setup")

	scheme := newScheme()
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme: scheme,
		// Plain HTTP and no FilterProvider, unlike the tutorial: the
		// benchmark scrapes this endpoint without a token, and the
		// tutorial's authentication filter would itself call the API
		// server (TokenReview, SubjectAccessReview) on every scrape.
		Metrics: metricsserver.Options{
			BindAddress:   metricsAddr,
			SecureServing: false,
		},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       leaderElectionID,
	})
	if err != nil {
		setupLog.Error(err, "unable to start manager")
		os.Exit(1)
	}

	if err := (&MemcachedReconciler{
		Client: mgr.GetClient(),
		Scheme: mgr.GetScheme(),
		Image:  imageFromEnv(),
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "Memcached")
		os.Exit(1)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}
