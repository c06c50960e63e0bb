package memcachedexporter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
)

// startMemcached runs a real memcached on a free loopback port and returns
// its address.
func startMemcached(t *testing.T) string {
	t.Helper()
	bin := reporoottest.RequireCommand(t, "memcached", "make deps (Debian package memcached)")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	args := []string{"-l", "127.0.0.1", "-p", fmt.Sprint(port), "-U", "0", "-m", "8", "-c", "77"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody") // memcached refuses to run as root
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached did not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client is a memcached text-protocol client for the test's traffic.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// do sends one command and reads its reply up to a line in ends.
func (c *client) do(command string, ends ...string) string {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, command); err != nil {
		c.t.Fatal(err)
	}
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatal(err)
		}
		for _, e := range ends {
			if strings.TrimSpace(line) == e {
				return e
			}
		}
	}
}

func (c *client) set(key, value string) {
	c.t.Helper()
	if got := c.do(fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", key, len(value), value), "STORED", "ERROR"); got != "STORED" {
		c.t.Fatalf("set %s: %s", key, got)
	}
}

func (c *client) get(key string) { c.t.Helper(); c.do("get "+key+"\r\n", "END") }

func value(t *testing.T, c prometheus.Collector, name string, labels ...string) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	go func() { c.Collect(ch); close(ch) }()
	for m := range ch {
		if !strings.Contains(m.Desc().String(), `"`+name+`"`) {
			continue
		}
		var d = testutilMetric(m)
		if d.matches(labels) {
			return d.value
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

func TestAgainstMemcached(t *testing.T) {
	addr := startMemcached(t)
	col := NewCollector(addr, 2*time.Second, slog.New(slog.DiscardHandler))
	problems, err := testutil.CollectAndLint(col)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		// memcached_exporter's name, kept for its dashboards.
		if p.Metric != "memcached_uptime_seconds" {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
	if up := value(t, col, "memcached_up"); up != 1 {
		t.Fatalf("memcached_up = %v", up)
	}
	if got := value(t, col, "memcached_max_connections"); got != 77 {
		t.Errorf("memcached_max_connections = %v, want memcached's -c 77", got)
	}
	if got := value(t, col, "memcached_limit_bytes"); got != 8<<20 {
		t.Errorf("memcached_limit_bytes = %v, want memcached's -m 8 MB", got)
	}
	itemsBefore := value(t, col, "memcached_current_items")
	hitsBefore := value(t, col, "memcached_commands_total", "get", "hit")
	missesBefore := value(t, col, "memcached_commands_total", "get", "miss")
	setsBefore := value(t, col, "memcached_commands_total", "set", "hit")

	c := dial(t, addr)
	for i := range 5 {
		c.set(fmt.Sprintf("k%d", i), "v")
	}
	for i := range 5 {
		c.get(fmt.Sprintf("k%d", i))
	}
	c.get("k0")
	c.get("absent1")
	c.get("absent2")
	c.do("cas k0 0 0 1 12345\r\nx\r\n", "EXISTS", "NOT_FOUND", "STORED")

	for _, want := range []struct {
		name   string
		labels []string
		delta  float64
		before float64
	}{
		{"memcached_current_items", nil, 5, itemsBefore},
		{"memcached_commands_total", []string{"get", "hit"}, 6, hitsBefore},
		{"memcached_commands_total", []string{"get", "miss"}, 2, missesBefore},
		{"memcached_commands_total", []string{"set", "hit"}, 5, setsBefore},
		{"memcached_commands_total", []string{"cas", "badval"}, 1, 0},
		{"memcached_items_total", nil, 5, 0},
	} {
		if got := value(t, col, want.name, want.labels...); got != want.before+want.delta {
			t.Errorf("%s%v = %v, want %v", want.name, want.labels, got, want.before+want.delta)
		}
	}
	if got := value(t, col, "memcached_current_connections"); got < 2 {
		t.Errorf("memcached_current_connections = %v with the test's client and the scrape open", got)
	}
	if got := value(t, col, "memcached_malloced_bytes"); got == 0 {
		t.Error("memcached_malloced_bytes is 0 with items stored")
	}
	if got := value(t, col, "memcached_read_bytes_total"); got == 0 {
		t.Error("memcached_read_bytes_total is 0 after traffic")
	}
	if got := value(t, col, "memcached_version", versionOf(t, c)); got != 1 {
		t.Errorf("memcached_version = %v", got)
	}
}

func versionOf(t *testing.T, c *client) string {
	if _, err := io.WriteString(c.conn, "version\r\n"); err != nil {
		t.Fatal(err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "VERSION "))
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	col := NewCollector(addr, time.Second, slog.New(slog.DiscardHandler))
	if n := testutil.CollectAndCount(col); n != 1 {
		t.Errorf("%d metrics from an unreachable server, want memcached_up alone", n)
	}
	if up := value(t, col, "memcached_up"); up != 0 {
		t.Errorf("memcached_up = %v for an unreachable server", up)
	}
}

// TestServe scrapes the sidecar's HTTP endpoint as Prometheus would.
func TestServe(t *testing.T) {
	addr := startMemcached(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, addr, time.Second, slog.New(slog.DiscardHandler)) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, want := range []string{"memcached_up 1", `memcached_commands_total{command="get",status="hit"} 0`, "# TYPE memcached_uptime_seconds counter"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// sample is one collected metric's label values and value.
type sample struct {
	labels []string
	value  float64
}

func testutilMetric(m prometheus.Metric) sample {
	var pb dto.Metric
	if err := m.Write(&pb); err != nil {
		panic(err)
	}
	var s sample
	for _, l := range pb.GetLabel() {
		s.labels = append(s.labels, l.GetValue())
	}
	switch {
	case pb.Gauge != nil:
		s.value = pb.GetGauge().GetValue()
	case pb.Counter != nil:
		s.value = pb.GetCounter().GetValue()
	}
	return s
}

// matches says whether the sample has exactly these label values, in the
// order of the description's labels.
func (s sample) matches(labels []string) bool {
	return slices.Equal(s.labels, labels) || len(labels) == 0 && len(s.labels) == 0
}

// TestReference: docs/memcached.md lists every metric with its type and
// labels, and the collector sends each metric with the type it is listed with.
func TestReference(t *testing.T) {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "memcached.md"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, m := range Metrics {
		name := fqName(m.Desc)
		typ := map[prometheus.ValueType]string{prometheus.CounterValue: "counter", prometheus.GaugeValue: "gauge"}[m.Type]
		types[name] = typ
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "` \\| " + typ + " \\| ")
		if !row.Match(doc) {
			t.Errorf("docs/memcached.md has no row for %s (%s)", name, typ)
		}
	}
	addr := startMemcached(t)
	col := NewCollector(addr, 2*time.Second, slog.New(slog.DiscardHandler))
	ch := make(chan prometheus.Metric, 100)
	go func() { col.Collect(ch); close(ch) }()
	seen := map[string]bool{}
	for m := range ch {
		name := fqName(m.Desc())
		seen[name] = true
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		got := "gauge"
		if pb.Counter != nil {
			got = "counter"
		}
		if types[name] != got {
			t.Errorf("%s is sent as a %s, listed as a %q", name, got, types[name])
		}
	}
	for name := range types {
		if !seen[name] {
			t.Errorf("memcached 1.6 gave no %s", name)
		}
	}
}

func fqName(d *prometheus.Desc) string {
	return regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(d.String())[1]
}
