package redisadmin

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestUnreachableErrorNamesAtMostMaxListedNodes(t *testing.T) {
	nodes := func(n int) map[string]string {
		out := map[string]string{}
		for i := range n {
			out[fmt.Sprintf("redis-%03d", i)] = "dial tcp: i/o timeout"
		}
		return out
	}
	for _, tc := range []struct {
		nodes     int
		wantNamed int
		wantTail  string
	}{
		{nodes: 1, wantNamed: 1},
		{nodes: MaxListedNodes, wantNamed: MaxListedNodes},
		{nodes: MaxListedNodes + 1, wantNamed: MaxListedNodes, wantTail: "; and 1 more"},
		{nodes: 500, wantNamed: MaxListedNodes, wantTail: "; and 490 more"},
	} {
		t.Run(fmt.Sprint(tc.nodes), func(t *testing.T) {
			g := NewWithT(t)
			err := &UnreachableError{Nodes: nodes(tc.nodes)}
			list := err.List()
			g.Expect(strings.Count(list, "i/o timeout")).To(Equal(tc.wantNamed))
			g.Expect(list).To(HavePrefix("redis-000: dial tcp: i/o timeout"))
			if tc.wantTail != "" {
				g.Expect(list).To(HaveSuffix(fmt.Sprintf("redis-%03d: dial tcp: i/o timeout", MaxListedNodes-1) + tc.wantTail))
			} else {
				g.Expect(list).NotTo(ContainSubstring("more"))
			}
			g.Expect(err.Error()).To(Equal("unreachable nodes: " + list))
		})
	}
}
