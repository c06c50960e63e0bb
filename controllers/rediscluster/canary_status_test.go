package rediscluster_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	k8sevents "k8s.io/client-go/tools/events"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/rediscanary"
)

// The condition is False until a loss, then True with a Warning event per
// new count, and stays True when a restarted manager counts from zero; the
// rollout's counts never go down while the step's follow the canary.
func TestRecordCanary(t *testing.T) {
	g := NewWithT(t)
	fake := k8sevents.NewFakeRecorder(10)
	rec := events.NewRecorder(fake)
	rc := &cachev1.RedisCluster{}
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	record := func(s rediscanary.Snapshot) {
		s.Since = since
		rediscluster.RecordCanary(rc, s, rec)
	}
	record(rediscanary.Snapshot{})
	g.Expect(conditions.Get(rc, cachev1.ConditionWritesLost).Reason).To(Equal(cachev1.ReasonNoWritesLost))
	g.Expect(conditions.IsTrue(rc, cachev1.ConditionWritesLost)).To(BeFalse())
	g.Expect(fake.Events).To(BeEmpty())

	rc.Status.Rollout = &cachev1.RolloutStatus{Revision: "r2"}
	loss := rediscanary.Snapshot{
		Total: rediscanary.Totals{WritesLost: 3, OutageSeconds: 7.6}, Rollout: rediscanary.Totals{WritesLost: 3, OutageSeconds: 7.6},
		Step: rediscanary.Totals{WritesLost: 2, OutageSeconds: 1.2}, LastLoss: since.Add(time.Minute), LastLossShard: 1,
	}
	record(loss)
	cond := conditions.Get(rc, cachev1.ConditionWritesLost)
	g.Expect(cond.Status).To(BeEquivalentTo("True"))
	g.Expect(cond.Message).To(Equal("the write canary found 3 acknowledged writes lost since 2026-01-02T03:04:05Z, the latest on shard 1 at 2026-01-02T03:05:05Z"))
	g.Expect(rc.Status.Rollout.Canary).To(Equal(&cachev1.RolloutCanary{WritesLost: 3, WriteOutageSeconds: 7, StepWritesLost: 2, StepWriteOutageSeconds: 1}))
	g.Expect(fake.Events).To(Receive(ContainSubstring("Warning AcknowledgedWritesLost")))
	record(loss)
	g.Expect(fake.Events).NotTo(Receive(), "the same count again: no new event")

	// A restarted manager: counts from zero.
	record(rediscanary.Snapshot{Step: rediscanary.Totals{OutageSeconds: 2}})
	g.Expect(conditions.IsTrue(rc, cachev1.ConditionWritesLost)).To(BeTrue())
	g.Expect(rc.Status.Rollout.Canary).To(Equal(&cachev1.RolloutCanary{WritesLost: 3, WriteOutageSeconds: 7, StepWriteOutageSeconds: 2}))
	g.Expect(fake.Events).NotTo(Receive())
}
