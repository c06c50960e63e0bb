package objectmetrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestForgetDropsOneObjectsSeriesOnly(t *testing.T) {
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "g", Help: "g"}, []string{"namespace", "name"})
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c", Help: "c"}, []string{"namespace", "name", "outcome"})
	for _, obj := range [][2]string{{"a", "x"}, {"a", "y"}, {"b", "x"}} {
		gauge.WithLabelValues(obj[0], obj[1]).Set(1)
		counter.WithLabelValues(obj[0], obj[1], "succeeded").Inc()
		counter.WithLabelValues(obj[0], obj[1], "failed").Inc()
	}
	Forget("a", "x", gauge, counter)
	for _, tc := range []struct {
		vec  prometheus.Collector
		want int
	}{{gauge, 2}, {counter, 4}} {
		if got := testutil.CollectAndCount(tc.vec); got != tc.want {
			t.Errorf("%d series left, want %d", got, tc.want)
		}
	}
	if got := testutil.ToFloat64(gauge.WithLabelValues("a", "y")); got != 1 {
		t.Errorf("a/y's gauge = %v, want it kept at 1", got)
	}
}

func TestSetOneOf(t *testing.T) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "s", Help: "s"}, []string{"namespace", "name", "state"})
	values := []string{"ok", "fail", "unknown"}
	for _, tc := range []struct {
		active string
		want   map[string]float64
	}{
		{"fail", map[string]float64{"ok": 0, "fail": 1, "unknown": 0}},
		{"ok", map[string]float64{"ok": 1, "fail": 0, "unknown": 0}},
		{"other", map[string]float64{"ok": 0, "fail": 0, "unknown": 0}},
	} {
		SetOneOf(g, "ns", "x", values, tc.active)
		for v, want := range tc.want {
			if got := testutil.ToFloat64(g.WithLabelValues("ns", "x", v)); got != want {
				t.Errorf("active %s: %s = %v, want %v", tc.active, v, got, want)
			}
		}
	}
}
