package redisbackup_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/objectstore"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/pkg/redisrestore"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

// s3Store is the cluster's prefix on a real S3-compatible store.
func s3Store(t *testing.T, srv *s3server.Server) redisbackup.ObjectStore {
	t.Helper()
	s, err := objectstore.New(srv.StoreConfig("tenant-a/cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return redisbackup.ObjectStore{Store: s}
}

// A backup goes to object storage, file by file in parts, and comes back
// into a cluster of another size with every key and time to live; a
// failed backup removes its own objects and no other backup's, even one
// whose name starts with its own.
func TestBackupThroughObjectStorage(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	srv := s3server.Start(t, s3server.Options{})
	store := s3Store(t, srv)
	ctx := context.Background()

	c := backuptest.Start(t, 3)
	keys := backuptest.Keys{N: 4000, TTLs: 1500, TTL: time.Hour}
	keys.Write(g, c.Client)
	shards := c.Shards(g)
	m, err := redisbackup.Run(ctx, store, "b10", shards, redisbackup.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	objects, err := store.Store.List(ctx, "b10/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects).To(HaveLen(4), "three shards and the manifest")

	target := backuptest.Start(t, 5)
	res, err := redisrestore.Run(ctx, target.Client, store, m, redisrestore.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Keys).To(Equal(int64(keys.N)))
	keys.Expect(g, target.Client)

	// b1 fails: its objects go, b10's stay.
	shards[1].Nodes = []string{redistest.RefusedAddr(t)}
	_, err = redisbackup.Run(ctx, store, "b1", shards, redisbackup.Options{})
	g.Expect(err).To(MatchError(ContainSubstring("shard 1")))
	all, err := store.Store.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range all {
		g.Expect(strings.HasPrefix(o.Name, "b10/")).To(BeTrue(), "left behind: %s", o.Name)
	}
	g.Expect(all).To(HaveLen(4))
}

// spoilingStore is an object store that keeps something other than what
// it was sent for every shard's file, once stored.
type spoilingStore struct {
	redisbackup.ObjectStore
	spoil func(ctx context.Context, st redisbackup.Stored) error
}

func (s spoilingStore) Put(ctx context.Context, name string, r io.Reader) (redisbackup.Stored, error) {
	st, err := s.ObjectStore.Put(ctx, name, r)
	if err != nil || !strings.HasSuffix(name, ".rdb") {
		return st, err
	}
	return st, s.spoil(ctx, st)
}

// A backup into an object store reads each file back: an object whose
// bytes changed under the recorded SHA-256, or that was stored again with
// other bytes, fails the backup (ErrStore) and leaves no object.
func TestBackupReadsBackWhatTheObjectStoreKept(t *testing.T) {
	redistest.Require(t)
	srv := s3server.Start(t, s3server.Options{})
	store := s3Store(t, srv)
	raw := srv.Client(t)
	c := backuptest.Start(t, 3)
	backuptest.Keys{N: 2000, TTLs: 500, TTL: time.Hour}.Write(NewWithT(t), c.Client)
	shards := c.Shards(NewWithT(t))
	for _, tc := range []struct {
		name  string
		spoil func(ctx context.Context, st redisbackup.Stored) error
	}{
		{"other bytes under the recorded SHA-256", func(ctx context.Context, st redisbackup.Stored) error {
			body := strings.Repeat("x", int(st.Size))
			// The metadata objectstore records: the original's size and SHA-256.
			meta := map[string]string{"Sha256": st.SHA256, "Size": strconv.FormatInt(st.Size, 10)}
			_, err := raw.PutObject(ctx, srv.Bucket, "tenant-a/cache/"+st.Name, strings.NewReader(body), st.Size, minio.PutObjectOptions{UserMetadata: meta})
			return err
		}},
		{"stored again with other bytes", func(ctx context.Context, st redisbackup.Stored) error {
			_, err := store.Store.Upload(ctx, st.Name, strings.NewReader("REDIS0011 another file"))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			_, err := redisbackup.Run(ctx, spoilingStore{ObjectStore: store, spoil: tc.spoil}, "spoiled", shards, redisbackup.Options{})
			g.Expect(err).To(MatchError(redisbackup.ErrStore))
			g.Expect(err).To(MatchError(ContainSubstring("read back")))
			left, err := store.Store.List(ctx, "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(left).To(BeEmpty(), "a failed backup leaves no object")
		})
	}
}
