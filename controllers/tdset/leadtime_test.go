package tdset_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// A TDSet that grows a RedisCluster for a window starts early enough for
// the keys to move, from the cluster's measured migration rate, and says
// when the cluster had the window's masters serving. No RedisCluster
// controller runs here: the test writes the cluster's status as it would.
func TestScaleTargetRedisClusterGrowsAheadOfItsWindow(t *testing.T) {
	g, c, ns, clk := scaling(t, reconciler.Options{})
	clk.SetTime(time.Date(2026, 3, 10, 6, 0, 0, 0, time.UTC))
	rc := builders.RedisCluster(ns, "shards").Size(3).Obj()
	g.Expect(c.Create(bg, rc)).To(Succeed())
	setRedisStatus := func(size int32, migration *cachev1.MigrationStatus) {
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(bg, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
			rc.Status.Size, rc.Status.Migration = size, migration
			g.Expect(c.Status().Update(bg, rc)).To(Succeed())
		}).Should(Succeed())
	}
	// The last scale moved 8192 slots a minute: growing 3 -> 5 moves 2/5
	// of the 16384 slots, 48 s, 72 s with the margin, 132 s with the
	// pods' start, 140 s rounded up.
	setRedisStatus(3, &cachev1.MigrationStatus{Slots: 8192, Keys: 500000, Duration: metav1.Duration{Duration: time.Minute}, KeysPerSecond: 8333, SlotsPerMinute: 8192, MeasuredAt: metav1.Now()})

	tds := builders.TDSet(ns, "shards-hours").Windows(builders.Window("09:00", "17:00", 5)).DefaultReplicas(3).
		ScaleTarget("cache.example.com/v1", "RedisCluster", "shards").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	lead := 140 * time.Second
	g.Eventually(func(g Gomega) {
		st := fetch(g, c, tds).Status
		g.Expect(st.Target).NotTo(BeNil())
		g.Expect(st.Target.EstimatedLeadTime).To(Equal(&metav1.Duration{Duration: lead}))
		g.Expect(st.NextTransitionTime).To(beAt(time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC).Add(-lead)))
		g.Expect(st.NextReplicas).To(HaveValue(Equal(int32(5))))
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue(), "%v", conditions.Get(tds, conditions.Ready))
		g.Expect(st.Target.AvailableSince).To(beAt(time.Date(2026, 3, 10, 6, 0, 0, 0, time.UTC)))
	}).Should(Succeed())

	// 100 s before the window: the cluster grows.
	clk.SetTime(time.Date(2026, 3, 10, 8, 58, 20, 0, time.UTC))
	poke(g, c, tds, "2h")
	g.Eventually(func(g Gomega) int32 {
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		return rc.Spec.Size
	}).Should(Equal(int32(5)))
	g.Eventually(func(g Gomega) {
		st := fetch(g, c, tds).Status
		g.Expect(st.ActiveRule).To(Equal("window every day 09:00-17:00 (early by scaleUpLeadTime)"))
		g.Expect(st.Target.AvailableSince).To(BeNil(), "the new masters serve no slot yet")
		g.Expect(conditions.Get(tds, conditions.Ready).Reason).To(Equal(schedulev2.ReasonTargetProgressing))
	}).Should(Succeed())

	// The cluster's new masters serve their slots 40 s later.
	clk.SetTime(time.Date(2026, 3, 10, 8, 59, 0, 0, time.UTC))
	setRedisStatus(5, rc.Status.Migration)
	g.Eventually(func(g Gomega) {
		st := fetch(g, c, tds).Status
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue(), "%v", conditions.Get(tds, conditions.Ready))
		g.Expect(st.Target.AvailableSince).To(beAt(time.Date(2026, 3, 10, 8, 59, 0, 0, time.UTC)))
	}).Should(Succeed())

	// Without a measured rate, the spec's lead time (none) holds.
	setRedisStatus(5, nil)
	poke(g, c, tds, "3h")
	g.Eventually(func(g Gomega) {
		g.Expect(fetch(g, c, tds).Status.Target.EstimatedLeadTime).To(BeNil())
	}).Should(Succeed())
}

// beAt matches a *metav1.Time at the instant t, in any location.
func beAt(t time.Time) OmegaMatcher {
	return And(Not(BeNil()), HaveField("Time", BeTemporally("==", t)))
}
