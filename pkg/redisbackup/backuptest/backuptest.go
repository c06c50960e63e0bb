// Package backuptest starts real Redis Clusters with keys for the tests of
// backups and restores: it is used by tests only.
package backuptest

import (
	"context"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
)

// Cluster is a Redis Cluster of redis-server processes on loopback.
type Cluster struct {
	// Client reaches it, following redirects.
	Client *redis.ClusterClient
	// Servers are its masters.
	Servers []*redistest.Server
	// access is what the nodes enforce besides the servers' own password:
	// the service users added.
	access redisadmin.Access
}

// Start starts masters empty masters as one cluster, built by
// redisadmin as the operator builds one.
func Start(t testing.TB, masters int) *Cluster {
	t.Helper()
	return StartWith(t, masters, redistest.Options{})
}

// StartWith is Start with the servers' options, such as a password and
// TLS, which the admin and the client use too.
func StartWith(t testing.TB, masters int, opts redistest.Options) *Cluster {
	t.Helper()
	g := gomega.NewWithT(t)
	servers := make([]*redistest.Server, masters)
	for i := range servers {
		servers[i] = redistest.StartWith(t, "127.0.0.1", 0, opts)
	}
	adminOpts := redisadmin.Options{Password: opts.Password}
	if opts.TLS != nil {
		adminOpts.TLSRootCAs = x509.NewCertPool()
		adminOpts.TLSRootCAs.AppendCertsFromPEM(opts.TLS.CA)
	}
	byName := map[string]string{}
	topo := redisadmin.Topology{}
	for i, s := range servers {
		name := fmt.Sprintf("node-%d", i)
		byName[name] = s.Addr()
		topo.Shards = append(topo.Shards, []string{name})
	}
	admin := redisadmin.New(func(_ context.Context, n string) (string, error) { return byName[n], nil }, adminOpts)
	g.Eventually(func(g gomega.Gomega) {
		res, err := admin.Reconcile(context.Background(), topo)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(res.Done).To(gomega.BeTrue())
	}, time.Minute, 100*time.Millisecond).Should(gomega.Succeed())
	return &Cluster{Client: redistest.ClusterClient(t, servers...), Servers: servers}
}

// AddBackupUser gives every node the backup user (redisadmin.BackupUser)
// with password, as the operator does.
func (c *Cluster) AddBackupUser(g gomega.Gomega, password string) {
	c.access.BackupPassword = password
	c.reconcileAccess(g)
}

// AddRestoreUser gives every node the restore user
// (redisadmin.RestoreUser) with password, as the operator does while a
// cluster restores.
func (c *Cluster) AddRestoreUser(g gomega.Gomega, password string) {
	c.access.RestorePassword = password
	c.reconcileAccess(g)
}

// reconcileAccess makes every node enforce c.access, logged in as the
// default user with the servers' password, which it keeps.
func (c *Cluster) reconcileAccess(g gomega.Gomega) {
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Addr())
	}
	access := c.access
	password := c.Servers[0].Options.Password
	if password != "" {
		access.Passwords = []string{password}
	}
	admin := redisadmin.New(func(_ context.Context, addr string) (string, error) { return addr, nil }, redisadmin.Options{Password: password})
	res, err := admin.ReconcileAccess(context.Background(), names, access)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.Done()).To(gomega.BeTrue())
}

// Shards are the cluster's shards as a backup takes them: each master's
// slots, from CLUSTER SHARDS, in the order of Servers.
func (c *Cluster) Shards(g gomega.Gomega) []redisbackup.Shard {
	shards, err := c.Servers[0].Client().ClusterShards(context.Background()).Result()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	byMaster := map[string]*redisbackup.Shard{}
	for _, sh := range shards {
		for _, n := range sh.Nodes {
			if n.Role != "master" || len(sh.Slots) == 0 {
				continue
			}
			addr := net.JoinHostPort(n.IP, strconv.Itoa(int(n.Port)))
			shard := &redisbackup.Shard{Nodes: []string{addr}}
			for _, r := range sh.Slots {
				shard.Slots = append(shard.Slots, redisadmin.SlotRange{From: int(r.Start), To: int(r.End)})
			}
			byMaster[addr] = shard
		}
	}
	var out []redisbackup.Shard
	for _, s := range c.Servers {
		g.Expect(byMaster).To(gomega.HaveKey(s.Addr()))
		out = append(out, *byMaster[s.Addr()])
	}
	return out
}

// Keys is a set of keys k:<i> with values v<i>, the first TTLs of which
// expire in TTL.
type Keys struct {
	// N is how many keys; TTLs how many of the first expire.
	N, TTLs int
	// TTL is their time to live.
	TTL time.Duration
	// ValueBytes pads each value to this length with bytes that do not
	// compress, as a cache's values seldom do; values are short when 0.
	ValueBytes int
}

// value is key i's value: "v<i>", padded to ValueBytes with bytes drawn
// from a generator seeded with i, so that Expect can tell them again.
func (k Keys) value(i int) string {
	v := fmt.Sprintf("v%d", i)
	if len(v) >= k.ValueBytes {
		return v
	}
	b := make([]byte, k.ValueBytes)
	copy(b, v)
	rnd := rand.New(rand.NewPCG(uint64(i), 0))
	for j := len(v); j < len(b); j++ {
		b[j] = byte(' ' + rnd.IntN(95))
	}
	return string(b)
}

// Write writes the keys through c.
func (k Keys) Write(g gomega.Gomega, c *redis.ClusterClient) {
	ctx := context.Background()
	for start := 0; start < k.N; start += 500 {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < min(start+500, k.N); i++ {
				p.Set(ctx, fmt.Sprintf("k:%d", i), k.value(i), k.ttl(i))
			}
			return nil
		})
		g.Expect(err).NotTo(gomega.HaveOccurred())
	}
}

func (k Keys) ttl(i int) time.Duration {
	if i < k.TTLs {
		return k.TTL
	}
	return 0
}

// Expect reads every key through c: its value, and a time to live that
// is left of TTL (and none where none was set).
func (k Keys) Expect(g gomega.Gomega, c *redis.ClusterClient) {
	ctx := context.Background()
	for start := 0; start < k.N; start += 500 {
		gets := map[int]*redis.StringCmd{}
		ttls := map[int]*redis.DurationCmd{}
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < min(start+500, k.N); i++ {
				gets[i] = p.Get(ctx, fmt.Sprintf("k:%d", i))
				ttls[i] = p.PTTL(ctx, fmt.Sprintf("k:%d", i))
			}
			return nil
		})
		g.Expect(err).NotTo(gomega.HaveOccurred())
		for i, get := range gets {
			g.Expect(get.Val()).To(gomega.Equal(k.value(i)), "key k:%d", i)
			if k.ttl(i) > 0 {
				g.Expect(ttls[i].Val()).To(gomega.And(gomega.BeNumerically(">", 0), gomega.BeNumerically("<=", k.TTL)), "TTL of k:%d", i)
			} else {
				g.Expect(ttls[i].Val()).To(gomega.Equal(time.Duration(-1)), "k:%d has no TTL", i)
			}
		}
	}
}
