package rediscluster_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/multi-operator/multi-operator/controllers/rediscluster"
)

// metricsNS and metricsName name the cluster whose series the test follows.
const metricsNS, metricsName = "metrics-ns", "metrics-rc"

// seriesOf counts the series of c labelled with the cluster namespace/name.
// The registry is the process's: other tests' clusters have series too.
func seriesOf(g Gomega, c prometheus.Collector, namespace, name string) int {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for m := range ch {
		var pb dto.Metric
		g.Expect(m.Write(&pb)).To(Succeed())
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["namespace"] == namespace && labels["name"] == name {
			n++
		}
	}
	return n
}

// A cluster's failover counters exist at zero from its first reconcile,
// for every cause, so that increase() counts the first failover; they go
// with the cluster.
func TestFailoverSeriesStartAtZeroAndGoWithTheCluster(t *testing.T) {
	g := NewWithT(t)
	const ns, name = metricsNS, metricsName
	g.Expect(seriesOf(g, rediscluster.Failovers, metricsNS, metricsName)).To(BeZero(), "no series before the first reconcile")

	rediscluster.InitMetrics(ns, name)
	g.Expect(seriesOf(g, rediscluster.Failovers, metricsNS, metricsName)).To(Equal(2), "one series per cause")
	for _, cause := range []string{"rollout", "redis"} {
		g.Expect(testutil.ToFloat64(rediscluster.Failovers.WithLabelValues(ns, name, cause))).To(BeZero(), cause)
	}
	g.Expect(seriesOf(g, rediscluster.SlotsMigrated, metricsNS, metricsName)).To(Equal(1))

	rediscluster.Failovers.WithLabelValues(ns, name, "redis").Inc()
	rediscluster.InitMetrics(ns, name)
	g.Expect(testutil.ToFloat64(rediscluster.Failovers.WithLabelValues(ns, name, "redis"))).To(Equal(1.0), "a later reconcile keeps the count")

	rediscluster.ForgetMetrics(ns, name)
	g.Expect(seriesOf(g, rediscluster.Failovers, metricsNS, metricsName)).To(BeZero(), "the series go with the cluster")
	g.Expect(seriesOf(g, rediscluster.SlotsMigrated, metricsNS, metricsName)).To(BeZero())
}
