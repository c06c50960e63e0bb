package manager_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// TestDefaultClientLimitFollowsPriorityAndFairness asks real API servers:
// one with Priority and Fairness (the default), one without, and none.
func TestDefaultClientLimitFollowsPriorityAndFairness(t *testing.T) {
	ctx := context.Background()
	t.Run("with Priority and Fairness", func(t *testing.T) {
		g := NewWithT(t)
		limit, err := manager.DefaultClientLimit(ctx, testenv.Get(t).Config)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(limit).To(Equal(manager.ClientLimit{Reason: manager.LimitReasonPriorityAndFairness}))
	})
	t.Run("without Priority and Fairness", func(t *testing.T) {
		g := NewWithT(t)
		cfg := testenv.StartControlPlane(t, map[string]string{"enable-priority-and-fairness": "false"})
		limit, err := manager.DefaultClientLimit(ctx, cfg)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(limit).To(Equal(manager.ClientLimit{QPS: manager.FallbackKubeAPIQPS, Burst: manager.FallbackKubeAPIBurst, Reason: manager.LimitReasonNoPriorityAndFairness}))
	})
	t.Run("no answer", func(t *testing.T) {
		g := NewWithT(t)
		limit, err := manager.DefaultClientLimit(ctx, &rest.Config{Host: "https://127.0.0.1:1"})
		g.Expect(err).To(MatchError(ContainSubstring("asking the API server for Priority and Fairness")))
		g.Expect(limit.QPS).To(BeNumerically("==", manager.FallbackKubeAPIQPS), "the safe side")
		g.Expect(limit.Reason).To(Equal(manager.LimitReasonPriorityAndFairnessError))
	})
}
