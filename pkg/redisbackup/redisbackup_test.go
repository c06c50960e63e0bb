package redisbackup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
)

// cluster is three real masters with keys, some with a time to live.
type cluster struct {
	client *redis.ClusterClient
	shards []redisbackup.Shard
	keys   int
	ttls   int
}

// startCluster starts three masters, writes keys and returns the shards
// as the cluster serves them.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	g := NewWithT(t)
	servers := redistest.Start(t, 3)
	byName := map[string]string{}
	topo := redisadmin.Topology{}
	for i, s := range servers {
		name := fmt.Sprintf("node-%d", i)
		byName[name] = s.Addr()
		topo.Shards = append(topo.Shards, []string{name})
	}
	admin := redisadmin.New(func(_ context.Context, n string) (string, error) { return byName[n], nil }, redisadmin.Options{})
	g.Eventually(func(g Gomega) {
		res, err := admin.Reconcile(context.Background(), topo)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Done).To(BeTrue())
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	c := &cluster{client: redistest.ClusterClient(t, servers...), keys: 3000, ttls: 1000}
	ctx := context.Background()
	for i := range c.keys {
		ttl := time.Duration(0)
		if i < c.ttls {
			ttl = time.Hour
		}
		g.Eventually(func() error { return c.client.Set(ctx, fmt.Sprintf("k:%d", i), fmt.Sprintf("v%d", i), ttl).Err() }).Should(Succeed())
	}
	shards, err := servers[0].Client().ClusterShards(ctx).Result()
	g.Expect(err).NotTo(HaveOccurred())
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
	for _, s := range servers {
		g.Expect(byMaster).To(HaveKey(s.Addr()))
		c.shards = append(c.shards, *byMaster[s.Addr()])
	}
	return c
}

// Every shard's file is stored with its checksum and key counts, and the
// manifest, written last, lists them: together they hold every key and
// every time to live.
func TestBackupStoresEveryShard(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	c := startCluster(t)
	dest := redisbackup.Dir{Root: t.TempDir()}

	m, err := redisbackup.Run(context.Background(), dest, "ns/cache/b1", c.shards, redisbackup.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Shards).To(HaveLen(3))
	g.Expect(m.Keys()).To(Equal(int64(c.keys)))
	var expiring int64
	for i, s := range m.Shards {
		g.Expect(s.Slots).To(Equal(c.shards[i].Slots))
		g.Expect(s.Source).To(Equal(c.shards[i].Nodes[0]))
		g.Expect(s.Keys).To(BeNumerically(">", 0), "keys spread over the shards")
		g.Expect(s.ReplID).To(HaveLen(40))
		expiring += s.Expiring

		// The file is what the manifest says, and a valid RDB file.
		f, err := dest.Open(s.File.Name)
		g.Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(f)
		g.Expect(err).NotTo(HaveOccurred())
		_ = f.Close()
		sum := sha256.Sum256(body)
		g.Expect(s.File.SHA256).To(Equal(hex.EncodeToString(sum[:])))
		g.Expect(s.File.Size).To(Equal(int64(len(body))))
		g.Expect(countParsed(g, body)).To(Equal(s.Keys))
	}
	g.Expect(expiring).To(Equal(int64(c.ttls)))

	f, err := dest.Open("ns/cache/b1/" + redisbackup.ManifestName)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	var stored redisbackup.Manifest
	g.Expect(json.NewDecoder(f).Decode(&stored)).To(Succeed())
	g.Expect(stored.Version).To(Equal(redisbackup.ManifestVersion))
	g.Expect(stored.Keys()).To(Equal(int64(c.keys)))
}

// countParsed parses a whole RDB file and counts its keys.
func countParsed(g Gomega, body []byte) int64 {
	p := rdb.NewParser(bytes.NewReader(body), rdb.Options{})
	var n int64
	for {
		e, err := p.Next()
		if err == io.EOF {
			return n
		}
		g.Expect(err).NotTo(HaveOccurred())
		if _, ok := e.(*rdb.Key); ok {
			n++
		}
	}
}

// A shard whose preferred node cannot be reached is taken from the next.
func TestBackupFallsBackToTheNextNode(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	c := startCluster(t)
	c.shards[1].Nodes = append([]string{redistest.RefusedAddr(t)}, c.shards[1].Nodes...)
	m, err := redisbackup.Run(context.Background(), redisbackup.Dir{Root: t.TempDir()}, "b", c.shards, redisbackup.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Shards[1].Source).To(Equal(c.shards[1].Nodes[1]))
	g.Expect(m.Keys()).To(Equal(int64(c.keys)))
}

// A backup that fails leaves nothing behind and says why: a shard without
// a reachable node, or a snapshot holding keys of slots the shard did not
// serve (the cluster changed while the backup ran).
func TestFailedBackupRemovesItsFiles(t *testing.T) {
	redistest.Require(t)
	c := startCluster(t)
	for _, tc := range []struct {
		name  string
		spoil func(shards []redisbackup.Shard)
		err   string
	}{
		{name: "no reachable node", spoil: func(s []redisbackup.Shard) { s[2].Nodes = []string{redistest.RefusedAddr(t)} }, err: "shard 2: from "},
		{name: "keys of other slots", spoil: func(s []redisbackup.Shard) { s[0].Slots = s[1].Slots }, err: "the cluster changed meanwhile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			shards := append([]redisbackup.Shard(nil), c.shards...)
			tc.spoil(shards)
			root := t.TempDir()
			_, err := redisbackup.Run(context.Background(), redisbackup.Dir{Root: root}, "ns/cache/b1", shards, redisbackup.Options{})
			g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
			var left []string
			g.Expect(filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					left = append(left, p)
				}
				return err
			})).To(Succeed())
			g.Expect(left).To(BeEmpty(), "a failed backup leaves no file")
		})
	}
}
