package redistest

import (
	"context"
	"errors"
	"fmt"

	"github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// NumKeys is how many keys WriteKeys writes and ExpectKeys reads back.
const NumKeys = 10000

// keyBatch is how many commands one pipeline carries.
const keyBatch = 500

// WriteKeys writes NumKeys keys, key:<i> = value-<i>, through a cluster client.
func WriteKeys(g gomega.Gomega, c *redis.ClusterClient) {
	ctx := context.Background()
	for start := 0; start < NumKeys; start += keyBatch {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < start+keyBatch; i++ {
				p.Set(ctx, fmt.Sprintf("key:%d", i), fmt.Sprintf("value-%d", i), 0)
			}
			return nil
		})
		g.Expect(err).NotTo(gomega.HaveOccurred())
	}
}

// ExpectKeys reads every key WriteKeys wrote, after reloading the client's
// view of the slots, and expects each to hold its value: no key lost.
func ExpectKeys(g gomega.Gomega, c *redis.ClusterClient) {
	ctx := context.Background()
	c.ReloadState(ctx)
	missing := 0
	for start := 0; start < NumKeys; start += keyBatch {
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < start+keyBatch; i++ {
				p.Get(ctx, fmt.Sprintf("key:%d", i))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			g.Expect(err).NotTo(gomega.HaveOccurred())
		}
		for i, cmd := range cmds {
			if v, err := cmd.(*redis.StringCmd).Result(); err != nil || v != fmt.Sprintf("value-%d", start+i) {
				missing++
			}
		}
	}
	g.Expect(missing).To(gomega.BeZero(), "keys lost or wrong")
}
