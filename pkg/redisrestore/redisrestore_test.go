package redisrestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/pkg/redisrestore"
)

// backup backs up a cluster of three masters with keys (a third of them
// expiring) into a directory and returns it with its manifest.
func backup(t *testing.T, keys backuptest.Keys) (redisbackup.Dir, *redisbackup.Manifest) {
	t.Helper()
	g := NewWithT(t)
	c := backuptest.Start(t, 3)
	keys.Write(g, c.Client)
	dest := redisbackup.Dir{Root: t.TempDir()}
	m, err := redisbackup.Run(context.Background(), dest, "b", c.Shards(g), redisbackup.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	return dest, m
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
			res, err := redisrestore.Run(context.Background(), target.Client, src, m, redisrestore.Options{BatchKeys: 300})
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
