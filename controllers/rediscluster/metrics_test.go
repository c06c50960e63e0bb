package rediscluster_test

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// metricsNS and metricsName name the cluster whose series the test follows.
const metricsNS, metricsName = "metrics-ns", "metrics-rc"

// seriesOf counts the series of c labelled with the cluster ns/name: the
// registry is the process's, which every test's clusters share.
func seriesOf(g Gomega, c prometheus.Collector, ns, name string) int {
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
		if labels["namespace"] == ns && labels["name"] == name {
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
	g.Expect(seriesOf(g, rediscluster.Failovers, ns, name)).To(BeZero(), "no series before the first reconcile")

	rediscluster.InitMetrics(ns, name)
	g.Expect(seriesOf(g, rediscluster.Failovers, ns, name)).To(Equal(2), "one series per cause")
	for _, cause := range []string{"rollout", "redis"} {
		g.Expect(testutil.ToFloat64(rediscluster.Failovers.WithLabelValues(ns, name, cause))).To(BeZero(), cause)
	}
	g.Expect(seriesOf(g, rediscluster.SlotsMigrated, ns, name)).To(Equal(1))
	g.Expect(seriesOf(g, rediscluster.RotationFailures, ns, name)).To(Equal(2), "one series per reason of a failed rotation")

	rediscluster.Failovers.WithLabelValues(ns, name, "redis").Inc()
	rediscluster.InitMetrics(ns, name)
	g.Expect(testutil.ToFloat64(rediscluster.Failovers.WithLabelValues(ns, name, "redis"))).To(Equal(1.0), "a later reconcile keeps the count")

	rediscluster.ForgetMetrics(ns, name)
	g.Expect(seriesOf(g, rediscluster.Failovers, ns, name)).To(BeZero(), "the series go with the cluster")
	g.Expect(seriesOf(g, rediscluster.SlotsMigrated, ns, name)).To(BeZero())
	g.Expect(seriesOf(g, rediscluster.RotationFailures, ns, name)).To(BeZero())
}

func TestRotationFailure(t *testing.T) {
	refused := redisadmin.AccessResult{Refused: []string{"rc-0"}, Unreachable: map[string]string{"rc-0": "refuses"}}
	down := redisadmin.AccessResult{Unreachable: map[string]string{"rc-1": "connection refused"}}
	failed := errors.New("ERR Error in ACL SETUSER")
	for _, tc := range []struct {
		name    string
		pending bool
		res     redisadmin.AccessResult
		err     error
		want    string
	}{
		{name: "refused while rotating", pending: true, res: refused, want: "refused"},
		{name: "refused at rest", res: refused, want: "refused"},
		{name: "a command failed while rotating", pending: true, err: failed, want: "error"},
		{name: "a command failed at rest", err: failed},
		{name: "a node is down while rotating", pending: true, res: down},
		{name: "done", pending: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(rediscluster.RotationFailure(tc.pending, tc.res, tc.err)).To(Equal(tc.want))
		})
	}
}
