package redistest

import (
	"context"

	"github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// NumKeys is how many keys WriteKeys writes and ExpectKeys reads back.
const NumKeys = 10000

// testKeys are the keys WriteKeys writes: key:<i>.
var testKeys = Keyspace{Prefix: "key", N: NumKeys}

// WriteKeys writes NumKeys keys, key:<i>, through a cluster client.
func WriteKeys(g gomega.Gomega, c *redis.ClusterClient) {
	g.Expect(testKeys.Fill(context.Background(), c)).To(gomega.Succeed())
}

// ExpectKeys reads every key WriteKeys wrote, after reloading the client's
// view of the slots, and expects each to hold its value: no key lost.
func ExpectKeys(g gomega.Gomega, c *redis.ClusterClient) {
	ctx := context.Background()
	c.ReloadState(ctx)
	bad, count, err := testKeys.Sweep(ctx, c, 10)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(count).To(gomega.BeZero(), "keys lost or wrong, among them %v", bad)
}
