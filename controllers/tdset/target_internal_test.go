package tdset

import (
	"testing"

	. "github.com/onsi/gomega"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
)

// The original count recorded and restored stays within the bound of
// status.target.originalReplicas.
func TestBoundReplicas(t *testing.T) {
	g := NewWithT(t)
	for n, want := range map[int32]int32{-3: 0, 0: 0, 7: 7, schedulev2.MaxReplicas: schedulev2.MaxReplicas, schedulev2.MaxReplicas + 1: schedulev2.MaxReplicas, 1 << 30: schedulev2.MaxReplicas} {
		g.Expect(boundReplicas(n)).To(Equal(want), "%d", n)
	}
}
