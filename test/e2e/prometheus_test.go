//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
	"github.com/multi-operator/multi-operator/test/framework/managerproc"
)

// TestPrometheusScrapesOnTheRealNode runs Debian's Prometheus on the
// cluster's host, as a monitoring stack would: it scrapes the pods of a
// namespace that have a port named metrics, as the operator's PodMonitors
// select them, at their pod IPs, and the leading manager's secure metrics
// endpoint with a ServiceAccount's token.
// The queries a dashboard and the alerts run answer: redis_up and
// memcached_up of every exporter sidecar, the write canary's counters per
// shard, and a TDSet's desired replicas changing at its window's start.
func TestPrometheusScrapesOnTheRealNode(t *testing.T) {
	requireRedisNode(t)
	// Parallel with TestRedisKeepsEveryKeyOnTheRealNode (see there).
	t.Parallel()
	if leader == nil || leader.MetricsAddr == "" {
		t.Fatal("the leading manager serves no metrics")
	}
	bin := reporoottest.RequireCommand(t, "prometheus", "make deps (Debian package prometheus)")
	ns := namespace(t)
	// The namespaces whose pods may scrape the exporters (the default of
	// REDIS_EXPORTER_SCRAPERS); the host is not a pod, but the label is
	// what a user sets for an in-cluster Prometheus.
	kubectl(t, "label", "namespace", ns, "metrics=enabled")

	token := metricsToken(t, ns)
	prom := startPrometheus(t, bin, token)

	applyRedisClusterSpec(t, ns, "scraped", 2, `{"size":2,"replicasPerMaster":1,"monitoring":{"canary":{"enabled":true,"interval":"1s"}}}`)
	memcached(t, ns, "cache")
	prom.discover(t, ns)

	t.Run("every exporter sidecar answers", func(t *testing.T) {
		g := NewWithT(t)
		g.Eventually(func(g Gomega) {
			prom.expectSeries(g, `redis_up{namespace="`+ns+`",app_kubernetes_io_instance="scraped"}`, 4, 1)
			prom.expectSeries(g, `redis_connected_slaves{namespace="`+ns+`",app_kubernetes_io_instance="scraped"} == 1`, 2, 1)
			prom.expectSeries(g, `memcached_up{namespace="`+ns+`",app_kubernetes_io_instance="cache"}`, 2, 1)
		}, "3m", "2s").Should(Succeed())
	})

	t.Run("the write canary counts per shard", func(t *testing.T) {
		g := NewWithT(t)
		g.Eventually(func(g Gomega) {
			prom.expectSeries(g, `rediscluster_canary_acknowledged_writes_lost_total{namespace="`+ns+`",name="scraped"}`, 2, 0)
			g.Expect(prom.query(g, `rediscluster_canary_write_outage_seconds_total{namespace="`+ns+`",name="scraped"}`)).To(HaveLen(2))
			g.Expect(prom.query(g, `rediscluster_state{namespace="`+ns+`",name="scraped",state="ok"} == 1`)).To(HaveLen(1))
		}, "2m", "2s").Should(Succeed())
	})

	t.Run("a TDSet's desired replicas change at its window's start", func(t *testing.T) {
		g := NewWithT(t)
		// A window that opens at the second minute boundary from now, every
		// day, in UTC: at least a minute of the default count first.
		start := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
		end := start.Add(10 * time.Minute)
		manifest := fmt.Sprintf(`{"apiVersion":"schedule.rs/v2","kind":"TDSet","metadata":{"name":"office","namespace":%q},"spec":{`+
			`"scaleTargetRef":{"apiVersion":"cache.example.com/v1alpha1","kind":"Memcached","name":"cache"},"timeZone":"UTC","defaultReplicas":1,`+
			`"windows":[{"start":%q,"end":%q,"replicas":2}]}}`, ns, start.Format("15:04"), end.Format("15:04"))
		applyJSON(t, manifest)
		desired := func(g Gomega) float64 {
			s := prom.query(g, `tdset_desired_replicas{namespace="`+ns+`",name="office"}`)
			g.Expect(s).To(HaveLen(1))
			return s[0].value
		}
		g.Eventually(desired, "90s", "2s").Should(Equal(1.0), "the default count before the window")
		g.Expect(time.Now()).To(BeTemporally("<", start), "the default count was scraped before the window opened")
		g.Eventually(desired, time.Until(start)+time.Minute, 2*time.Second).Should(Equal(2.0), "the window's count once it opened at %s", start)
		g.Eventually(func(g Gomega) float64 {
			s := prom.query(g, `tdset_available_replicas{namespace="`+ns+`",name="office"}`)
			g.Expect(s).To(HaveLen(1))
			return s[0].value
		}, "2m", "2s").Should(Equal(2.0), "the Memcached runs the window's count")
	})
}

// metricsToken is a token of a ServiceAccount in ns allowed to read the
// manager's /metrics, as a Prometheus in the cluster would hold.
func metricsToken(t *testing.T, ns string) string {
	t.Helper()
	role := ns + "-metrics-reader"
	kubectl(t, "create", "serviceaccount", "-n", ns, "prometheus")
	kubectl(t, "create", "clusterrole", role, "--verb=get", "--non-resource-url=/metrics")
	t.Cleanup(func() { _, _ = run("delete", "clusterrole", role, "--ignore-not-found") })
	kubectl(t, "create", "clusterrolebinding", role, "--clusterrole="+role, "--serviceaccount="+ns+":prometheus")
	t.Cleanup(func() { _, _ = run("delete", "clusterrolebinding", role, "--ignore-not-found") })
	return kubectl(t, "create", "token", "-n", ns, "prometheus", "--duration=1h")
}

// managerMetrics reads the leading manager's /metrics with token, as
// Prometheus does.
func managerMetrics(t *testing.T, token string) string {
	t.Helper()
	if leader == nil || leader.MetricsAddr == "" {
		t.Fatal("the leading manager serves no metrics")
	}
	g := NewWithT(t)
	code, body := scrape(g, "https://"+leader.MetricsAddr+"/metrics", token)
	g.Expect(code).To(Equal(http.StatusOK), "the manager's metrics")
	return body
}

// prometheus is a Prometheus server the test started.
type prometheus struct {
	addr string
	// targetsFile lists the pods it scrapes (file_sd): Debian builds
	// Prometheus without Kubernetes discovery.
	targetsFile string
}

// discover lists, in p's targets file, the pods of ns that have a port
// named metrics, with their namespace, name and app.kubernetes.io labels,
// as the operator's PodMonitors (podTargetLabels) have the Prometheus
// Operator make them.
func (p *prometheus) discover(t *testing.T, ns string) {
	t.Helper()
	var pods struct {
		Items []struct {
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Containers []struct {
					Ports []struct {
						Name          string `json:"name"`
						ContainerPort int    `json:"containerPort"`
					} `json:"ports"`
				} `json:"containers"`
			} `json:"spec"`
			Status struct {
				PodIP string `json:"podIP"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(kubectl(t, "get", "pods", "-n", ns, "-o", "json")), &pods); err != nil {
		t.Fatal(err)
	}
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	var groups []group
	for _, pod := range pods.Items {
		for _, c := range pod.Spec.Containers {
			for _, port := range c.Ports {
				if port.Name != "metrics" || pod.Status.PodIP == "" {
					continue
				}
				labels := map[string]string{"namespace": ns, "pod": pod.Metadata.Name}
				for k, v := range pod.Metadata.Labels {
					if name, ok := strings.CutPrefix(k, "app.kubernetes.io/"); ok {
						labels["app_kubernetes_io_"+strings.ReplaceAll(name, "-", "_")] = v
					}
				}
				groups = append(groups, group{Targets: []string{net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port.ContainerPort))}, Labels: labels})
			}
		}
	}
	raw, err := json.Marshal(groups)
	if err != nil {
		t.Fatal(err)
	}
	// Written whole and renamed, so that Prometheus never reads half a file.
	tmp := p.targetsFile + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p.targetsFile); err != nil {
		t.Fatal(err)
	}
}

// startPrometheus starts bin on a free loopback port with a configuration
// that scrapes, every second, the pods its discover lists and the leading
// manager's metrics with token. It stops with the test.
func startPrometheus(t *testing.T, bin, token string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	addr, err := managerproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &prometheus{addr: addr, targetsFile: filepath.Join(dir, "targets.json")}
	if err := os.WriteFile(p.targetsFile, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	// The pods' labels become the series' labels, as the operator's
	// PodMonitors' podTargetLabels make them; the manager's series carry
	// their own namespace label (honor_labels, as the ServiceMonitor sets).
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
- job_name: exporters
  file_sd_configs:
  - files: [%q]
    refresh_interval: 1s
- job_name: manager
  scheme: https
  honor_labels: true
  tls_config:
    insecure_skip_verify: true
  authorization:
    credentials_file: %q
  static_configs:
  - targets: [%q]
`, p.targetsFile, tokenFile, leader.MetricsAddr)
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Prometheus's targets: %s", p.scrapedTargets())
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("Prometheus's log:\n%s", out)
		}
	})
	NewWithT(t).Eventually(func() error {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return err
		}
		_ = resp.Body.Close() // only the status matters
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	}, "30s").Should(Succeed(), "Prometheus starts")
	return p
}

// series is one series of an instant query's result.
type series struct {
	labels map[string]string
	value  float64
}

// query runs an instant PromQL query through Prometheus's HTTP API.
func (p *prometheus) query(g Gomega, promql string) []series {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/api/v1/query?query="+url.QueryEscape(promql), nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }() // read in full below
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	g.Expect(json.NewDecoder(resp.Body).Decode(&body)).To(Succeed())
	g.Expect(body.Status).To(Equal("success"), "%s: %s", promql, body.Error)
	out := make([]series, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		text, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(text, 64)
		g.Expect(err).NotTo(HaveOccurred(), "%s: value %v", promql, r.Value[1])
		out = append(out, series{labels: r.Metric, value: v})
	}
	return out
}

// expectSeries expects promql to give n series, one per Redis node, shard
// or server, each of value.
func (p *prometheus) expectSeries(g Gomega, promql string, n int, value float64) {
	got := p.query(g, promql)
	g.Expect(got).To(HaveLen(n), promql)
	for _, s := range got {
		g.Expect(s.value).To(Equal(value), "%s: %v", promql, s.labels)
	}
}

// scrapedTargets lists what Prometheus scrapes and whether it is up, for a
// failure's message.
func (p *prometheus) scrapedTargets() string {
	resp, err := http.Get("http://" + p.addr + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }() // read in full below
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err.Error()
	}
	return resp.Status + ": " + string(body)
}
