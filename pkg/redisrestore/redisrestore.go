// Package redisrestore loads a backup (pkg/redisbackup) into a Redis
// Cluster of any number of masters: each shard's file is parsed as it
// streams in and every key is sent with RESTORE, with its absolute expiry,
// to the master that serves its slot now. Nothing is held beyond one batch
// of keys, whatever the backup's size.
package redisrestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
)

// Source reads a backup's files.
type Source interface {
	// Open opens the file name of the backup.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

// Defaults of Options.
const (
	// DefaultBatchBytes bounds the payloads one pipeline carries.
	DefaultBatchBytes = 4 << 20
	// DefaultBatchKeys bounds the keys one pipeline carries.
	DefaultBatchKeys = 1000
)

// Options tune a restore.
type Options struct {
	// Parse bounds what each file may hold.
	Parse rdb.Options
	// BatchBytes and BatchKeys bound one pipeline of RESTOREs; the
	// defaults when 0. A key larger than BatchBytes goes alone.
	BatchBytes int
	// BatchKeys bounds the keys of one pipeline.
	BatchKeys int
	// Now is the clock, to leave out keys that expired since the backup;
	// time.Now when nil.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.BatchKeys <= 0 {
		o.BatchKeys = DefaultBatchKeys
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Result is what a restore loaded.
type Result struct {
	// Keys is how many keys were restored.
	Keys int64
	// Expired is how many keys of the backup had expired meanwhile and
	// were left out.
	Expired int64
	// Libraries is how many function libraries were loaded.
	Libraries int
}

// Run restores every shard's file of m from src through c, a client of
// the target cluster (any number of masters: the client sends each key to
// its slot's master). A key that exists is replaced, so that a restore
// interrupted by a crash can run again from the start. Run fails on the
// first file that cannot be read or does not match the manifest, and
// the caller must then not present the cluster as restored.
func Run(ctx context.Context, c *redis.ClusterClient, src Source, m *redisbackup.Manifest, opts Options) (Result, error) {
	opts = opts.withDefaults()
	var res Result
	if m.Version != redisbackup.ManifestVersion {
		return res, fmt.Errorf("backup manifest version %d, this operator reads %d", m.Version, redisbackup.ManifestVersion)
	}
	for i, sh := range m.Shards {
		if err := restoreFile(ctx, c, src, sh, opts, &res); err != nil {
			return res, fmt.Errorf("shard %d (%s): %w", i, sh.File.Name, err)
		}
	}
	return res, nil
}

// restoreFile restores one shard's file and checks it holds the keys the
// manifest counted.
func restoreFile(ctx context.Context, c *redis.ClusterClient, src Source, sh redisbackup.ShardResult, opts Options, res *Result) error {
	f, err := src.Open(ctx, sh.File.Name)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	in := io.TeeReader(f, h)
	b := batch{c: c, opts: opts}
	var keys int64
	err = rdb.NewParser(in, opts.Parse).Each(func(e rdb.Entry) error {
		switch e := e.(type) {
		case *rdb.Key:
			keys++
			if e.Expires && e.ExpireAtMs <= opts.Now().UnixMilli() {
				res.Expired++
				return nil
			}
			return b.add(ctx, e)
		case *rdb.FunctionLibrary:
			if err := loadLibrary(ctx, c, e.Code); err != nil {
				return err
			}
			res.Libraries++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := b.flush(ctx); err != nil {
		return err
	}
	res.Keys += b.restored
	// Whatever follows the RDB file's end counts in its checksum too.
	if _, err := io.Copy(io.Discard, in); err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != sh.File.SHA256 {
		return fmt.Errorf("the file's SHA-256 is %s, the manifest says %s", sum, sh.File.SHA256)
	}
	if keys != sh.Keys {
		return fmt.Errorf("the file holds %d keys, the manifest says %d", keys, sh.Keys)
	}
	return nil
}

// batch collects RESTOREs for one pipeline. The parser reuses its
// buffers, so each key and payload is copied in.
type batch struct {
	c        *redis.ClusterClient
	opts     Options
	keys     []restore
	bytes    int
	restored int64
}

type restore struct {
	key      string
	payload  string
	expireAt int64
}

func (b *batch) add(ctx context.Context, k *rdb.Key) error {
	r := restore{key: string(k.Key), payload: string(k.Payload)}
	if k.Expires {
		r.expireAt = k.ExpireAtMs
	}
	b.keys = append(b.keys, r)
	b.bytes += len(r.key) + len(r.payload)
	if len(b.keys) >= b.opts.BatchKeys || b.bytes >= b.opts.BatchBytes {
		return b.flush(ctx)
	}
	return nil
}

// flush sends the batch's RESTOREs in one pipeline, which the cluster
// client splits by master.
func (b *batch) flush(ctx context.Context) error {
	if len(b.keys) == 0 {
		return nil
	}
	cmds, err := b.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, r := range b.keys {
			args := []any{"RESTORE", r.key, r.expireAt, r.payload, "REPLACE"}
			if r.expireAt > 0 {
				args = append(args, "ABSTTL")
			}
			p.Do(ctx, args...)
		}
		return nil
	})
	if err != nil {
		for i, cmd := range cmds {
			if cmd.Err() != nil {
				return fmt.Errorf("RESTORE of key %d of a batch: %w", i, cmd.Err())
			}
		}
		return err
	}
	b.restored += int64(len(b.keys))
	b.keys, b.bytes = b.keys[:0], 0
	return nil
}

// loadLibrary loads a function library on every master, replacing one of
// the same name: functions are not sharded, each node keeps its own.
func loadLibrary(ctx context.Context, c *redis.ClusterClient, code []byte) error {
	return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		if err := n.FunctionLoadReplace(ctx, string(code)).Err(); err != nil {
			return fmt.Errorf("FUNCTION LOAD on %s: %w", n.Options().Addr, err)
		}
		return nil
	})
}
