package tdset

import (
	"math"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// redisClusterWithRate is a cached RedisCluster target whose last
// migration moved slotsPerMinute (absent when nil).
func redisClusterWithRate(slotsPerMinute any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion("cache.example.com/v1")
	u.SetKind("RedisCluster")
	u.SetName("shards")
	if slotsPerMinute != nil {
		u.Object["status"] = map[string]any{"migration": map[string]any{"slotsPerMinute": slotsPerMinute}}
	}
	return u
}

func TestMigrationLeadTime(t *testing.T) {
	deployment := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"migration": map[string]any{"slotsPerMinute": int64(100)}}}}
	deployment.SetAPIVersion("apps/v1")
	deployment.SetKind("Deployment")
	for _, tc := range []struct {
		name            string
		target          *unstructured.Unstructured
		lowest, highest int32
		want            time.Duration
		ok              bool
	}{
		{name: "no target", lowest: 3, highest: 5},
		{name: "not a RedisCluster", target: deployment, lowest: 3, highest: 5},
		{name: "never measured", target: redisClusterWithRate(nil), lowest: 3, highest: 5},
		{name: "a rate that is not a number", target: redisClusterWithRate("fast"), lowest: 3, highest: 5},
		{name: "a rate of zero", target: redisClusterWithRate(int64(0)), lowest: 3, highest: 5},
		{name: "a rate that is not finite", target: redisClusterWithRate(math.Inf(1)), lowest: 3, highest: 5},
		{name: "the calendar never grows it", target: redisClusterWithRate(int64(6000)), lowest: 3, highest: 3},
		// 3 -> 5 moves 2/5 of 16384 slots, 6553.6 at 6553.6 a minute: one
		// minute, 1.5 with the margin, 2.5 with the pods' start.
		{name: "3 to 5", target: redisClusterWithRate(6553.6), lowest: 3, highest: 5, want: 150 * time.Second, ok: true},
		// 1 -> 2 moves 8192 slots at 16384 a minute: 30 s, 45 s with the
		// margin, 105 s with the start, rounded up to 110 s.
		{name: "rounded up to 10 s", target: redisClusterWithRate(int64(16384)), lowest: 1, highest: 2, want: 110 * time.Second, ok: true},
		{name: "from zero every slot moves", target: redisClusterWithRate(int64(16384)), lowest: 0, highest: 3, want: 150 * time.Second, ok: true},
		{name: "capped at a day", target: redisClusterWithRate(0.001), lowest: 3, highest: 100, want: 24 * time.Hour, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, ok := migrationLeadTime(tc.target, tc.lowest, tc.highest)
			g.Expect(ok).To(Equal(tc.ok))
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
