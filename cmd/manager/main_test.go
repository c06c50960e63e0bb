package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestUnknownControllerExitsWithUsageError(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--controllers=nope"}, &stderr)
	g.Expect(code).To(Equal(2))
	g.Expect(stderr.String()).To(ContainSubstring(`unknown controller "nope"`))
	g.Expect(stderr.String()).To(ContainSubstring("whalesay"))
}

func TestHelpListsEveryController(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	g.Expect(run(context.Background(), []string{"--help"}, &stderr)).To(Equal(0))
	out := stderr.String()
	for _, name := range manager.Names(controllers.All()) {
		g.Expect(out).To(MatchRegexp(`(?m)^  %s\s+\S`, name), "a line with the name and its description")
	}
	for _, flag := range []string{"--controllers", "--metrics-bind-address", "--health-probe-bind-address", "--leader-elect", "--leader-election-id", "--kubeconfig", "--zap-log-level"} {
		g.Expect(out).To(ContainSubstring(flag))
	}
}

func TestRepeatedControllerFlagsAddUp(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	opts, code := parseFlags([]string{"--controllers=whalesay", "--controllers=-whalesay,*"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.controllers).To(Equal([]string{"whalesay", "-whalesay", "*"}))
	g.Expect(manager.Names(opts.enabled)).To(ContainElement("whalesay"), "the first mention wins")
	g.Expect(len(opts.enabled)).To(Equal(len(controllers.All())), "* enables the rest")
}

func TestBadFlagExitsWithUsageError(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	g.Expect(run(context.Background(), []string{"--no-such-flag"}, &stderr)).To(Equal(2))
}

func TestKubeAPIFlags(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	opts, code := parseFlags(nil, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	// Unset, the API server is asked: with Priority and Fairness (the
	// shared envtest API server runs it), no client-side limit.
	ctx := context.Background()
	apf := testenv.Get(t).Config
	g.Expect(opts.kubeAPIQPSSet).To(BeFalse())
	g.Expect(opts.clientLimit(ctx, apf)).To(Equal(manager.ClientLimit{Reason: manager.LimitReasonPriorityAndFairness}))
	// An API server that does not answer: the safe side, with the burst
	// the flag sets.
	opts, code = parseFlags([]string{"--kube-api-burst=8"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	limit, err := opts.clientLimit(ctx, &rest.Config{Host: "https://127.0.0.1:1"})
	g.Expect(err).To(HaveOccurred())
	g.Expect(limit).To(Equal(manager.ClientLimit{QPS: manager.FallbackKubeAPIQPS, Burst: 8, Reason: manager.LimitReasonPriorityAndFairnessError}))

	opts, code = parseFlags([]string{"--kube-api-qps=12.5", "--kube-api-burst=40"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.clientLimit(ctx, apf)).To(Equal(manager.ClientLimit{QPS: 12.5, Burst: 40, Reason: manager.LimitReasonFlags}), "the flags win over Priority and Fairness")
	opts, code = parseFlags([]string{"--kube-api-qps=0"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.clientLimit(ctx, &rest.Config{Host: "https://127.0.0.1:1"})).To(Equal(manager.ClientLimit{Burst: manager.FallbackKubeAPIBurst, Reason: manager.LimitReasonFlags}), "no client-side limit when asked for, without asking the server")
	_, code = parseFlags([]string{"--kube-api-qps=fast"}, &stderr)
	g.Expect(code).To(Equal(2))

	g.Expect(opts.metricsAuthQPS).To(BeNumerically("==", 5), "the metrics endpoint's reviews have their own budget by default")
	opts, code = parseFlags([]string{"--metrics-auth-qps=2.5"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.metricsAuthQPS).To(BeNumerically("==", 2.5))
	_, code = parseFlags([]string{"--metrics-auth-qps=0"}, &stderr)
	g.Expect(code).To(Equal(2), "the reviews always have a budget")
	g.Expect(stderr.String()).To(ContainSubstring("--metrics-auth-qps must be above 0, not 0"))
}

func TestGCHeadroomFlag(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	opts, code := parseFlags(nil, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.gcHeadroomMiB).To(Equal(8), "the heap's growth is capped by default")
	opts, code = parseFlags([]string{"--gc-headroom-mib=0"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.gcHeadroomMiB).To(BeZero(), "GOGC alone when asked for")
	_, code = parseFlags([]string{"--gc-headroom-mib=-1"}, &stderr)
	g.Expect(code).To(Equal(2))
	g.Expect(stderr.String()).To(ContainSubstring("--gc-headroom-mib must be between 0 and 1048576, not -1"))
	_, code = parseFlags([]string{"--gc-headroom-mib=1048577"}, &stderr)
	g.Expect(code).To(Equal(2), "a headroom whose bytes could overflow")
}

func TestPerNamespaceReconcilesFlag(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	opts, code := parseFlags(nil, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.perNamespaceReconciles()).To(Equal(4), "a quarter of 16 workers by default")
	opts, code = parseFlags([]string{"--max-concurrent-reconciles=2"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.perNamespaceReconciles()).To(Equal(1), "at least one")
	opts, code = parseFlags([]string{"--max-concurrent-reconciles=8", "--max-concurrent-reconciles-per-namespace=20"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.perNamespaceReconciles()).To(Equal(8), "never more than the workers")
	_, code = parseFlags([]string{"--max-concurrent-reconciles-per-namespace=-1"}, &stderr)
	g.Expect(code).To(Equal(2))
}

func TestTDSetScalableKindsFlag(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	opts, code := parseFlags(nil, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.scalableKinds).To(Equal(tdset.DefaultScalableKinds()))
	opts, code = parseFlags([]string{"--tdset-scalable-kinds=Deployment.apps,ReplicationController,Widget.example.com"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.scalableKinds).To(Equal([]schema.GroupKind{{Group: "apps", Kind: "Deployment"}, {Kind: "ReplicationController"}, {Group: "example.com", Kind: "Widget"}}))
	opts, code = parseFlags([]string{"--tdset-scalable-kinds="}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.scalableKinds).To(BeEmpty())
	g.Expect(opts.scalableKinds).NotTo(BeNil(), "empty allows none; nil would be the controller's default")
	for _, bad := range []string{"deployment.apps", "Deployment.Apps_", strings.Repeat("A", 64)} {
		stderr.Reset()
		_, code = parseFlags([]string{"--tdset-scalable-kinds=" + bad}, &stderr)
		g.Expect(code).To(Equal(2), bad)
		g.Expect(stderr.String()).To(HavePrefix("--tdset-scalable-kinds: "), bad)
	}
	_, code = parseFlags([]string{"--tdset-scalable-kinds=" + strings.TrimSuffix(strings.Repeat("A.b,", 65), ",")}, &stderr)
	g.Expect(code).To(Equal(2), "more than 64 kinds")
}

func TestWatchNamespacesFlag(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	opts, code := parseFlags(nil, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.watchNamespaces).To(BeEmpty(), "every namespace by default")
	opts, code = parseFlags([]string{"--watch-namespaces=team-a,team-b"}, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(opts.watchNamespaces).To(Equal([]string{"team-a", "team-b"}))
	g.Expect(manager.CacheOptions(opts.enabled, opts.watchNamespaces).DefaultNamespaces).To(HaveLen(2), "the cache watches those alone")
	_, code = parseFlags([]string{"--watch-namespaces=team-a,Team_B"}, &stderr)
	g.Expect(code).To(Equal(2))
	g.Expect(stderr.String()).To(ContainSubstring(`--watch-namespaces: "Team_B" is not a namespace name`))
}

// TestWatchNamespacesFromEnv: OLM passes its target namespaces in
// WATCH_NAMESPACE, which stands in for --watch-namespaces; the flag, even
// empty, wins.
func TestWatchNamespacesFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		args      []string
		want      []string
		code      int
		stderr    string
	}{
		{name: "neither: all namespaces"},
		{name: "OLM's AllNamespaces: empty", env: ""},
		{name: "OLM's OwnNamespace", env: "operators", want: []string{"operators"}},
		{name: "OLM's MultiNamespace", env: "team-a,team-b", want: []string{"team-a", "team-b"}},
		{name: "blanks dropped", env: " team-a, ,team-b,", want: []string{"team-a", "team-b"}},
		{name: "the flag wins", env: "team-a", args: []string{"--watch-namespaces=team-c"}, want: []string{"team-c"}},
		{name: "an empty flag wins too", env: "team-a", args: []string{"--watch-namespaces="}},
		{name: "a bad name", env: "team-a,Team_B", code: 2, stderr: `WATCH_NAMESPACE: "Team_B" is not a namespace name`},
		{name: "a bad env under a good flag", env: "Team_B", args: []string{"--watch-namespaces=team-a"}, want: []string{"team-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			t.Setenv(manager.WatchNamespaceEnv, tc.env)
			var stderr bytes.Buffer
			opts, code := parseFlags(tc.args, &stderr)
			g.Expect(code).To(Equal(tc.code), stderr.String())
			if tc.code != 0 {
				g.Expect(stderr.String()).To(ContainSubstring(tc.stderr))
				return
			}
			if tc.want == nil {
				g.Expect(opts.watchNamespaces).To(BeEmpty(), "all namespaces")
				return
			}
			g.Expect(opts.watchNamespaces).To(Equal(tc.want))
		})
	}
}
