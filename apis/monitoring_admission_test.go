package apis_test

import (
	"strconv"
	"testing"
	"time"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// withInterval is each kind carrying shared.Monitoring, with
// spec.monitoring.podMonitor.interval set.
var withInterval = map[string]func(interval string) *bound{
	"RedisCluster": func(interval string) *bound {
		return &bound{obj: redis(func(rc *cachev1.RedisCluster) {
			rc.Spec.Monitoring = &cachev1.RedisClusterMonitoring{Monitoring: shared.Monitoring{PodMonitor: &shared.PodMonitor{Interval: interval}}}
		})}
	},
	"Memcached": func(interval string) *bound {
		m := builders.Memcached("", "").Size(1).Obj()
		m.Spec.Monitoring = &shared.Monitoring{PodMonitor: &shared.PodMonitor{Interval: interval}}
		return &bound{obj: m}
	},
}

// The scrape interval is a duration the PodMonitor CRD accepts (units in
// the order h, m, s, ms, each once) and at least 10s, on every kind.
func TestPodMonitorIntervalBounds(t *testing.T) {
	const (
		badPattern = "spec.monitoring.podMonitor.interval in body should match"
		tooShort   = "monitoring.podMonitor.interval must be at least 10s"
	)
	cases := []struct{ interval, refused string }{
		{"10s", ""},
		{"1m", ""},
		{"1h", ""},
		{"1m30s", ""},
		{"1h2m3s4ms", ""},
		{"10000ms", ""},
		{"1s1m", badPattern},
		{"1m1m", badPattern},
		{"30", badPattern},
		{"1d", badPattern},
		{"1ms", tooShort},
		{"9s", tooShort},
		{"9s999ms", tooShort},
	}
	var rows []bound
	for kind, build := range withInterval {
		for _, c := range cases {
			row := build(c.interval)
			row.name, row.refused = kind+" "+c.interval, c.refused
			rows = append(rows, *row)
		}
	}
	expectBounds(t, rows)
}

func memcachedPort(port int32, exporterDisabled *bool) *cachev1alpha1.Memcached {
	m := builders.Memcached("", "").Size(1).Obj()
	m.Spec.ContainerPort = port
	if exporterDisabled != nil {
		m.Spec.Monitoring = &shared.Monitoring{Exporter: &shared.Exporter{Disabled: *exporterDisabled}}
	}
	return m
}

// memcached cannot listen on the exporter's port while the exporter runs
// beside it: the exporter could not bind and would crash-loop.
func TestMemcachedPortBesideExporter(t *testing.T) {
	refused := "spec.containerPort cannot be " + strconv.Itoa(cachev1alpha1.ExporterPort) + ", the metrics exporter's port, unless monitoring.exporter.disabled is true"
	yes, no := true, false
	expectBounds(t, []bound{
		{name: "exporter's port with the exporter by default", obj: memcachedPort(cachev1alpha1.ExporterPort, nil), refused: refused},
		{name: "exporter's port with the exporter enabled", obj: memcachedPort(cachev1alpha1.ExporterPort, &no), refused: refused},
		{name: "exporter's port with the exporter disabled", obj: memcachedPort(cachev1alpha1.ExporterPort, &yes)},
		{name: "next port with the exporter", obj: memcachedPort(cachev1alpha1.ExporterPort+1, nil)},
		{name: "default port", obj: memcachedPort(0, nil)},
	})
}

func redisCanary(interval time.Duration) *cachev1.RedisCluster {
	return builders.RedisCluster("", "").Size(1).Canary(interval).Obj()
}

// The write canary's interval is from 1s to 60s, so that a tenant cannot
// make the manager write to its nodes more often than once a second.
func TestCanaryIntervalBounds(t *testing.T) {
	const outOfRange = "monitoring.canary.interval must be from 1s to 60s"
	expectBounds(t, []bound{
		{name: "1s", obj: redisCanary(time.Second)},
		{name: "1.5s", obj: redisCanary(1500 * time.Millisecond)},
		{name: "60s", obj: redisCanary(time.Minute)},
		{name: "999ms", obj: redisCanary(999 * time.Millisecond), refused: outOfRange},
		{name: "61s", obj: redisCanary(61 * time.Second), refused: outOfRange},
		{name: "1h", obj: redisCanary(time.Hour), refused: "spec.monitoring.canary.interval in body should match"},
	})
}
