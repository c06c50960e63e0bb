package redisrestore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/filecrypt"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/pkg/redisrestore"
)

// backup backs up a cluster of three masters with keys (a third of them
// expiring) into a directory and returns it with its manifest.
func backup(t *testing.T, keys backuptest.Keys) (redisbackup.Dir, *redisbackup.Manifest) {
	t.Helper()
	return backupWith(t, keys, redisbackup.Options{})
}

// backupWith is backup with the backup's options.
func backupWith(t *testing.T, keys backuptest.Keys, opts redisbackup.Options) (redisbackup.Dir, *redisbackup.Manifest) {
	t.Helper()
	g := NewWithT(t)
	c := backuptest.Start(t, 3)
	keys.Write(g, c.Client)
	dest := redisbackup.Dir{Root: t.TempDir()}
	m, err := redisbackup.Run(context.Background(), dest, "b", c.Shards(g), opts)
	g.Expect(err).NotTo(HaveOccurred())
	return dest, m
}

// An encrypted backup's files hold no key or value in the clear, and
// restore only with the key: without it, or with another, the restore
// fails before it writes a key.
func TestEncryptedBackupRestoresWithItsKeyOnly(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	key := bytes.Repeat([]byte{7}, filecrypt.KeySize)
	keys := backuptest.Keys{N: 3000, TTLs: 1000, TTL: time.Hour}
	src, m := backupWith(t, keys, redisbackup.Options{EncryptionKey: key})
	g.Expect(m.Encryption).To(Equal(filecrypt.Scheme))
	g.Expect(m.Keys()).To(Equal(int64(keys.N)))
	for _, sh := range m.Shards {
		f, err := os.ReadFile(filepath.Join(src.Root, sh.File.Name))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(int64(len(f))).To(Equal(sh.File.Size))
		g.Expect(string(f)).NotTo(ContainSubstring("REDIS"), "no RDB header in the clear")
		g.Expect(string(f)).NotTo(ContainSubstring("k:1"), "no key name in the clear")
	}

	target := backuptest.Start(t, 2)
	_, err := redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{})
	g.Expect(err).To(MatchError(redisrestore.ErrKeyNeeded))
	_, err = redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{DecryptionKey: bytes.Repeat([]byte{8}, filecrypt.KeySize)})
	g.Expect(err).To(MatchError(filecrypt.ErrAuth))
	n, err := target.Client.DBSize(context.Background()).Result()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(BeZero(), "a wrong key restores nothing: the first segment does not open")

	res, err := redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{DecryptionKey: key})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Keys).To(Equal(int64(keys.N)))
	keys.Expect(g, target.Client)
}

// A backup of three masters restores into a cluster of any size: every
// key lands on its slot's master now, with its value and what is left of
// its time to live.
func TestRestoreIntoAnySize(t *testing.T) {
	redistest.Require(t)
	keys := backuptest.Keys{N: 5000, TTLs: 2000, TTL: time.Hour}
	src, m := backup(t, keys)
	for _, masters := range []int{3, 5, 2} {
		t.Run("", func(t *testing.T) {
			g := NewWithT(t)
			target := backuptest.Start(t, masters)
			res, err := redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{BatchBytes: 4 << 10})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Keys).To(Equal(int64(keys.N)))
			g.Expect(res.Expired).To(BeZero())
			keys.Expect(g, target.Client)
			var total int64
			for _, s := range target.Servers {
				n, err := s.Client().DBSize(context.Background()).Result()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(n).To(BeNumerically(">", 0), "every master holds keys")
				total += n
			}
			g.Expect(total).To(Equal(int64(keys.N)))

			// Run again, as after a crash mid-restore: the same keys.
			_, err = redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{})
			g.Expect(err).NotTo(HaveOccurred())
			keys.Expect(g, target.Client)
		})
	}
}

// Keys that expired since the backup are left out, not restored as
// keys without a time to live.
func TestRestoreLeavesOutExpiredKeys(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	src, m := backup(t, backuptest.Keys{N: 1000, TTLs: 400, TTL: time.Hour})
	target := backuptest.Start(t, 2)
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	res, err := redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{Now: later})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Expired).To(Equal(int64(400)))
	g.Expect(res.Keys).To(Equal(int64(600)))
	g.Expect(target.Client.Exists(context.Background(), "k:0").Val()).To(BeZero())
	g.Expect(target.Client.Get(context.Background(), "k:999").Val()).To(Equal("v999"))
}

// A file that does not match its manifest fails the restore with the
// shard named.
func TestRestoreRefusesAFileThatDoesNotMatch(t *testing.T) {
	redistest.Require(t)
	for _, tc := range []struct {
		name  string
		spoil func(g Gomega, dir redisbackup.Dir, m *redisbackup.Manifest)
		err   string
	}{
		{name: "another key count", spoil: func(_ Gomega, _ redisbackup.Dir, m *redisbackup.Manifest) { m.Shards[1].Keys++ }, err: "shard 1 (b/shard-001.rdb): the file holds"},
		{name: "another checksum", spoil: func(_ Gomega, _ redisbackup.Dir, m *redisbackup.Manifest) { m.Shards[2].File.SHA256 = "00" }, err: "shard 2 (b/shard-002.rdb): the file's SHA-256 is"},
		{name: "a damaged file", spoil: func(g Gomega, d redisbackup.Dir, m *redisbackup.Manifest) {
			p := filepath.Join(d.Root, m.Shards[0].File.Name)
			body, err := os.ReadFile(p)
			g.Expect(err).NotTo(HaveOccurred())
			body[len(body)/2] ^= 0xff
			g.Expect(os.WriteFile(p, body, 0o600)).To(Succeed())
		}, err: "shard 0 (b/shard-000.rdb)"},
		{name: "a missing file", spoil: func(g Gomega, d redisbackup.Dir, m *redisbackup.Manifest) {
			g.Expect(os.Remove(filepath.Join(d.Root, m.Shards[0].File.Name))).To(Succeed())
		}, err: "no such file"},
		{name: "a manifest of another version", spoil: func(_ Gomega, _ redisbackup.Dir, m *redisbackup.Manifest) { m.Version = 99 }, err: "backup manifest version 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			src, m := backup(t, backuptest.Keys{N: 300})
			tc.spoil(g, src, m)
			target := backuptest.Start(t, 3)
			_, err := redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{})
			g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
		})
	}
}

// A master that refuses RESTOREs midway (here, full) fails the restore
// with its error and address, promptly, while the other masters took
// keys: the caller must not present the cluster as restored.
func TestRestoreStopsAtAMasterThatRefuses(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	keys := backuptest.Keys{N: 20000}
	src, m := backup(t, keys)
	target := backuptest.Start(t, 3)
	full := target.Servers[1].Client()
	info, err := full.InfoMap(ctx, "memory").Result()
	g.Expect(err).NotTo(HaveOccurred())
	usedMemory, err := strconv.Atoi(info["Memory"]["used_memory"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(full.ConfigSet(ctx, "maxmemory", strconv.Itoa(usedMemory+256<<10)).Err()).To(Succeed())

	start := time.Now()
	res, err := redisrestore.Run(ctx, target.Client, src, m, redisrestore.Options{BatchBytes: 4 << 10})
	g.Expect(err).To(MatchError(And(ContainSubstring("RESTORE on "+target.Servers[1].Addr()), ContainSubstring("OOM"))))
	g.Expect(time.Since(start)).To(BeNumerically("<", 30*time.Second))
	g.Expect(res.Keys).To(BeNumerically("<", keys.N))
	g.Expect(full.DBSize(ctx).Val()).To(BeNumerically(">", 0), "refused midway")
	g.Expect(target.Servers[0].Client().DBSize(ctx).Val()).To(BeNumerically(">", 0))
}

// A master that stops answering holds the restore no longer than its
// context: its end closes the connections.
func TestRestoreEndsWithItsContextWhenAMasterHangs(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	src, m := backup(t, backuptest.Keys{N: 20000})
	target := backuptest.Start(t, 3)
	// The client knows the layout before the master stops.
	g.Expect(target.Client.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
		return c.Ping(ctx).Err()
	})).To(Succeed())
	target.Servers[2].Pause(t)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := redisrestore.Run(ctx, target.Client, src, m, redisrestore.Options{})
	g.Expect(err).To(MatchError(context.DeadlineExceeded))
	g.Expect(time.Since(start)).To(BeNumerically("<", 3*time.Second), "the client's read timeout did not end it first")
}

// A slot that moved after the client read the layout is followed: its
// keys land on its master now.
func TestRestoreFollowsASlotThatMoved(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	ctx := context.Background()
	keys := backuptest.Keys{N: 3000, TTLs: 1000, TTL: time.Hour}
	src, m := backup(t, keys)
	target := backuptest.Start(t, 3)
	g.Expect(target.Client.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return c.Ping(ctx).Err()
	})).To(Succeed())

	// The first 500 slots of the first master go to the second, empty as
	// they are, on every node, the new owner first.
	from := target.Shards(g)[0].Slots[0].From
	to, err := target.Servers[1].Client().ClusterMyID(ctx).Result()
	g.Expect(err).NotTo(HaveOccurred())
	for _, s := range []*redistest.Server{target.Servers[1], target.Servers[0], target.Servers[2]} {
		for slot := from; slot < from+500; slot++ {
			g.Expect(s.Client().Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", to).Err()).To(Succeed())
		}
	}

	res, err := redisrestore.Run(ctx, target.Client, src, m, redisrestore.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Keys).To(Equal(int64(keys.N)))
	keys.Expect(g, target.Client)
	moved := 0
	for i := range keys.N {
		key := fmt.Sprintf("k:%d", i)
		if slot := redisadmin.KeySlot(key); slot >= from && slot < from+500 {
			moved++
			g.Expect(target.Servers[1].Client().Exists(ctx, key).Val()).To(Equal(int64(1)), key)
		}
	}
	g.Expect(moved).To(BeNumerically(">", 0))
}

// The masters' connections log in and speak TLS as the cluster client
// does; a wrong password fails the restore before any key is sent.
func TestRestoreOverTLSWithAPassword(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	keys := backuptest.Keys{N: 3000, TTLs: 1000, TTL: time.Hour}
	src, m := backup(t, keys)
	cert := redistest.NewCA(t).Issue(t)
	target := backuptest.StartWith(t, 3, redistest.Options{Password: "secret", Args: []string{"--requirepass", "secret"}, TLS: &cert})
	res, err := redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Keys).To(Equal(int64(keys.N)))
	keys.Expect(g, target.Client)

	wrong := redistest.ClusterClientWith(t, redis.ClusterOptions{Password: "wrong"}, target.Servers...)
	_, err = redisrestore.Run(context.Background(), wrong, src, m, redisrestore.Options{})
	g.Expect(err).To(MatchError(ContainSubstring("WRONGPASS")))
}
