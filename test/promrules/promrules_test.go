// Package promrules_test unit-tests the alerting rules of
// config/components/prometheus-rules with promtool, one test file per
// alert under testdata, and holds every alert to its test, its runbook
// under docs/runbooks and its runbook_url.
package promrules_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/controllers"
	"github.com/multi-operator/multi-operator/hack/dashboards"
	"github.com/multi-operator/multi-operator/hack/promrules"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
)

// groups are the component's rule groups, as kustomize ships them.
func groups(t *testing.T) (root string, rules []byte, gs []promrules.Group) {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	rules, err = promrules.RuleFile(root)
	if err != nil {
		t.Fatal(err)
	}
	gs, err = promrules.Groups(rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(promrules.Alerts(gs)) == 0 {
		t.Fatalf("%s has no alert", promrules.Component)
	}
	return root, rules, gs
}

// alertPrefixes are what an alert's name starts with: the manager's, or
// the kind of the custom resource it is about.
var alertPrefixes = []string{"MultiOperator", "RedisCluster", "TDSet", "Memcached", "WhaleSay"}

// kubeStateMetrics are the kube-state-metrics series the alerts read.
var kubeStateMetrics = map[string][]string{
	"kube-state-metrics": {"kube_pod_container_status_restarts_total", "kube_pod_labels"},
}

// TestRulesReadMetricsThatExist: every metric an alert reads is one the
// manager registers, one of the exporters' the dashboards read as well
// (hack/dashboards.ExporterMetrics), or kube-state-metrics'; promtool's
// unit tests would pass with a misspelt name in both the rule and its
// test.
func TestRulesReadMetricsThatExist(t *testing.T) {
	_, _, gs := groups(t)
	catalog, err := dashboards.NewCatalog(kubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		for _, r := range g.Rules {
			names, err := dashboards.MetricNames(r.Expr)
			if err != nil || len(names) == 0 {
				t.Errorf("%s: metric names of %q: %v %v", r.Alert, r.Expr, names, err)
			}
			for _, n := range names {
				if catalog.Source(n) == "" {
					t.Errorf("%s reads %s, which exists neither in the manager nor in the exporters' or kube-state-metrics' lists", r.Alert, n)
				}
			}
		}
	}
}

// unitTest is the part of a promtool test file the checks read.
type unitTest struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestRulesWithPromtool runs every test file under testdata against the
// component's rules with `promtool test rules`.
func TestRulesWithPromtool(t *testing.T) {
	promtool := reporoottest.RequireCommand(t, "promtool", "make deps (Debian package prometheus)")
	root, _, _ := groups(t)
	dir := t.TempDir()
	if _, err := promrules.WriteRuleFile(root, dir); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files under testdata: %v", err)
	}
	args := []string{"test", "rules"}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Beside rules.yaml, which the test files name.
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Join(dir, filepath.Base(f)))
	}
	if out, err := promrules.Promtool(promtool, args...); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("%s", out)
	}
}

// TestEveryAlertHasTestsAndRunbook: each alert has a test file named after
// it that tests it both where it fires and where it must not, a runbook
// docs/runbooks/<alert>.md listed in docs/runbooks/README.md, and the
// runbook_url, severity and texts alertmanager's receivers show; there is
// no test file or runbook of an alert that does not exist.
func TestEveryAlertHasTestsAndRunbook(t *testing.T) {
	root, _, gs := groups(t)
	alerts := promrules.Alerts(gs)
	index, err := os.ReadFile(filepath.Join(root, "docs", "runbooks", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if want := promrules.RunbookBase + r.Alert + ".md"; r.Annotations["runbook_url"] != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
			}
			for _, a := range []string{"summary", "description"} {
				if r.Annotations[a] == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			if !slices.ContainsFunc(alertPrefixes, func(p string) bool { return strings.HasPrefix(r.Alert, p) }) {
				t.Errorf("%s: an alert's name starts with one of %v", r.Alert, alertPrefixes)
			}
		}
	}
	for _, a := range alerts {
		if _, err := os.Stat(filepath.Join(root, "docs", "runbooks", a+".md")); err != nil {
			t.Errorf("%s: no runbook: %v", a, err)
		}
		if !strings.Contains(string(index), "("+a+".md)") {
			t.Errorf("%s: docs/runbooks/README.md does not link its runbook", a)
		}
		checkTestFile(t, a)
	}
	runbooks, _ := filepath.Glob(filepath.Join(root, "docs", "runbooks", "*.md"))
	testFiles, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, f := range append(runbooks, testFiles...) {
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if name != "README" && !slices.Contains(alerts, name) {
			t.Errorf("%s: no alert %s", f, name)
		}
	}
}

// checkTestFile checks that testdata/<alert>.yaml tests alert against the
// component's rules, once where it fires and once where it must not.
func checkTestFile(t *testing.T, alert string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", alert+".yaml"))
	if err != nil {
		t.Errorf("%s: no unit test: %v", alert, err)
		return
	}
	var f unitTest
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Errorf("%s: %v", alert, err)
		return
	}
	if !slices.Equal(f.RuleFiles, []string{"rules.yaml"}) {
		t.Errorf("%s: rule_files %v, want [rules.yaml] (the component's rules, which the test writes beside it)", alert, f.RuleFiles)
	}
	fires, silent := false, false
	for _, tc := range f.Tests {
		for _, a := range tc.AlertRuleTest {
			if a.Alertname != alert {
				t.Errorf("%s: its test file tests %s", alert, a.Alertname)
				continue
			}
			if len(a.ExpAlerts) > 0 {
				fires = true
			} else {
				silent = true
			}
		}
	}
	if !fires || !silent {
		t.Errorf("%s: its tests expect it to fire: %v, not to fire: %v; want both", alert, fires, silent)
	}
}

// TestManagerRulesCoverEveryController: the manager's alerts select the
// controllers by name; a controller added to the registry without being
// added to them would go unwatched.
func TestManagerRulesCoverEveryController(t *testing.T) {
	_, rules, _ := groups(t)
	var names []string
	for _, d := range controllers.All() {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	want := strings.Join(names, "|")
	found := 0
	for _, line := range strings.Split(string(rules), "\n") {
		for _, label := range []string{`controller=~"`, `name=~"`} {
			_, rest, ok := strings.Cut(line, label)
			if !ok {
				continue
			}
			got, _, _ := strings.Cut(rest, `"`)
			if !strings.Contains(got, "memcached") {
				continue
			}
			found++
			if got != want {
				t.Errorf("a manager rule selects %q, the registry's controllers are %q", got, want)
			}
		}
	}
	if found == 0 {
		t.Fatal("no manager rule selects the controllers by name")
	}
	if dashboards.Controllers != want {
		t.Errorf("the dashboards select %q, the registry's controllers are %q", dashboards.Controllers, want)
	}
}
