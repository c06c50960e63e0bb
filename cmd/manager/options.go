package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/metricsauth"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// maxGCHeadroomMiB bounds --gc-headroom-mib at 1 TiB, far above any
// manager's heap, so that the headroom in bytes cannot overflow.
const maxGCHeadroomMiB = 1 << 20

// options are the manager's command-line settings.
type options struct {
	controllers             []string
	enabled, disabled       []reconciler.Descriptor
	metricsAddr             string
	probeAddr               string
	pprofAddr               string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	leaseDuration           time.Duration
	maxConcurrentReconciles int
	// maxPerNamespace bounds one namespace's share of those; 0 means
	// reconciler.PerNamespaceShare of them.
	maxPerNamespace int
	kubeAPIQPS      float32
	kubeAPIBurst    int
	// kubeAPIQPSSet tells an explicit --kube-api-qps from none: without
	// one, start chooses the limit by asking the API server.
	kubeAPIQPSSet   bool
	kubeAPIBurstSet bool
	metricsAuthQPS  float32
	gcHeadroomMiB   int
	// watchNamespaces limits every cache and watch to these namespaces;
	// empty watches all.
	watchNamespaces []string
	webhook         webhookOptions
	zap             zap.Options
	// scalableKinds are the kinds TDSet's spec.scaleTargetRef may name,
	// parsed from --tdset-scalable-kinds.
	scalableKinds []schema.GroupKind
}

// maxScalableKinds bounds --tdset-scalable-kinds: each kind needs its own
// RBAC rules, so a long list is a mistake.
const maxScalableKinds = 64

// parseFlags parses args. It returns nil options and the exit code when the
// program should stop: 0 after --help, 2 for bad flags or unknown controllers.
func parseFlags(args []string, stderr io.Writer) (*options, int) {
	o := &options{}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringSliceVar(&o.controllers, "controllers", []string{"*"},
		"Controllers to run: a comma-separated list, repeatable. '*' enables all, 'name' enables one, '-name' disables one; the first mention of a name wins.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address of the secure (HTTPS, authenticated and authorized) metrics endpoint; 0 turns it off.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address serving /healthz and /readyz.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0", "Address serving net/http/pprof for profiling; 0 turns it off.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one of several replicas reconciles.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "multi-operator.devsectim.io", "Name of the Lease used for leader election.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader-election Lease; defaults to the pod's namespace in a cluster.")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a leader's lease lasts before another replica may take over.")
	fs.StringSliceVar(&o.watchNamespaces, "watch-namespaces", nil,
		"Namespaces whose custom resources the controllers reconcile, comma-separated; every cache and watch is limited to them, so Roles in them suffice (the namespace-scoped mode). Empty: all namespaces. When not given, $"+manager.WatchNamespaceEnv+" (as OLM sets it) stands in.")
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", manager.DefaultMaxConcurrentReconciles, "Reconciles each controller runs in parallel.")
	fs.IntVar(&o.maxPerNamespace, "max-concurrent-reconciles-per-namespace", 0, "Reconciles of one namespace's custom resources each controller runs at once, so that one tenant's slow resources cannot hold every worker; 0 means a quarter of --max-concurrent-reconciles (at least 1).")
	fs.Float32Var(&o.kubeAPIQPS, "kube-api-qps", 0, fmt.Sprintf("Requests per second to the API server, shared by every controller of the manager; 0 sets no client-side limit. Unset: none when the API server runs API Priority and Fairness (the default since Kubernetes 1.29), which shares it fairly, and %v otherwise.", manager.FallbackKubeAPIQPS))
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", manager.FallbackKubeAPIBurst, "Requests to the API server allowed at once above --kube-api-qps; unused without a client-side limit.")
	fs.Float32Var(&o.metricsAuthQPS, "metrics-auth-qps", metricsauth.DefaultQPS, "Requests per second the metrics endpoint's TokenReviews and SubjectAccessReviews may send, a budget apart from --kube-api-qps; a request that would wait longer than a second for it gets 429. Must be above 0.")

	scalableKinds := fs.StringSlice("tdset-scalable-kinds", kindFlags(tdset.DefaultScalableKinds()),
		"Kinds (Kind.group, Kind for the core group) whose scale subresource a TDSet's spec.scaleTargetRef may set; the manager's Role must grant get and patch on each kind's scale subresource and get, list and watch on the kind, which the manager caches. A TDSet naming another kind reports Ready=False (TargetKindNotAllowed).")
	fs.IntVar(&o.gcHeadroomMiB, "gc-headroom-mib", manager.DefaultGCHeadroomMiB, "MiB the heap may grow past its live objects before Go collects, once more than that is live (below, GOGC rules); a lower GOGC still wins, 0 leaves it to GOGC alone.")

	o.webhook.addFlags(fs)

	// controller-runtime's and zap's flags live on Go's flag package; bridge them.
	goFlags := flag.NewFlagSet("manager", flag.ContinueOnError)
	config.RegisterFlags(goFlags)
	o.zap.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)

	all := controllers.All()
	fs.Usage = func() { usage(stderr, fs, all) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	o.kubeAPIQPSSet, o.kubeAPIBurstSet = fs.Changed("kube-api-qps"), fs.Changed("kube-api-burst")
	if fs.NArg() > 0 {
		fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return nil, 2
	}
	if o.gcHeadroomMiB < 0 || o.gcHeadroomMiB > maxGCHeadroomMiB {
		fprintf(stderr, "--gc-headroom-mib must be between 0 and %d, not %d\n", maxGCHeadroomMiB, o.gcHeadroomMiB)
		return nil, 2
	}
	if o.maxConcurrentReconciles < 1 || o.maxPerNamespace < 0 {
		fprintf(stderr, "--max-concurrent-reconciles must be at least 1 and --max-concurrent-reconciles-per-namespace at least 0\n")
		return nil, 2
	}
	if o.metricsAuthQPS <= 0 {
		fprintf(stderr, "--metrics-auth-qps must be above 0, not %v\n", o.metricsAuthQPS)
		return nil, 2
	}
	var err error
	if o.scalableKinds, err = parseKinds(*scalableKinds); err != nil {
		fprintf(stderr, "--tdset-scalable-kinds: %v\n", err)
		return nil, 2
	}
	source := "--watch-namespaces"
	if !fs.Changed("watch-namespaces") {
		source = manager.WatchNamespaceEnv
		o.watchNamespaces = manager.SplitNamespaces(os.Getenv(manager.WatchNamespaceEnv))
	}
	for _, ns := range o.watchNamespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			fprintf(stderr, "%s: %q is not a namespace name: %s\n", source, ns, strings.Join(errs, "; "))
			return nil, 2
		}
	}
	o.enabled, o.disabled, err = manager.Select(all, o.controllers)
	if err != nil {
		fprintf(stderr, "%v\n", err)
		return nil, 2
	}
	return o, 0
}

func usage(w io.Writer, fs *pflag.FlagSet, all []reconciler.Descriptor) {
	fprintf(w, "manager runs the multi-operator controllers.\n\nUsage:\n  manager [flags]\n\nControllers (all enabled by default):\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, d := range all {
		fprintf(tw, "  %s\t%s\n", d.Name, d.Description)
	}
	_ = tw.Flush()
	fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
}

// fprintf writes a message for the user to w: the manager's stderr, or the
// tabwriter in front of it. A failed write to stderr leaves nowhere to report
// the failure, so fprintf drops the error, as usage drops tw.Flush's.
func fprintf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}

// kindFlags writes kinds as --tdset-scalable-kinds takes them.
func kindFlags(kinds []schema.GroupKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.String()
	}
	return out
}

// parseKinds reads --tdset-scalable-kinds: at most maxScalableKinds
// entries Kind.group, each a kind (an upper-case letter, then letters and
// digits) and a DNS-subdomain group, or a core kind alone.
func parseKinds(list []string) ([]schema.GroupKind, error) {
	if len(list) > maxScalableKinds {
		return nil, fmt.Errorf("%d kinds, at most %d", len(list), maxScalableKinds)
	}
	kinds := []schema.GroupKind{}
	for _, entry := range list {
		gk := schema.ParseGroupKind(strings.TrimSpace(entry))
		if !kindRE.MatchString(gk.Kind) || len(gk.Kind) > 63 {
			return nil, fmt.Errorf("%q: the kind must be an upper-case letter, then letters and digits (Kind.group, as Deployment.apps)", entry)
		}
		if gk.Group != "" {
			if errs := validation.IsDNS1123Subdomain(gk.Group); len(errs) > 0 {
				return nil, fmt.Errorf("%q: the group is no DNS subdomain: %s", entry, strings.Join(errs, "; "))
			}
		}
		kinds = append(kinds, gk)
	}
	return kinds, nil
}

// kindRE is a kind's form in --tdset-scalable-kinds.
var kindRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// perNamespaceReconciles is the bound of one namespace's reconciles.
func (o *options) perNamespaceReconciles() int {
	if o.maxPerNamespace > 0 {
		return min(o.maxPerNamespace, o.maxConcurrentReconciles)
	}
	return reconciler.PerNamespaceShare(o.maxConcurrentReconciles)
}
