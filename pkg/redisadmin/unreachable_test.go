package redisadmin

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
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

func TestOnlyLoadingNeedsEveryUnusableNodeLoading(t *testing.T) {
	refused := errors.New("dial tcp 10.0.0.1:6379: connect: connection refused")
	loading := fmt.Errorf("CLUSTER INFO on node-1: %w", replyLike(redis.ErrNoScript, "LOADING Redis is loading the dataset in memory"))
	for _, tc := range []struct {
		name string
		errs map[string]error
		want bool
	}{
		{name: "none", errs: nil, want: false},
		{name: "one loading", errs: map[string]error{"node-1": loading}, want: true},
		{name: "two loading", errs: map[string]error{"node-1": loading, "node-2": loading}, want: true},
		{name: "one refused", errs: map[string]error{"node-1": refused}, want: false},
		{name: "loading and refused", errs: map[string]error{"node-1": loading, "node-2": refused}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			u := &UnreachableError{}
			for n, err := range tc.errs {
				u.add(n, err)
			}
			g.Expect(u.OnlyLoading()).To(Equal(tc.want))
			g.Expect(u.Nodes).To(HaveLen(len(tc.errs)), "every node is listed, loading or not")
		})
	}
}

// replyLike makes an error reply of the same type as example, which
// go-redis parses replies into and does not export.
func replyLike[T ~string](_ T, text string) T { return T(text) }
