// Package redisbackup takes a backup of a Redis Cluster: each shard's
// snapshot, taken over the replication protocol from a replica when the
// shard has one (else its master), streams to a Destination while it is
// parsed on the way, so that the backup knows each file's key count and
// that every key belongs to the slots the shard served. Each file is read
// back from the Destination and checked against what was sent. A manifest
// written last makes the backup complete; a failed backup removes what it
// wrote.
//
// Nothing is held in memory beyond the pipes' buffers and the parser's
// current key: the data streams through.
package redisbackup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/multi-operator/multi-operator/pkg/filecrypt"
	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redissnapshot"
)

// ManifestName is the name of the manifest, written last, under the
// backup's prefix: a backup without it is incomplete.
const ManifestName = "manifest.json"

// ManifestVersion is the manifest format this package writes and reads.
const ManifestVersion = 1

// Kinds of failure, for errors.Is: what a caller reports as the cause.
var (
	// ErrClusterChanged: a snapshot held a key of a slot its shard did not
	// serve when the backup began.
	ErrClusterChanged = errors.New("the cluster changed meanwhile")
	// ErrSnapshot: a node's snapshot could not be taken or parsed.
	ErrSnapshot = errors.New("snapshot failed")
	// ErrStore: the destination failed to store a file.
	ErrStore = errors.New("store failed")
)

// kindError is an error of one of the kinds above whose text is its own
// message and cause only.
type kindError struct {
	kind error
	msg  string
	err  error
}

func (e *kindError) Error() string   { return e.msg + ": " + e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }
func failed(kind error, msg string, err error) error {
	return &kindError{kind: kind, msg: msg, err: err}
}

// Stored is what a Destination stored of one file.
type Stored struct {
	// Name is the file's name under the backup's prefix.
	Name string `json:"name"`
	// Size is how many bytes it holds.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of its bytes, computed as they streamed.
	SHA256 string `json:"sha256"`
}

// Destination stores a backup's files: an object store, or a directory
// on a volume.
type Destination interface {
	// Put stores r's bytes as name, streaming them, and returns what it
	// stored. A failed read of r fails the Put.
	Put(ctx context.Context, name string, r io.Reader) (Stored, error)
	// RemoveAll deletes every file under prefix, for a failed backup.
	RemoveAll(ctx context.Context, prefix string) error
	// Open opens a stored file for reading: each file is read back once
	// stored, before the backup counts it.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

// checker is a Destination that reads a stored file back and checks it
// itself, more cheaply than through Open and a hash of its own.
type checker interface {
	// Check fails unless the stored file holds want's bytes.
	Check(ctx context.Context, want Stored) error
}

// Shard is one shard to back up.
type Shard struct {
	// Slots are the slots its master serves.
	Slots []redisadmin.SlotRange `json:"slots"`
	// Nodes are the addresses to take the snapshot from, in order of
	// preference: replicas first, then the master.
	Nodes []string `json:"-"`
}

// Options configure a backup.
type Options struct {
	// Snapshot are the connection's options: TLS, the user with SYNC and
	// PSYNC, bounds.
	Snapshot redissnapshot.Options
	// Parse bounds what each snapshot may hold.
	Parse rdb.Options
	// ShardTimeout bounds one shard's snapshot, upload and read-back; an
	// hour when 0.
	ShardTimeout time.Duration
	// Parallel is how many shards stream at once; 2 when 0. Each fork on a
	// node and each stream costs the nodes and the store.
	Parallel int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// EncryptionKey, when set, encrypts every shard's file before it is
	// stored (pkg/filecrypt); the manifest says so, and a restore needs the
	// key. The manifest itself, counts and slots only, stays readable.
	EncryptionKey []byte
}

// ShardResult is what the backup holds of one shard.
type ShardResult struct {
	// Slots are the slots the file's keys belong to.
	Slots []redisadmin.SlotRange `json:"slots"`
	// File is the shard's RDB file.
	File Stored `json:"file"`
	// Keys is how many keys the file holds.
	Keys int64 `json:"keys"`
	// Expiring is how many of them have a time to live.
	Expiring int64 `json:"expiring"`
	// Source is the node the snapshot came from.
	Source string `json:"source"`
	// ReplID and Offset are the node's replication state at the
	// snapshot.
	ReplID string `json:"replId,omitempty"`
	// Offset is the replication offset at the snapshot.
	Offset int64 `json:"offset"`
	// Started and Completed bound the shard's snapshot and upload.
	Started time.Time `json:"started"`
	// Completed is when the shard's file was stored.
	Completed time.Time `json:"completed"`
}

// Manifest describes a complete backup.
type Manifest struct {
	// Version is ManifestVersion.
	Version int `json:"version"`
	// Started and Completed bound the backup.
	Started time.Time `json:"started"`
	// Completed is when the last shard's file was stored.
	Completed time.Time `json:"completed"`
	// Shards are the shards' files, in the order given.
	Shards []ShardResult `json:"shards"`
	// Encryption is the scheme the files are encrypted with
	// (filecrypt.Scheme), empty when they are not. Their sizes and
	// checksums are the stored, encrypted bytes'.
	Encryption string `json:"encryption,omitempty"`
}

// Keys is how many keys the backup holds.
func (m *Manifest) Keys() int64 {
	var n int64
	for _, s := range m.Shards {
		n += s.Keys
	}
	return n
}

// Run backs up shards under prefix of dest: one file per shard, then the
// manifest. Every shard must succeed: on any failure what was stored is
// removed and the error names the shard. ctx bounds the whole backup.
func Run(ctx context.Context, dest Destination, prefix string, shards []Shard, opts Options) (*Manifest, error) {
	opts = opts.withDefaults()
	m := &Manifest{Version: ManifestVersion, Started: opts.Now().UTC(), Shards: make([]ShardResult, len(shards))}
	if opts.EncryptionKey != nil {
		if len(opts.EncryptionKey) != filecrypt.KeySize {
			return nil, fmt.Errorf("an encryption key is %d bytes, not %d", filecrypt.KeySize, len(opts.EncryptionKey))
		}
		m.Encryption = filecrypt.Scheme
	}
	errs := make([]error, len(shards))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, sh := range shards {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			name := path.Join(prefix, fmt.Sprintf("shard-%03d.rdb", i))
			m.Shards[i], errs[i] = backupShard(ctx, dest, name, sh, opts)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("shard %d: %w", i, errs[i])
				cancel()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(firstCause(errs)...); err != nil {
		return nil, removeAfter(dest, prefix, err)
	}
	m.Completed = opts.Now().UTC()
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, removeAfter(dest, prefix, err)
	}
	stored, err := dest.Put(ctx, path.Join(prefix, ManifestName), bytes.NewReader(body))
	if err == nil {
		err = readBack(ctx, dest, stored)
	}
	if err != nil {
		return nil, removeAfter(dest, prefix, failed(ErrStore, "storing the manifest", err))
	}
	return m, nil
}

// firstCause drops the cancellations the first failure caused in the
// other shards, so that the error says what went wrong.
func firstCause(errs []error) []error {
	var out []error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			out = append(out, err)
		}
	}
	if len(out) == 0 {
		for _, err := range errs {
			if err != nil {
				return []error{err}
			}
		}
	}
	return out
}

// removeAfter removes a failed backup's files, with a context of its own
// since the backup's may be what ended.
func removeAfter(dest Destination, prefix string, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dest.RemoveAll(ctx, prefix); err != nil {
		return errors.Join(cause, fmt.Errorf("removing the failed backup's files: %w", err))
	}
	return cause
}

func (o Options) withDefaults() Options {
	if o.ShardTimeout <= 0 {
		o.ShardTimeout = time.Hour
	}
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// backupShard stores one shard's snapshot as name, from the first of its
// nodes that gives one.
func backupShard(ctx context.Context, dest Destination, name string, sh Shard, opts Options) (ShardResult, error) {
	if len(sh.Nodes) == 0 {
		return ShardResult{}, errors.New("no node to take the snapshot from")
	}
	var errs []error
	for _, addr := range sh.Nodes {
		res, err := streamShard(ctx, dest, name, addr, sh.Slots, opts)
		if err == nil {
			return res, nil
		}
		errs = append(errs, fmt.Errorf("from %s: %w", addr, err))
		if ctx.Err() != nil {
			break
		}
	}
	return ShardResult{}, errors.Join(errs...)
}

// streamShard takes addr's snapshot and stores it as name, parsing it on
// the way: a file that does not parse, or holds a key of a slot outside
// slots (the cluster changed meanwhile), fails the Put.
func streamShard(ctx context.Context, dest Destination, name, addr string, slots []redisadmin.SlotRange, opts Options) (ShardResult, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.ShardTimeout)
	defer cancel()
	res := ShardResult{Slots: slots, Source: addr, Started: opts.Now().UTC()}

	// snapshot -> (tee) -> store, and the tee's copy -> parser.
	snapR, snapW := io.Pipe()
	parseR, parseW := io.Pipe()
	var snap redissnapshot.Result
	var snapErr, parseErr error
	// A failure on one side of the pipes reaches the others as errors of
	// their own, after it is marked here: the first mark is the cause.
	var first atomic.Int32
	first.Store(-1)
	mark := func(side int32, err error) {
		if err != nil {
			first.CompareAndSwap(-1, side)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		snap, snapErr = redissnapshot.Take(ctx, addr, snapW, opts.Snapshot)
		mark(0, snapErr)
		_ = snapW.CloseWithError(orEOF(snapErr))
	})
	wg.Go(func() {
		res.Keys, res.Expiring, parseErr = countKeys(parseR, slots, opts.Parse)
		mark(1, parseErr)
		// Unblocks the tee, and fails the Put, when the parser stops early.
		_ = parseR.CloseWithError(orEOF(parseErr))
	})
	upload := io.TeeReader(snapR, parseW)
	size := func(n int64) int64 { return n }
	var encR *io.PipeReader
	if opts.EncryptionKey != nil {
		// snapshot -> (tee) -> encryption -> store.
		plain := upload
		var encW *io.PipeWriter
		encR, encW = io.Pipe()
		upload = encR
		size = func(n int64) int64 { return filecrypt.EncryptedSize(n, 0) }
		wg.Go(func() { _ = encW.CloseWithError(orEOF(encrypt(encW, plain, opts.EncryptionKey))) })
	}
	stored, putErr := dest.Put(ctx, name, upload)
	mark(2, putErr)
	if encR != nil {
		// Unblocks the encryption when the store stopped reading.
		_ = encR.CloseWithError(orEOF(putErr))
	}
	// The parser has its EOF once the whole file went through the tee.
	_ = parseW.CloseWithError(orEOF(putErr))
	_ = snapR.CloseWithError(orEOF(putErr))
	wg.Wait()
	switch first.Load() {
	case 0:
		return res, failed(ErrSnapshot, "taking the snapshot", snapErr)
	case 1:
		return res, failed(ErrSnapshot, "reading the snapshot", parseErr)
	case 2:
		return res, failed(ErrStore, "storing "+name, putErr)
	}
	if want := size(snap.Bytes); stored.Size != want {
		return res, failed(ErrStore, "storing "+name, fmt.Errorf("stored %d bytes of a %d-byte snapshot, want %d", stored.Size, snap.Bytes, want))
	}
	if err := readBack(ctx, dest, stored); err != nil {
		return res, failed(ErrStore, "storing "+name, err)
	}
	res.File, res.ReplID, res.Offset, res.Completed = stored, snap.ReplID, snap.Offset, opts.Now().UTC()
	return res, nil
}

// readBack reads a stored file back from dest and checks that it holds
// the bytes that were sent: their size and SHA-256. The checksum taken on
// the way out tells what was sent, not what the store kept; a backup is
// Complete only with files a restore will be able to read.
func readBack(ctx context.Context, dest Destination, want Stored) error {
	if c, ok := dest.(checker); ok {
		return c.Check(ctx, want)
	}
	rc, err := dest.Open(ctx, want.Name)
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	defer func() { _ = rc.Close() }()
	h := sha256.New()
	// One byte more than sent tells a longer file from a whole one.
	n, err := io.Copy(h, io.LimitReader(rc, want.Size+1))
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != want.Size || got != want.SHA256 {
		return fmt.Errorf("read back, it holds %d bytes with SHA-256 %s, not the %d bytes with %s that were sent", n, got, want.Size, want.SHA256)
	}
	return nil
}

// encrypt copies plain into w encrypted with key, to the last segment.
func encrypt(w io.Writer, plain io.Reader, key []byte) error {
	enc, err := filecrypt.NewWriter(w, key, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(enc, plain); err != nil {
		return err
	}
	return enc.Close()
}

// orEOF is err, or io.EOF when it is nil: what a pipe's reader sees.
func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// countKeys parses an RDB file to its verified end and counts its keys
// and those with a time to live; a key in a slot outside slots is an
// error, and so is a database other than 0 (a cluster has one).
func countKeys(r io.Reader, slots []redisadmin.SlotRange, opts rdb.Options) (keys, expiring int64, err error) {
	served := make([]bool, redisadmin.NumSlots)
	for _, s := range slots {
		for slot := max(s.From, 0); slot <= min(s.To, redisadmin.NumSlots-1); slot++ {
			served[slot] = true
		}
	}
	// The count needs no payloads: KeysOnly checks the file as fully.
	opts.KeysOnly = true
	err = rdb.NewParser(r, opts).Each(func(e rdb.Entry) error {
		k, ok := e.(*rdb.Key)
		if !ok {
			return nil
		}
		if k.DB != 0 {
			return fmt.Errorf("a key in database %d: a cluster node has database 0 only", k.DB)
		}
		if slot := redisadmin.KeySlotOf(k.Key); !served[slot] {
			return fmt.Errorf("a key of slot %d, which the shard did not serve when the backup began: %w", slot, ErrClusterChanged)
		}
		keys++
		if k.Expires {
			expiring++
		}
		return nil
	})
	return keys, expiring, err
}
