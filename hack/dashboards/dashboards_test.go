package dashboards_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/hack/dashboards"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func TestMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`rate(a_total{x="y", z=~"(.+)-[0-9]+"}[5m])`, []string{"a_total"}},
		{`sum by (namespace, name) (b) / on (name) group_left (pod) c offset 30m`, []string{"b", "c"}},
		{`label_replace(d{pod="p"}, "name", "$1", "pod", "(.+)-[0-9]+") > 16384`, []string{"d"}},
		{`histogram_quantile(0.99, sum(rate(e_bucket[5m])) by (le)) and f unless g or time() - 1e3`, []string{"e_bucket", "f", "g"}},
		{`h - ignoring (slave_ip) group_right () h`, []string{"h"}},
		{`i{l="with } brace"} * bool 2`, []string{"i"}},
		{"sum without (pod)\n  (j)", []string{"j"}},
	}
	for _, c := range cases {
		got, err := dashboards.MetricNames(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.expr, got, c.want)
		}
	}
	for _, bad := range []string{`a{b="c}`, `rate(a[5m)`, `sum by (a b`} {
		if _, err := dashboards.MetricNames(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestDashboardsReadMetricsThatExist: every metric a dashboard reads is
// one the manager registers (a histogram's by its _bucket, _sum or
// _count series) or one of ExporterMetrics; and every one of
// ExporterMetrics is read, so that the list holds no name nobody checks.
func TestDashboardsReadMetricsThatExist(t *testing.T) {
	catalog, err := dashboards.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	for project, names := range dashboards.ExporterMetrics {
		for _, n := range names {
			if catalog.Registered(n) {
				t.Errorf("%s of %s is also the manager's", n, project)
			}
		}
	}
	used := map[string]bool{}
	for _, d := range dashboards.All() {
		for _, expr := range d.Exprs() {
			names, err := dashboards.MetricNames(expr)
			if err != nil {
				t.Errorf("%s: %v", d.File, err)
				continue
			}
			if len(names) == 0 {
				t.Errorf("%s: %s reads no metric", d.File, expr)
			}
			for _, n := range names {
				used[n] = true
				if catalog.Source(n) == "" {
					t.Errorf("%s: %s reads %s, which neither the manager registers nor ExporterMetrics lists", d.File, expr, n)
				}
			}
		}
	}
	for project, names := range dashboards.ExporterMetrics {
		for _, n := range names {
			if !used[n] {
				t.Errorf("ExporterMetrics lists %s (%s), which no dashboard reads", n, project)
			}
		}
	}
}

// TestDashboardsShape: each dashboard has a unique uid and file, the
// data source variable first and then namespace and name (the manager's:
// pod), every panel reading its data source from the variable, and every
// expression narrowed by the namespace variable; its JSON stays well
// below what kubectl apply's last-applied annotation can hold.
func TestDashboardsShape(t *testing.T) {
	uids, files := map[string]bool{}, map[string]bool{}
	for _, d := range dashboards.All() {
		if uids[d.UID] || files[d.File] {
			t.Errorf("%s: uid %s or file repeated", d.File, d.UID)
		}
		uids[d.UID], files[d.File] = true, true
		data, err := d.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 128<<10 {
			t.Errorf("%s: %d bytes of JSON", d.File, len(data))
		}
		var parsed struct {
			Templating struct {
				List []struct{ Name, Type, Query string }
			}
			Panels []struct {
				Type       string
				Datasource struct{ Type, UID string }
				Targets    []struct{ Expr string }
			}
		}
		if err := json.Unmarshal(data, &parsed); err != nil {
			t.Fatalf("%s: %v", d.File, err)
		}
		var names []string
		for _, v := range parsed.Templating.List {
			names = append(names, v.Name)
		}
		second := "name"
		if d.File == "manager" {
			second = "pod"
		}
		if !slices.Equal(names, []string{"datasource", "namespace", second}) {
			t.Errorf("%s: variables %v", d.File, names)
		}
		if v := parsed.Templating.List[0]; v.Type != "datasource" || v.Query != "prometheus" {
			t.Errorf("%s: data source variable %+v", d.File, v)
		}
		targets := 0
		for _, p := range parsed.Panels {
			if p.Type == "row" {
				continue
			}
			if p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
				t.Errorf("%s: a panel's data source is %+v", d.File, p.Datasource)
			}
			for _, tg := range p.Targets {
				targets++
				if !strings.Contains(tg.Expr, `namespace=~"$namespace"`) {
					t.Errorf("%s: %s is not narrowed to $namespace", d.File, tg.Expr)
				}
			}
		}
		if targets == 0 {
			t.Errorf("%s: no panel", d.File)
		}
	}
}

// TestCommittedFilesAreCurrent: the component holds what make generate
// writes now, and nothing else.
func TestCommittedFilesAreCurrent(t *testing.T) {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	files, err := dashboards.Files(dashboards.All())
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := filepath.Glob(filepath.Join(root, dashboards.Dir, "*"))
	if len(onDisk) != len(files) {
		t.Errorf("%s holds %d files, make generate writes %d", dashboards.Dir, len(onDisk), len(files))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (%v): run make generate", path, err)
		}
	}
}

// TestComponentRendersConfigMaps: with the component, an overlay holds a
// ConfigMap per dashboard in its namespace, with its prefix, the
// sidecar's label and the dashboard's JSON.
func TestComponentRendersConfigMaps(t *testing.T) {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := overlay.Kustomization{Resources: []string{"config/manager"}, Components: []string{dashboards.Dir}}.Build(root)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetLabels()[dashboards.SidecarLabel] == "1" {
			if o.GetNamespace() != overlay.Namespace {
				t.Errorf("%s in namespace %s", o.GetName(), o.GetNamespace())
			}
			data, _ := o.Object["data"].(map[string]any)
			byName[o.GetName()] = data
		}
	}
	all := dashboards.All()
	if len(byName) != len(all) {
		t.Errorf("%d dashboard ConfigMaps, want %d", len(byName), len(all))
	}
	for _, d := range all {
		data, ok := byName[overlay.NamePrefix+d.ConfigMapName()]
		if !ok {
			t.Errorf("no ConfigMap %s%s", overlay.NamePrefix, d.ConfigMapName())
			continue
		}
		want, _ := d.JSON()
		if data[d.File+".json"] != string(want) {
			t.Errorf("ConfigMap of %s does not hold its JSON", d.File)
		}
	}
}

// TestExpressionsEvaluateInPrometheus runs Prometheus on loopback with an
// empty database and has it evaluate every expression of every dashboard,
// with the variables as Grafana's "All" sets them: Prometheus refuses an
// expression that does not parse or whose types do not fit. An expression
// known to be wrong is refused, so that the check can fail.
func TestExpressionsEvaluateInPrometheus(t *testing.T) {
	bin := reporoot.RequireCommand(t, "prometheus", "make deps (Debian package prometheus)")
	base := startPrometheus(t, bin)
	if err := query(base, `rate(up)`); err == nil {
		t.Fatal("Prometheus accepted rate() of an instant vector")
	}
	for _, d := range dashboards.All() {
		for _, expr := range d.Exprs() {
			if err := query(base, dashboards.Substitute(expr)); err != nil {
				t.Errorf("%s: %s: %v", d.File, expr, err)
			}
		}
	}
}

// startPrometheus starts Prometheus with no scrape on a free loopback
// port and returns its URL once it is ready; it is killed with the test.
func startPrometheus(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte("global:\n  scrape_interval: 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	var log bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := "http://" + addr
	client := http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := client.Get(base + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
	}
	t.Fatalf("Prometheus not ready within a minute:\n%s", log.String())
	return ""
}

// query has Prometheus evaluate expr now and returns its error, if any.
func query(base, expr string) error {
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // read to the end
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	var r struct{ Status, ErrorType, Error string }
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%s: %w", body, err)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	return nil
}
