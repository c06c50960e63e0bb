package redisbackup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
)

// cluster is three real masters with keys, some with a time to live.
type cluster struct {
	keys   backuptest.Keys
	shards []redisbackup.Shard
}

// startCluster starts three masters, writes keys and returns the shards
// as the cluster serves them.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	g := NewWithT(t)
	c := backuptest.Start(t, 3)
	keys := backuptest.Keys{N: 3000, TTLs: 1000, TTL: time.Hour}
	keys.Write(g, c.Client)
	return &cluster{keys: keys, shards: c.Shards(g)}
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
	g.Expect(m.Keys()).To(Equal(int64(c.keys.N)))
	var expiring int64
	for i, s := range m.Shards {
		g.Expect(s.Slots).To(Equal(c.shards[i].Slots))
		g.Expect(s.Source).To(Equal(c.shards[i].Nodes[0]))
		g.Expect(s.Keys).To(BeNumerically(">", 0), "keys spread over the shards")
		g.Expect(s.ReplID).To(HaveLen(40))
		expiring += s.Expiring

		// The file is what the manifest says, and a valid RDB file.
		f, err := dest.Open(context.Background(), s.File.Name)
		g.Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(f)
		g.Expect(err).NotTo(HaveOccurred())
		_ = f.Close()
		sum := sha256.Sum256(body)
		g.Expect(s.File.SHA256).To(Equal(hex.EncodeToString(sum[:])))
		g.Expect(s.File.Size).To(Equal(int64(len(body))))
		g.Expect(countParsed(g, body)).To(Equal(s.Keys))
	}
	g.Expect(expiring).To(Equal(int64(c.keys.TTLs)))

	f, err := dest.Open(context.Background(), "ns/cache/b1/"+redisbackup.ManifestName)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	var stored redisbackup.Manifest
	g.Expect(json.NewDecoder(f).Decode(&stored)).To(Succeed())
	g.Expect(stored.Version).To(Equal(redisbackup.ManifestVersion))
	g.Expect(stored.Keys()).To(Equal(int64(c.keys.N)))
}

// countParsed parses a whole RDB file and counts its keys.
func countParsed(g Gomega, body []byte) int64 {
	var n int64
	g.Expect(rdb.NewParser(bytes.NewReader(body), rdb.Options{}).Each(func(e rdb.Entry) error {
		if _, ok := e.(*rdb.Key); ok {
			n++
		}
		return nil
	})).To(Succeed())
	return n
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
	g.Expect(m.Keys()).To(Equal(int64(c.keys.N)))
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
		kind  error
	}{
		{name: "no reachable node", spoil: func(s []redisbackup.Shard) { s[2].Nodes = []string{redistest.RefusedAddr(t)} }, err: "shard 2: from ", kind: redisbackup.ErrSnapshot},
		{name: "keys of other slots", spoil: func(s []redisbackup.Shard) { s[0].Slots = s[1].Slots }, err: "the cluster changed meanwhile", kind: redisbackup.ErrClusterChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			shards := append([]redisbackup.Shard(nil), c.shards...)
			tc.spoil(shards)
			root := t.TempDir()
			_, err := redisbackup.Run(context.Background(), redisbackup.Dir{Root: root}, "ns/cache/b1", shards, redisbackup.Options{})
			g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
			g.Expect(err).To(MatchError(tc.kind))
			g.Expect(filesUnder(g, root)).To(BeEmpty(), "a failed backup leaves no file")
		})
	}
}

// spoilingDir is a store that keeps something other than what it was sent
// for the files spoil picks: each is changed on disk once written.
type spoilingDir struct {
	redisbackup.Dir
	spoil func(name string, f *os.File) error
}

func (d spoilingDir) Put(ctx context.Context, name string, r io.Reader) (redisbackup.Stored, error) {
	st, err := d.Dir.Put(ctx, name, r)
	if err != nil {
		return st, err
	}
	f, err := os.OpenFile(filepath.Join(d.Root, name), os.O_RDWR, 0)
	if err != nil {
		return st, err
	}
	defer func() { _ = f.Close() }()
	return st, d.spoil(name, f)
}

// A backup reads each file back once stored: a store that kept other
// bytes, or fewer, or more, fails the backup (ErrStore), which leaves no
// file, rather than a Complete backup that no restore could read.
func TestBackupReadsBackWhatItStored(t *testing.T) {
	redistest.Require(t)
	c := startCluster(t)
	flip := func(f *os.File) error {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, 20); err != nil {
			return err
		}
		_, err := f.WriteAt([]byte{b[0] ^ 0xff}, 20)
		return err
	}
	for _, tc := range []struct {
		name  string
		spoil func(name string, f *os.File) error
	}{
		{"a byte changed", func(name string, f *os.File) error {
			if filepath.Base(name) == "shard-001.rdb" {
				return flip(f)
			}
			return nil
		}},
		{"cut short", func(name string, f *os.File) error {
			if filepath.Base(name) == "shard-002.rdb" {
				return f.Truncate(100)
			}
			return nil
		}},
		{"bytes appended", func(name string, f *os.File) error {
			if filepath.Base(name) == "shard-000.rdb" {
				_, err := f.WriteAt([]byte("more"), 1<<20)
				return err
			}
			return nil
		}},
		{"the manifest changed", func(name string, f *os.File) error {
			if filepath.Base(name) == redisbackup.ManifestName {
				return flip(f)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			root := t.TempDir()
			_, err := redisbackup.Run(context.Background(), spoilingDir{Dir: redisbackup.Dir{Root: root}, spoil: tc.spoil}, "ns/cache/b1", c.shards, redisbackup.Options{})
			g.Expect(err).To(MatchError(redisbackup.ErrStore))
			g.Expect(err).To(MatchError(ContainSubstring("read back, it holds")))
			g.Expect(filesUnder(g, root)).To(BeEmpty(), "a failed backup leaves no file")
		})
	}
}

// filesUnder lists the files below root.
func filesUnder(g Gomega, root string) []string {
	var files []string
	g.Expect(filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, p)
		}
		return err
	})).To(Succeed())
	return files
}
