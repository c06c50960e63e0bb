package memcached

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
)

func TestServerMetricsFollowTheReportAndGo(t *testing.T) {
	g := NewWithT(t)
	m := &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: "metrics-ns", Name: "servers"}, Spec: cachev1alpha1.MemcachedSpec{Size: 3}}
	recordServers(m, deploymentReport{availableReplicas: 2})
	g.Expect(testutil.ToFloat64(serversDesired.WithLabelValues("metrics-ns", "servers"))).To(Equal(3.0))
	g.Expect(testutil.ToFloat64(serversAvailable.WithLabelValues("metrics-ns", "servers"))).To(Equal(2.0))
	forgetMetrics("metrics-ns", "servers")
	g.Expect(testutil.CollectAndCount(serversDesired)).To(BeZero())
	g.Expect(testutil.CollectAndCount(serversAvailable)).To(BeZero())
}
