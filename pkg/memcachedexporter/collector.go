package memcachedexporter

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// namespace prefixes every metric, as prometheus/memcached_exporter's do.
const namespace = "memcached"

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// The metrics, named and labelled as prometheus/memcached_exporter names them.
var (
	upDesc                 = desc("up", "Whether the memcached server answered the last scrape with well-formed statistics.")
	uptimeDesc             = desc("uptime_seconds", "Seconds since the memcached server started.")
	timeDesc               = desc("time_seconds", "The memcached server's current Unix time.")
	versionDesc            = desc("version", "The memcached server's version, as a label; always 1.", "version")
	currentItemsDesc       = desc("current_items", "Items stored now.")
	itemsTotalDesc         = desc("items_total", "Items stored since the server started.")
	evictedDesc            = desc("items_evicted_total", "Items removed before they expired, to free memory for new ones.")
	reclaimedDesc          = desc("items_reclaimed_total", "Items stored in the memory of an expired item.")
	currentBytesDesc       = desc("current_bytes", "Bytes used to store items now.")
	limitBytesDesc         = desc("limit_bytes", "Bytes the server may use to store items (-m).")
	mallocedBytesDesc      = desc("malloced_bytes", "Bytes allocated to slab pages.")
	currentConnectionsDesc = desc("current_connections", "Open client connections.")
	connectionsTotalDesc   = desc("connections_total", "Connections opened since the server started.")
	maxConnectionsDesc     = desc("max_connections", "Client connections the server allows at once (-c).")
	listenerDisabledDesc   = desc("connections_listener_disabled_total", "Times the server reached its connection limit and stopped accepting.")
	yieldedDesc            = desc("connections_yielded_total", "Times a connection yielded to others after its -R requests in a row.")
	readBytesDesc          = desc("read_bytes_total", "Bytes the server read from the network.")
	writtenBytesDesc       = desc("written_bytes_total", "Bytes the server wrote to the network.")
	commandsDesc           = desc("commands_total", "Commands by command (get, set, ...) and status (hit, miss, badval).", "command", "status")
)

// Collector asks memcached for its statistics on every scrape: a
// prometheus.Collector, so that a scrape reports the server as it is and
// the exporter keeps nothing between scrapes.
type Collector struct {
	address string
	timeout time.Duration
	// limits bound `stats` and `stats settings`, slabsLimits `stats slabs`.
	limits, slabsLimits Limits
	logger              *slog.Logger
}

// NewCollector returns a Collector of the memcached server at address
// (host:port), whose scrape gives up after timeout.
func NewCollector(address string, timeout time.Duration, logger *slog.Logger) *Collector {
	return &Collector{address: address, timeout: timeout, limits: DefaultLimits, slabsLimits: SlabsLimits, logger: logger}
}

// Metric is one of the exporter's metrics, for its reference in
// docs/memcached.md.
type Metric struct {
	// Desc is its name, help and labels.
	Desc *prometheus.Desc
	// Type is counter or gauge.
	Type prometheus.ValueType
}

// Metrics are every metric the exporter serves.
var Metrics = []Metric{
	{upDesc, prometheus.GaugeValue}, {uptimeDesc, prometheus.CounterValue}, {timeDesc, prometheus.GaugeValue},
	{versionDesc, prometheus.GaugeValue}, {currentItemsDesc, prometheus.GaugeValue}, {itemsTotalDesc, prometheus.CounterValue},
	{evictedDesc, prometheus.CounterValue}, {reclaimedDesc, prometheus.CounterValue}, {currentBytesDesc, prometheus.GaugeValue},
	{limitBytesDesc, prometheus.GaugeValue}, {mallocedBytesDesc, prometheus.GaugeValue}, {currentConnectionsDesc, prometheus.GaugeValue},
	{connectionsTotalDesc, prometheus.CounterValue}, {maxConnectionsDesc, prometheus.GaugeValue}, {listenerDisabledDesc, prometheus.CounterValue},
	{yieldedDesc, prometheus.CounterValue}, {readBytesDesc, prometheus.CounterValue}, {writtenBytesDesc, prometheus.CounterValue},
	{commandsDesc, prometheus.CounterValue},
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range Metrics {
		ch <- m.Desc
	}
}

// Collect scrapes memcached. memcached_up is 0, and no other metric is
// sent, when the server cannot be reached in time or its replies are not
// well-formed statistics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	stats, settings, slabs, err := c.scrape(ctx)
	var metrics []prometheus.Metric
	if err == nil {
		metrics, err = convert(stats, settings, slabs)
	}
	if err != nil {
		c.logger.Info("memcached scrape failed", "address", c.address, "error", err)
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 0)
		return
	}
	for _, m := range metrics {
		ch <- m
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 1)
}

// scrape sends `stats`, `stats settings` and `stats slabs` on one
// connection, whose deadline is ctx's.
func (c *Collector) scrape(ctx context.Context) (stats, settings, slabs Stats, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.address)
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() { _ = conn.Close() }()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return nil, nil, nil, err
		}
	}
	ask := func(command string, limits Limits) (Stats, error) {
		if _, err := conn.Write([]byte(command + "\r\n")); err != nil {
			return nil, err
		}
		s, err := ParseStats(conn, limits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", command, err)
		}
		return s, nil
	}
	if stats, err = ask("stats", c.limits); err != nil {
		return nil, nil, nil, err
	}
	if settings, err = ask("stats settings", c.limits); err != nil {
		return nil, nil, nil, err
	}
	if slabs, err = ask("stats slabs", c.slabsLimits); err != nil {
		return nil, nil, nil, err
	}
	return stats, settings, slabs, nil
}

// gauges and counters map a statistic of `stats` to its metric.
var (
	gauges = map[string]*prometheus.Desc{
		"time":             timeDesc,
		"curr_items":       currentItemsDesc,
		"bytes":            currentBytesDesc,
		"limit_maxbytes":   limitBytesDesc,
		"curr_connections": currentConnectionsDesc,
	}
	counters = map[string]*prometheus.Desc{
		"uptime":              uptimeDesc,
		"total_items":         itemsTotalDesc,
		"evictions":           evictedDesc,
		"reclaimed":           reclaimedDesc,
		"total_connections":   connectionsTotalDesc,
		"listen_disabled_num": listenerDisabledDesc,
		"conn_yields":         yieldedDesc,
		"bytes_read":          readBytesDesc,
		"bytes_written":       writtenBytesDesc,
	}
	// hitMissCommands are the commands whose hits and misses memcached counts.
	hitMissCommands = []string{"get", "delete", "incr", "decr", "cas", "touch"}
)

// maxVersionBytes bounds the version label's value.
const maxVersionBytes = 32

// convert turns the replies into metrics. A statistic that a server of
// another release does not report is left out; one whose value is not a
// number fails the scrape. Of `stats slabs` only the total is used: the
// per-class series are left out.
func convert(stats, settings, slabs Stats) ([]prometheus.Metric, error) {
	var out []prometheus.Metric
	num := func(s Stats, name string) (float64, bool, error) {
		v, ok := s[name]
		if !ok {
			return 0, false, nil
		}
		f, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%w: %s is not a count", ErrMalformed, name)
		}
		return float64(f), true, nil
	}
	add := func(s Stats, name string, d *prometheus.Desc, t prometheus.ValueType, labels ...string) error {
		v, ok, err := num(s, name)
		if ok {
			out = append(out, prometheus.MustNewConstMetric(d, t, v, labels...))
		}
		return err
	}
	for name, d := range gauges {
		if err := add(stats, name, d, prometheus.GaugeValue); err != nil {
			return nil, err
		}
	}
	for name, d := range counters {
		if err := add(stats, name, d, prometheus.CounterValue); err != nil {
			return nil, err
		}
	}
	for _, cmd := range hitMissCommands {
		if err := add(stats, cmd+"_hits", commandsDesc, prometheus.CounterValue, cmd, "hit"); err != nil {
			return nil, err
		}
		if err := add(stats, cmd+"_misses", commandsDesc, prometheus.CounterValue, cmd, "miss"); err != nil {
			return nil, err
		}
	}
	if err := add(stats, "cas_badval", commandsDesc, prometheus.CounterValue, "cas", "badval"); err != nil {
		return nil, err
	}
	if err := add(stats, "cmd_flush", commandsDesc, prometheus.CounterValue, "flush", "hit"); err != nil {
		return nil, err
	}
	// cmd_set counts cas commands too; sets are the rest.
	set, ok, err := num(stats, "cmd_set")
	if err != nil {
		return nil, err
	}
	if ok {
		var cas float64
		for _, name := range []string{"cas_hits", "cas_misses", "cas_badval"} {
			v, _, _ := num(stats, name)
			cas += v
		}
		out = append(out, prometheus.MustNewConstMetric(commandsDesc, prometheus.CounterValue, max(set-cas, 0), "set", "hit"))
	}
	if v, ok := stats["version"]; ok {
		if len(v) > maxVersionBytes || strings.Trim(v, "0123456789.-_+abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return nil, fmt.Errorf("%w: a version that is not a version", ErrMalformed)
		}
		out = append(out, prometheus.MustNewConstMetric(versionDesc, prometheus.GaugeValue, 1, v))
	}
	if err := add(settings, "maxconns", maxConnectionsDesc, prometheus.GaugeValue); err != nil {
		return nil, err
	}
	if err := add(slabs, "total_malloced", mallocedBytesDesc, prometheus.GaugeValue); err != nil {
		return nil, err
	}
	return out, nil
}
