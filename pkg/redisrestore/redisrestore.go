// Package redisrestore loads a backup (pkg/redisbackup) into a Redis
// Cluster of any number of masters: each shard's file is parsed as it
// streams in and every key is sent with RESTORE, with its absolute expiry,
// to the master that serves its slot now.
//
// It streams as redis-cli --pipe does: files are read in parallel, and
// each master gets a connection of its own on which batches of RESTOREs,
// encoded as they are parsed, are written while the replies of earlier
// ones are read. No master waits for another, and the client's CPU goes to
// parsing rather than to a command object per key. Memory stays bounded
// whatever the backup's size: about Parallel + InFlight + 1 batches of
// BatchBytes per master.
package redisrestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/filecrypt"
	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
)

// ErrKeyNeeded is returned for an encrypted backup restored without its key.
var ErrKeyNeeded = errors.New("the backup is encrypted: its key is needed to restore it")

// Source reads a backup's files.
type Source interface {
	// Open opens the file name of the backup.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

// Defaults of Options.
const (
	// DefaultBatchBytes bounds one batch: small enough that a master gets
	// its first batch early and that several per master stay cheap, large
	// enough that each write carries many keys.
	DefaultBatchBytes = 64 << 10
	// DefaultParallel is how many files are read at once: parsing takes
	// CPU, and a backup has a file per shard.
	DefaultParallel = 4
	// DefaultInFlight is how many batches a master may have unanswered:
	// enough that it always has the next ones while replies travel.
	DefaultInFlight = 8
)

// cmdBytes is what a RESTORE costs beyond its encoding, in a batch's
// bound: where its key and payload are, so that a batch of tiny keys
// stays bounded too.
const cmdBytes = 48

// encodingBytes bounds what a RESTORE's encoding adds to its key and
// payload: the command, lengths, expiry and options.
const encodingBytes = 128

// Options tune a restore.
type Options struct {
	// Parse bounds what each file may hold.
	Parse rdb.Options
	// BatchBytes bounds one batch of RESTOREs to one master: their
	// encoding and cmdBytes per key. A key larger than BatchBytes goes
	// alone. DefaultBatchBytes when 0.
	BatchBytes int
	// Parallel is how many files are read at once; DefaultParallel when 0.
	Parallel int
	// InFlight is how many batches each master may have unanswered;
	// DefaultInFlight when 0.
	InFlight int
	// Now is the clock, to leave out keys that expired since the backup;
	// time.Now when nil.
	Now func() time.Time
	// DecryptionKey is the key of an encrypted backup (its manifest's
	// Encryption); unused for one that is not.
	DecryptionKey []byte
}

func (o Options) withDefaults() Options {
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.InFlight <= 0 {
		o.InFlight = DefaultInFlight
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
// the target cluster (any number of masters: each key goes to its slot's
// master; the connections to them use c's dialer, TLS and credentials).
// A key that exists is replaced, so that a restore interrupted by a crash
// can run again from the start. Run stops at the first file that cannot
// be read or does not match the manifest, or the first RESTORE a master
// refuses, and the caller must then not present the cluster as restored.
// ctx bounds the restore: its end closes the connections.
func Run(ctx context.Context, c *redis.ClusterClient, src Source, m *redisbackup.Manifest, opts Options) (Result, error) {
	opts = opts.withDefaults()
	if m.Version != redisbackup.ManifestVersion {
		return Result{}, fmt.Errorf("backup manifest version %d, this operator reads %d", m.Version, redisbackup.ManifestVersion)
	}
	switch {
	case m.Encryption == "":
		opts.DecryptionKey = nil
	case m.Encryption != filecrypt.Scheme:
		return Result{}, fmt.Errorf("the backup is encrypted with %q, this operator reads %q", m.Encryption, filecrypt.Scheme)
	case opts.DecryptionKey == nil:
		return Result{}, ErrKeyNeeded
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &restorer{c: c, opts: opts, cancel: cancel}
	err := r.connect(ctx)
	files := make([]fileResult, len(m.Shards))
	if err == nil {
		sem := make(chan struct{}, opts.Parallel)
		var wg sync.WaitGroup
		for i, sh := range m.Shards {
			wg.Go(func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				defer func() { <-sem }()
				var err error
				files[i], err = r.file(ctx, src, sh)
				if err != nil {
					r.fail(fmt.Errorf("shard %d (%s): %w", i, sh.File.Name, err))
				}
			})
		}
		wg.Wait()
	}
	r.close()
	res := Result{Keys: r.restored.Load()}
	for _, f := range files {
		res.Expired += f.expired
		res.Libraries += f.libraries
	}
	if err != nil {
		return res, err
	}
	return res, context.Cause(ctx)
}

// restorer routes a restore's keys to the masters' pipes.
type restorer struct {
	c        *redis.ClusterClient
	opts     Options
	cancel   context.CancelCauseFunc
	failOnce sync.Once
	restored atomic.Int64
	batches  sync.Pool

	// pipes are the masters' pipes; slots the pipe of each slot.
	pipes   []*pipe
	slots   [redisadmin.NumSlots]*pipe
	workers sync.WaitGroup
}

// fail stops the restore with its first error; the others are what it
// caused.
func (r *restorer) fail(err error) {
	r.failOnce.Do(func() { r.cancel(err) })
}

// connect opens a pipe to every master, as c routes each slot now.
func (r *restorer) connect(ctx context.Context) error {
	byClient := map[*redis.Client]*pipe{}
	for slot := range r.slots {
		client, err := r.c.MasterForKey(ctx, redisadmin.HashTag(slot))
		if err != nil {
			return fmt.Errorf("the master of slot %d: %w", slot, err)
		}
		p, ok := byClient[client]
		if !ok {
			if p, err = dial(ctx, client, len(r.pipes), r.opts.InFlight); err != nil {
				return err
			}
			byClient[client] = p
			r.pipes = append(r.pipes, p)
			r.workers.Go(func() { r.write(ctx, p) })
			r.workers.Go(func() { r.read(ctx, p) })
		}
		r.slots[slot] = p
	}
	return nil
}

// close ends the pipes once every file is read, and waits for them.
func (r *restorer) close() {
	for _, p := range r.pipes {
		close(p.batches)
	}
	r.workers.Wait()
	for _, p := range r.pipes {
		p.close()
	}
}

// fileResult is what one file left out or loaded besides keys.
type fileResult struct {
	expired   int64
	libraries int
}

// file reads one shard's file, hands its keys to the masters' pipes, and
// checks it against the manifest.
func (r *restorer) file(ctx context.Context, src Source, sh redisbackup.ShardResult) (fileResult, error) {
	var res fileResult
	f, err := src.Open(ctx, sh.File.Name)
	if err != nil {
		return res, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	stored := io.TeeReader(f, h)
	in := stored
	if r.opts.DecryptionKey != nil {
		if in, err = filecrypt.NewReader(stored, r.opts.DecryptionKey); err != nil {
			return res, err
		}
	}
	// This file's batch being filled for each master.
	filling := make([]*batch, len(r.pipes))
	var keys int64
	err = rdb.NewParser(in, r.opts.Parse).Each(func(e rdb.Entry) error {
		switch e := e.(type) {
		case *rdb.Key:
			keys++
			if e.Expires && e.ExpireAtMs <= r.opts.Now().UnixMilli() {
				res.expired++
				return nil
			}
			return r.add(ctx, filling, e)
		case *rdb.FunctionLibrary:
			if err := loadLibrary(ctx, r.c, e.Code); err != nil {
				return err
			}
			res.libraries++
		}
		return nil
	})
	for i, b := range filling {
		if err == nil && b != nil {
			err = r.hand(ctx, r.pipes[i], b)
		}
	}
	if err != nil {
		return res, err
	}
	// Whatever follows the RDB file's end counts in its checksum too (and
	// an encrypted file is authenticated to its last segment).
	if _, err := io.Copy(io.Discard, in); err != nil {
		return res, err
	}
	if _, err := io.Copy(io.Discard, stored); err != nil {
		return res, err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != sh.File.SHA256 {
		return res, fmt.Errorf("the file's SHA-256 is %s, the manifest says %s", sum, sh.File.SHA256)
	}
	if keys != sh.Keys {
		return res, fmt.Errorf("the file holds %d keys, the manifest says %d", keys, sh.Keys)
	}
	return res, nil
}

// add encodes k's RESTORE into the batch of its slot's master, and hands
// the batch on once full.
func (r *restorer) add(ctx context.Context, filling []*batch, k *rdb.Key) error {
	// A short key converts on the stack: KeySlot keeps nothing.
	p := r.slots[redisadmin.KeySlotOf(k.Key)]
	b := filling[p.i]
	if b != nil && b.size()+len(k.Key)+len(k.Payload)+encodingBytes+cmdBytes > r.opts.BatchBytes {
		// Full: a key larger than BatchBytes goes alone.
		filling[p.i] = nil
		if err := r.hand(ctx, p, b); err != nil {
			return err
		}
		b = nil
	}
	if b == nil {
		b = r.newBatch()
		filling[p.i] = b
	}
	var expireAt int64
	if k.Expires {
		expireAt = k.ExpireAtMs
	}
	b.add(k.Key, k.Payload, expireAt)
	return nil
}

// hand gives a full batch to its master's pipe, waiting while the pipe
// has as many as it may.
func (r *restorer) hand(ctx context.Context, p *pipe, b *batch) error {
	select {
	case p.batches <- b:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// batch is RESTOREs for one master, encoded back to back as the master
// reads them, with where each one's key and payload are, to send it again
// elsewhere after a redirect.
type batch struct {
	buf  []byte
	cmds []restoreCmd
}

// restoreCmd is one RESTORE of a batch.
type restoreCmd struct {
	key, payload span
	expireAt     int64
}

// span is where bytes are in a batch's buf.
type span struct{ from, to int }

func (r *restorer) newBatch() *batch {
	if b, ok := r.batches.Get().(*batch); ok {
		return b
	}
	return &batch{buf: make([]byte, 0, r.opts.BatchBytes)}
}

// recycle keeps b for another batch, unless a large key grew it: a pool
// of large buffers would hold memory the next batches do not need.
func (r *restorer) recycle(b *batch) {
	if cap(b.buf) > r.opts.BatchBytes {
		return
	}
	b.buf, b.cmds = b.buf[:0], b.cmds[:0]
	r.batches.Put(b)
}

func (b *batch) size() int { return len(b.buf) + len(b.cmds)*cmdBytes }

// add encodes RESTORE key expireAt payload REPLACE [ABSTTL]: the key
// replaced, with its absolute expiry when it has one (0 is none).
func (b *batch) add(key, payload []byte, expireAt int64) {
	var c restoreCmd
	c.expireAt = expireAt
	if expireAt > 0 {
		b.buf = append(b.buf, "*6\r\n$7\r\nRESTORE\r\n"...)
	} else {
		b.buf = append(b.buf, "*5\r\n$7\r\nRESTORE\r\n"...)
	}
	c.key = b.bulk(key)
	var n [20]byte
	b.bulk(strconv.AppendInt(n[:0], expireAt, 10))
	c.payload = b.bulk(payload)
	b.buf = append(b.buf, "$7\r\nREPLACE\r\n"...)
	if expireAt > 0 {
		b.buf = append(b.buf, "$6\r\nABSTTL\r\n"...)
	}
	b.cmds = append(b.cmds, c)
}

// bulk encodes s as a bulk string and returns where it is.
func (b *batch) bulk(s []byte) span {
	b.buf = append(b.buf, '$')
	b.buf = strconv.AppendInt(b.buf, int64(len(s)), 10)
	b.buf = append(b.buf, '\r', '\n')
	sp := span{len(b.buf), len(b.buf) + len(s)}
	b.buf = append(b.buf, s...)
	b.buf = append(b.buf, '\r', '\n')
	return sp
}

// args are command i's arguments, for the cluster client.
func (b *batch) args(i int) []any {
	c := b.cmds[i]
	args := []any{"RESTORE", string(b.buf[c.key.from:c.key.to]), c.expireAt, b.buf[c.payload.from:c.payload.to], "REPLACE"}
	if c.expireAt > 0 {
		args = append(args, "ABSTTL")
	}
	return args
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
