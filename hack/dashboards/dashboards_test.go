package dashboards_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/hack/dashboards"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
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
	bin := reporoottest.RequireCommand(t, "prometheus", "make deps (Debian package prometheus)")
	base := startPrometheus(t, bin, "global:\n  scrape_interval: 1m\n")
	if _, err := query(base, `rate(up)`); err == nil {
		t.Fatal("Prometheus accepted rate() of an instant vector")
	}
	for _, d := range dashboards.All() {
		for _, expr := range d.Exprs() {
			if _, err := query(base, dashboards.Substitute(expr)); err != nil {
				t.Errorf("%s: %s: %v", d.File, expr, err)
			}
		}
	}
}

// startPrometheus starts Prometheus with no scrape on a free loopback
// port and returns its URL once it is ready; it is killed with the test.
func startPrometheus(t *testing.T, bin, config string) string {
	t.Helper()
	dir := t.TempDir()
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	var log bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
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

// query has Prometheus evaluate expr now and returns how many series or
// samples the result holds, or its error.
func query(base, expr string) (int, error) {
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close() //nolint:errcheck // read to the end
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	var r struct {
		Status, ErrorType, Error string
		Data                     struct {
			ResultType string
			Result     json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("%s: %w", body, err)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	if r.Data.ResultType != "vector" && r.Data.ResultType != "matrix" {
		return 1, nil // a scalar or a string
	}
	var series []json.RawMessage
	if err := json.Unmarshal(r.Data.Result, &series); err != nil {
		return 0, err
	}
	return len(series), nil
}

// TestPanelsShowScrapedSeries has a real Prometheus scrape series of the
// shapes the manager and the exporters serve (their names and labels,
// with the namespace and pod labels a PodMonitor or ServiceMonitor adds)
// and checks that every expression of every dashboard, and every
// variable's selector, returns something: a join whose labels do not
// match, a filter no series passes or a label the sources do not have
// would leave a panel empty.
func TestPanelsShowScrapedSeries(t *testing.T) {
	bin := reporoottest.RequireCommand(t, "prometheus", "make deps (Debian package prometheus)")
	var scrapes atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := scrapes.Add(1)
		for _, s := range scrapedSeries {
			v := s.value
			if s.counter {
				v *= float64(n)
			}
			if _, err := fmt.Fprintf(w, "%s %g\n", s.series, v); err != nil {
				return // Prometheus gave up on the scrape
			}
		}
	}))
	t.Cleanup(target.Close)
	base := startPrometheus(t, bin, fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
- job_name: sources
  honor_labels: true
  static_configs:
  - targets: [%q]
`, strings.TrimPrefix(target.URL, "http://")))
	// rate() needs two samples; a few more leave room.
	for deadline := time.Now().Add(time.Minute); scrapes.Load() < 4; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus scraped %d times in a minute", scrapes.Load())
		}
	}
	for _, d := range dashboards.All() {
		for _, expr := range d.Exprs() {
			n, err := query(base, dashboards.Substitute(expr))
			if err != nil || n == 0 {
				t.Errorf("%s: %s: %d series, %v", d.File, expr, n, err)
			}
		}
	}
}

// scraped is one series the test's target serves: a counter grows by
// value at every scrape.
type scraped struct {
	series  string
	value   float64
	counter bool
}

func gauge(series string, v float64) scraped { return scraped{series: series, value: v} }
func counter(series string, v float64) scraped {
	return scraped{series: series, value: v, counter: true}
}

// scrapedSeries are series as the sources serve them, and the labels
// Prometheus adds: the manager's pod in ops, a RedisCluster cache (a
// master cache-0, its replica cache-1), a Memcached web (one server), a
// TDSet nightly and a WhaleSay hello, all in shop.
var scrapedSeries = []scraped{
	// The manager.
	gauge(`leader_election_master_status{namespace="ops",pod="mgr-0",name="multi-operator"}`, 1),
	counter(`controller_runtime_reconcile_total{namespace="ops",pod="mgr-0",controller="tdset",result="success"}`, 10),
	counter(`controller_runtime_reconcile_errors_total{namespace="ops",pod="mgr-0",controller="tdset"}`, 1),
	counter(`controller_runtime_reconcile_panics_total{namespace="ops",pod="mgr-0",controller="tdset"}`, 0),
	counter(`controller_runtime_reconcile_time_seconds_bucket{namespace="ops",pod="mgr-0",controller="tdset",le="0.1"}`, 8),
	counter(`controller_runtime_reconcile_time_seconds_bucket{namespace="ops",pod="mgr-0",controller="tdset",le="+Inf"}`, 10),
	gauge(`controller_runtime_active_workers{namespace="ops",pod="mgr-0",controller="tdset"}`, 1),
	gauge(`controller_runtime_max_concurrent_reconciles{namespace="ops",pod="mgr-0",controller="tdset"}`, 4),
	gauge(`workqueue_depth{namespace="ops",pod="mgr-0",name="tdset",controller="tdset"}`, 2),
	counter(`workqueue_adds_total{namespace="ops",pod="mgr-0",name="tdset",controller="tdset"}`, 10),
	counter(`workqueue_retries_total{namespace="ops",pod="mgr-0",name="tdset",controller="tdset"}`, 1),
	counter(`workqueue_queue_duration_seconds_bucket{namespace="ops",pod="mgr-0",name="tdset",controller="tdset",le="1"}`, 9),
	counter(`workqueue_queue_duration_seconds_bucket{namespace="ops",pod="mgr-0",name="tdset",controller="tdset",le="+Inf"}`, 10),
	gauge(`workqueue_longest_running_processor_seconds{namespace="ops",pod="mgr-0",name="tdset",controller="tdset"}`, 0.5),
	counter(`rest_client_requests_total{namespace="ops",pod="mgr-0",code="200",method="GET",host="10.0.0.1:443"}`, 20),
	counter(`rest_client_requests_total{namespace="ops",pod="mgr-0",code="409",method="PUT",host="10.0.0.1:443"}`, 1),
	counter(`controller_runtime_webhook_requests_total{namespace="ops",pod="mgr-0",webhook="/validate-tdset",code="200"}`, 5),
	counter(`controller_runtime_webhook_latency_seconds_bucket{namespace="ops",pod="mgr-0",webhook="/validate-tdset",le="0.1"}`, 5),
	counter(`controller_runtime_webhook_latency_seconds_bucket{namespace="ops",pod="mgr-0",webhook="/validate-tdset",le="+Inf"}`, 5),
	gauge(`webhook_certificate_expiry_timestamp_seconds{namespace="ops",pod="mgr-0",certificate="serving"}`, 4e9),
	gauge(`process_resident_memory_bytes{namespace="ops",pod="mgr-0"}`, 5e7),
	gauge(`go_memstats_heap_inuse_bytes{namespace="ops",pod="mgr-0"}`, 3e7),
	counter(`process_cpu_seconds_total{namespace="ops",pod="mgr-0"}`, 0.1),
	gauge(`go_goroutines{namespace="ops",pod="mgr-0"}`, 200),
	gauge(`process_open_fds{namespace="ops",pod="mgr-0"}`, 20),
	gauge(`process_max_fds{namespace="ops",pod="mgr-0"}`, 1024),
	// The manager's series of custom resources (honorLabels keeps their
	// namespace), then each kind's exporter beside its pods.
	gauge(`rediscluster_state{namespace="shop",pod="mgr-0",name="cache",state="ok"}`, 1),
	gauge(`rediscluster_state{namespace="shop",pod="mgr-0",name="cache",state="fail"}`, 0),
	counter(`rediscluster_failovers_total{namespace="shop",pod="mgr-0",name="cache",cause="redis"}`, 1),
	gauge(`rediscluster_rollout_step{namespace="shop",pod="mgr-0",name="cache"}`, 1),
	counter(`rediscluster_slots_migrated_total{namespace="shop",pod="mgr-0",name="cache"}`, 10),
	counter(`rediscluster_canary_acknowledged_writes_lost_total{namespace="shop",pod="mgr-0",name="cache",shard="0"}`, 1),
	counter(`rediscluster_canary_write_outage_seconds_total{namespace="shop",pod="mgr-0",name="cache",shard="0"}`, 0.5),
	gauge(`rediscluster_password_rotation_timestamp_seconds{namespace="shop",pod="mgr-0",name="cache"}`, 1.7e9),
	gauge(`redis_up{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 1),
	gauge(`redis_up{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-1"}`, 1),
	gauge(`redis_instance_info{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0",role="master",redis_version="7.4.0",redis_mode="cluster"}`, 1),
	gauge(`redis_instance_info{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-1",role="slave",redis_version="7.4.0",redis_mode="cluster"}`, 1),
	gauge(`redis_cluster_slots_ok{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 16384),
	gauge(`redis_cluster_slots_assigned{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 16384),
	gauge(`redis_cluster_slots_pfail{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 0),
	gauge(`redis_cluster_slots_fail{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 0),
	gauge(`redis_memory_used_bytes{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 1e6),
	gauge(`redis_memory_max_bytes{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 1e8),
	counter(`redis_commands_processed_total{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 100),
	counter(`redis_keyspace_hits_total{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 80),
	counter(`redis_keyspace_misses_total{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 20),
	counter(`redis_evicted_keys_total{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 1),
	gauge(`redis_connected_clients{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 5),
	gauge(`redis_db_keys{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0",db="db0"}`, 1000),
	gauge(`redis_connected_slaves{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 1),
	gauge(`redis_connected_slaves{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-1"}`, 0),
	gauge(`redis_master_link_up{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-1",master_host="10.0.0.7",master_port="6379"}`, 1),
	gauge(`redis_master_repl_offset{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0"}`, 5000),
	gauge(`redis_master_repl_offset{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-1"}`, 4900),
	gauge(`redis_connected_slave_lag_seconds{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0",slave_ip="10.0.0.8",slave_port="6379",slave_state="online"}`, 0),
	gauge(`redis_connected_slave_offset_bytes{namespace="shop",app_kubernetes_io_name="rediscluster",app_kubernetes_io_instance="cache",pod="cache-0",slave_ip="10.0.0.8",slave_port="6379",slave_state="online"}`, 4900),
	gauge(`memcached_servers_desired{namespace="shop",pod="mgr-0",name="web"}`, 1),
	gauge(`memcached_servers_available{namespace="shop",pod="mgr-0",name="web"}`, 1),
	gauge(`memcached_up{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 1),
	counter(`memcached_commands_total{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p",command="get",status="hit"}`, 8),
	counter(`memcached_commands_total{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p",command="get",status="miss"}`, 2),
	counter(`memcached_commands_total{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p",command="set",status="hit"}`, 3),
	gauge(`memcached_current_items{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 100),
	gauge(`memcached_current_bytes{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 1e5),
	gauge(`memcached_limit_bytes{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 6.4e7),
	counter(`memcached_items_evicted_total{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 1),
	gauge(`memcached_current_connections{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 3),
	counter(`memcached_read_bytes_total{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 1000),
	counter(`memcached_written_bytes_total{namespace="shop",app_kubernetes_io_name="memcached",app_kubernetes_io_instance="web",pod="web-5d4f8b-x7k2p"}`, 2000),
	gauge(`tdset_desired_replicas{namespace="shop",pod="mgr-0",name="nightly"}`, 3),
	gauge(`tdset_available_replicas{namespace="shop",pod="mgr-0",name="nightly"}`, 2),
	gauge(`tdset_active_rule_source{namespace="shop",pod="mgr-0",name="nightly",source="window"}`, 1),
	gauge(`tdset_active_rule_source{namespace="shop",pod="mgr-0",name="nightly",source="default"}`, 0),
	gauge(`tdset_next_transition_timestamp_seconds{namespace="shop",pod="mgr-0",name="nightly"}`, 4e9),
	counter(`tdset_scale_errors_total{namespace="shop",pod="mgr-0",name="nightly"}`, 0),
	counter(`tdset_lead_time_starts_total{namespace="shop",pod="mgr-0",name="nightly"}`, 1),
	counter(`whalesay_jobs_total{namespace="shop",pod="mgr-0",name="hello",outcome="succeeded"}`, 3),
	counter(`whalesay_jobs_total{namespace="shop",pod="mgr-0",name="hello",outcome="failed"}`, 1),
	counter(`whalesay_job_duration_seconds_bucket{namespace="shop",pod="mgr-0",name="hello",outcome="succeeded",le="5"}`, 2),
	counter(`whalesay_job_duration_seconds_bucket{namespace="shop",pod="mgr-0",name="hello",outcome="succeeded",le="+Inf"}`, 3),
}
