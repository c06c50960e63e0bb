package objectstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
)

// contentType is every object's: backups are opaque bytes.
const contentType = "application/octet-stream"

// abortTimeout bounds the abort of a failed multipart upload, which runs
// after the caller's context may have ended.
const abortTimeout = 30 * time.Second

// writeGrace is how long a request that writes to the store, once sent,
// may still run for its answer after the caller's context ended. A request
// given up on the client's side may still be carried out by the store: a
// PUT whose body had arrived becomes an object after the caller, seeing
// the upload fail, removed what it had stored. It is a bound, not a
// guarantee: a store slower than this to answer can still do so.
const writeGrace = 30 * time.Second

// withGrace is a context for a writing request about to be sent: it ends
// writeGrace after ctx does, or when its cancel function is called. When
// ctx has ended already, so has the request's: no request starts after
// the caller gave up.
func withGrace(ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if ctx.Err() != nil {
		cancel(context.Cause(ctx))
		return out, func() { cancel(context.Canceled) }
	}
	stop := context.AfterFunc(ctx, func() {
		timer := time.NewTimer(writeGrace)
		defer timer.Stop()
		select {
		case <-timer.C:
			cancel(context.Cause(ctx))
		case <-out.Done():
		}
	})
	return out, func() {
		stop()
		cancel(context.Canceled)
	}
}

// Upload streams r to the object name, computing its SHA-256 on the way,
// and records size and SHA-256 as the object's metadata. An object smaller
// than PartSize is sent in one request that carries its metadata. A
// larger one goes in parts of PartSize, each part sent while the next is
// read, so that the source does not wait for the store's round trip; its
// metadata is then recorded by a server-side copy onto itself, since it
// is known only at the end. A part that fails is noticed once the read of
// the next one returns: the source's own timeouts bound that. An upload
// that fails leaves no object, or one without a recorded SHA-256, which
// Open refuses. Once ctx ended, Upload sends no further request that
// writes, and returns only once the store answered those under way (each
// given up to writeGrace), so that a caller removing what a cancelled
// upload stored sees all of it.
func (s *Store) Upload(ctx context.Context, name string, r io.Reader) (Object, error) {
	key, err := s.key(name)
	if err != nil {
		return Object{}, err
	}
	h := sha256.New()
	r = io.TeeReader(r, h)
	first := s.partBuffer()
	n, err := io.ReadFull(r, first)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		obj := Object{Name: name, Key: key, Size: int64(n), SHA256: hex.EncodeToString(h.Sum(nil))}
		wctx, cancel := withGrace(ctx)
		defer cancel()
		_, err = s.client.PutObject(wctx, s.bucket, key, bytes.NewReader(first[:n]), int64(n), minio.PutObjectOptions{
			ContentType:      contentType,
			UserMetadata:     metadata(obj),
			DisableMultipart: true,
		})
		if err != nil {
			// Left to the collector: the transport may still read a
			// failed request's body.
			return Object{}, s.wrap(err, "uploading %s", key)
		}
		s.parts.Put(&first)
		return obj, nil
	}
	if err != nil {
		s.parts.Put(&first)
		return Object{}, fmt.Errorf("objectstore: uploading %s: %w", key, err)
	}
	size, etag, err := s.uploadParts(ctx, key, first, r)
	if err != nil {
		return Object{}, err
	}
	obj := Object{Name: name, Key: key, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}
	wctx, cancel := withGrace(ctx)
	defer cancel()
	_, err = s.client.ComposeObject(wctx, minio.CopyDestOptions{
		Bucket:          s.bucket,
		Object:          key,
		ReplaceMetadata: true,
		UserMetadata:    metadata(obj),
	}, minio.CopySrcOptions{Bucket: s.bucket, Object: key, MatchETag: etag})
	if err != nil {
		return Object{}, s.wrap(err, "recording the SHA-256 of %s", key)
	}
	return obj, nil
}

// partBuffer is a buffer of PartSize bytes, one an earlier upload
// finished with when there is one.
func (s *Store) partBuffer() []byte {
	if buf, ok := s.parts.Get().(*[]byte); ok {
		return (*buf)[:PartSize]
	}
	return make([]byte, PartSize)
}

// metadata is the user metadata that records obj's size and SHA-256.
func metadata(obj Object) map[string]string {
	return map[string]string{metaSHA256: obj.SHA256, metaSize: strconv.FormatInt(obj.Size, 10)}
}

// uploadParts uploads first, a whole part, and the rest of r as the parts
// of one multipart upload, and returns the object's size and ETag. Two
// part buffers take turns: one is sent while r fills the other. A failed
// upload is aborted, so that the store keeps none of its parts.
func (s *Store) uploadParts(ctx context.Context, key string, first []byte, r io.Reader) (size int64, etag string, err error) {
	core := minio.Core{Client: s.client}
	startCtx, cancelStart := withGrace(ctx)
	id, err := core.NewMultipartUpload(startCtx, s.bucket, key, minio.PutObjectOptions{ContentType: contentType})
	cancelStart()
	if err != nil {
		return 0, "", s.wrap(err, "starting the upload of %s", key)
	}
	defer func() {
		if err != nil {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
			defer cancel()
			_ = core.AbortMultipartUpload(actx, s.bucket, key, id)
		}
	}()
	sendCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		parts []minio.CompletePart
	)
	free := make(chan []byte, 2)
	free <- s.partBuffer()
	send := func(number int, buf []byte) {
		wg.Go(func() {
			// Stopped sends still get their answer, before the abort.
			wctx, cancelWrite := withGrace(sendCtx)
			defer cancelWrite()
			part, err := core.PutObjectPart(wctx, s.bucket, key, id, number, bytes.NewReader(buf), int64(len(buf)), minio.PutObjectPartOptions{})
			if err != nil {
				cancel(s.wrap(err, "uploading %s, part %d", key, number))
				return
			}
			mu.Lock()
			parts = append(parts, minio.CompletePart{PartNumber: number, ETag: part.ETag})
			mu.Unlock()
			free <- buf[:cap(buf)]
		})
	}
	send(1, first)
	size = int64(len(first))
	var readErr error
	for number := 2; readErr == nil; number++ {
		var buf []byte
		select {
		case buf = <-free:
		case <-sendCtx.Done():
			readErr = context.Cause(sendCtx)
			continue
		}
		n, err := io.ReadFull(r, buf)
		switch {
		case err == io.EOF:
			readErr = io.EOF
		case err != nil && err != io.ErrUnexpectedEOF:
			readErr = fmt.Errorf("objectstore: uploading %s: %w", key, err)
		case number > MaxParts:
			readErr = fmt.Errorf("objectstore: uploading %s: larger than %d parts of %d bytes", key, MaxParts, PartSize)
		}
		if readErr != nil {
			// Read into but never sent.
			s.parts.Put(&buf)
			continue
		}
		send(number, buf[:n])
		size += int64(n)
		if err == io.ErrUnexpectedEOF {
			readErr = io.EOF
		}
	}
	if readErr != io.EOF {
		// Before the wait: the parts in flight are not retried past
		// writeGrace.
		cancel(readErr)
	}
	wg.Wait()
	// No part is in flight any more: the buffers the sends gave back
	// serve the next upload. One whose send failed is left to the
	// collector.
	for len(free) > 0 {
		buf := <-free
		s.parts.Put(&buf)
	}
	if err := context.Cause(sendCtx); err != nil {
		if ctx.Err() != nil {
			err = s.wrap(ctx.Err(), "uploading %s", key)
		}
		return 0, "", err
	}
	slices.SortFunc(parts, func(a, b minio.CompletePart) int { return a.PartNumber - b.PartNumber })
	wctx, cancelWrite := withGrace(ctx)
	defer cancelWrite()
	info, err := core.CompleteMultipartUpload(wctx, s.bucket, key, id, parts, minio.PutObjectOptions{})
	if err != nil {
		return 0, "", s.wrap(err, "completing the upload of %s", key)
	}
	return size, info.ETag, nil
}
