// Package objectstore puts, gets, lists and deletes objects under one fixed
// prefix of a bucket on an S3-compatible store: uploads stream in parts of
// PartSize in bounded memory, and every object carries its size and SHA-256,
// checked when it is read back.
package objectstore

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

const (
	// PartSize is the size of each part of an upload; an upload holds two
	// parts in memory. With MaxParts it bounds the largest object (about
	// 160 GiB).
	PartSize = 16 << 20
	// MaxParts is S3's limit on the parts of one upload.
	MaxParts = 10000
	// MaxListed bounds the objects List returns and DeletePrefix removes
	// in one call, so that a store full of objects cannot exhaust memory.
	MaxListed = 10000
	// listPage is how many keys one list request asks for.
	listPage = 1000

	// Timeouts of the HTTP transport: each bounds one step of a request,
	// while the caller's context bounds the whole call.
	dialTimeout           = 10 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 60 * time.Second
	idleConnTimeout       = 90 * time.Second

	// The user metadata an object carries: its SHA-256 in hex and its size.
	metaSHA256 = "Sha256"
	metaSize   = "Size"
)

// ErrCorrupt is wrapped by the error at the end of reading an object whose
// bytes do not match the size or SHA-256 recorded when it was uploaded.
var ErrCorrupt = errors.New("object does not match its recorded size and SHA-256")

// ErrIncomplete is wrapped when an object has no recorded SHA-256: its
// upload did not finish.
var ErrIncomplete = errors.New("object has no recorded SHA-256: its upload did not finish")

// Config says where the objects live and how to reach the store.
type Config struct {
	// Endpoint is the store's host:port, without a scheme.
	Endpoint string
	// Bucket holds the objects.
	Bucket string
	// Prefix is the folder every key lies under; names cannot leave it.
	Prefix string
	// Region is the bucket's region; empty lets the client ask the store.
	Region string
	// AccessKey, SecretKey and SessionToken authenticate (Signature V4).
	AccessKey, SecretKey, SessionToken string
	// CABundle, when set, is the PEM CA certificates that alone are trusted
	// for the store's certificate, instead of the system's.
	CABundle []byte
	// Insecure speaks plain HTTP to the endpoint.
	Insecure bool
}

// Object is a stored object.
type Object struct {
	// Name is its key below the prefix.
	Name string
	// Key is its full key in the bucket.
	Key string
	// Size is its length in bytes.
	Size int64
	// SHA256 is the hex SHA-256 of its bytes, as recorded at upload (empty
	// in List, which does not fetch metadata).
	SHA256 string
}

// Store is a bucket's prefix on a store.
type Store struct {
	client    *minio.Client
	transport *http.Transport
	bucket    string
	prefix    string
	// secrets are scrubbed from every error.
	secrets []string
	// parts are part buffers that uploads have finished with, for the next
	// ones, so that the uploads of a backup's shards, one after another,
	// reuse their buffers instead of leaving each upload's to the
	// collector.
	parts sync.Pool
}

// New returns a Store for cfg. It makes no request.
func New(cfg Config) (*Store, error) {
	if cfg.Endpoint == "" || strings.Contains(cfg.Endpoint, "/") {
		return nil, fmt.Errorf("objectstore: endpoint %q is not host:port", cfg.Endpoint)
	}
	if cfg.Bucket == "" {
		return nil, fmt.Errorf("objectstore: no bucket")
	}
	prefix, err := normalizePrefix(cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("objectstore: %w", err)
	}
	tr, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:    !cfg.Insecure,
		Region:    cfg.Region,
		Transport: tr,
	})
	if err != nil {
		return nil, fmt.Errorf("objectstore: client for %s: %w", cfg.Endpoint, err)
	}
	s := &Store{client: client, transport: tr, bucket: cfg.Bucket, prefix: prefix}
	for _, v := range []string{cfg.SecretKey, cfg.SessionToken} {
		if v != "" {
			s.secrets = append(s.secrets, v)
		}
	}
	return s, nil
}

func newTransport(cfg Config) (*http.Transport, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cfg.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CABundle) {
			return nil, fmt.Errorf("objectstore: the CA bundle has no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       idleConnTimeout,
		MaxIdleConnsPerHost:   4,
	}, nil
}

// Close releases the idle connections.
func (s *Store) Close() { s.transport.CloseIdleConnections() }

// key is name's full key, or why name is refused.
func (s *Store) key(name string) (string, error) {
	if err := validName(name); err != nil {
		return "", fmt.Errorf("objectstore: %w", err)
	}
	return s.prefix + name, nil
}

// wrap says what failed, without any secret the store may have echoed.
func (s *Store) wrap(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	e := fmt.Errorf("objectstore: %s in bucket %s: %w", msg, s.bucket, err)
	text := e.Error()
	clean := text
	for _, secret := range s.secrets {
		clean = strings.ReplaceAll(clean, secret, "<redacted>")
	}
	if clean != text {
		return &scrubbed{msg: clean, err: err}
	}
	return e
}

// scrubbed is an error whose text had a secret replaced; Unwrap still
// gives the cause to errors.Is and errors.As.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// Open returns the object name's bytes. The reader's last Read returns
// io.EOF only when the bytes match the recorded size and SHA-256, and an
// error wrapping ErrCorrupt otherwise: callers must not trust the data
// before reading to io.EOF without error.
func (s *Store) Open(ctx context.Context, name string) (io.ReadCloser, Object, error) {
	key, err := s.key(name)
	if err != nil {
		return nil, Object{}, err
	}
	o, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Object{}, s.wrap(err, "opening %s", key)
	}
	st, err := o.Stat()
	if err != nil {
		_ = o.Close()
		return nil, Object{}, s.wrap(err, "opening %s", key)
	}
	obj, err := recorded(st)
	if err != nil {
		_ = o.Close()
		return nil, Object{}, fmt.Errorf("objectstore: %s in bucket %s: %w", key, s.bucket, err)
	}
	obj.Name = name
	return &verifier{r: o, c: o, h: sha256.New(), want: obj, wrap: s.wrap}, obj, nil
}

// recorded reads the size and SHA-256 an upload recorded.
func recorded(st minio.ObjectInfo) (Object, error) {
	sum, sizeText := st.UserMetadata[metaSHA256], st.UserMetadata[metaSize]
	if sum == "" || sizeText == "" {
		return Object{}, ErrIncomplete
	}
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 {
		return Object{}, fmt.Errorf("%w: recorded size %q", ErrCorrupt, sizeText)
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
		return Object{}, fmt.Errorf("%w: recorded SHA-256 %q", ErrCorrupt, sum)
	}
	return Object{Key: st.Key, Size: size, SHA256: sum}, nil
}

// verifier hashes and counts what it reads, and turns io.EOF into an error
// when the bytes are not the recorded ones.
type verifier struct {
	r    io.Reader
	c    io.Closer
	h    hash.Hash
	n    int64
	want Object
	wrap func(error, string, ...any) error
	err  error
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.want.Size {
		v.err = fmt.Errorf("objectstore: %s: %w: more than the recorded %d bytes", v.want.Key, ErrCorrupt, v.want.Size)
		return n, v.err
	}
	switch {
	case err == io.EOF:
		if got := hex.EncodeToString(v.h.Sum(nil)); v.n != v.want.Size || got != v.want.SHA256 {
			v.err = fmt.Errorf("objectstore: %s: %w: read %d bytes with SHA-256 %s, recorded %d bytes with %s",
				v.want.Key, ErrCorrupt, v.n, got, v.want.Size, v.want.SHA256)
			return n, v.err
		}
		v.err = io.EOF
	case err != nil:
		v.err = v.wrap(err, "reading %s", v.want.Key)
	}
	return n, v.err
}

func (v *verifier) Close() error { return v.c.Close() }

// List returns the objects whose names start with subprefix (every object
// under the prefix when empty), at most MaxListed of them; more is an
// error rather than a silently partial list.
func (s *Store) List(ctx context.Context, subprefix string) ([]Object, error) {
	if subprefix != "" {
		if err := validSubprefix(subprefix); err != nil {
			return nil, fmt.Errorf("objectstore: %w", err)
		}
	}
	full := s.prefix + subprefix
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine when we return early
	var out []Object
	for info := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: full, Recursive: true, MaxKeys: listPage}) {
		if info.Err != nil {
			return nil, s.wrap(info.Err, "listing %s", full)
		}
		if len(out) == MaxListed {
			return nil, fmt.Errorf("objectstore: listing %s in bucket %s: more than %d objects", full, s.bucket, MaxListed)
		}
		out = append(out, Object{Name: strings.TrimPrefix(info.Key, s.prefix), Key: info.Key, Size: info.Size})
	}
	return out, nil
}

// Delete removes the named objects; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, names ...string) error {
	for _, name := range names {
		key, err := s.key(name)
		if err != nil {
			return err
		}
		if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
			return s.wrap(err, "deleting %s", key)
		}
	}
	return nil
}

// DeletePrefix removes every object whose name starts with subprefix, such
// as a failed backup's partial objects (end subprefix with "/" to select a
// folder only), and aborts the multipart uploads that never completed
// there: an uploader killed mid-object leaves its parts stored, unlisted,
// until they are. It returns how many objects it removed.
func (s *Store) DeletePrefix(ctx context.Context, subprefix string) (int, error) {
	if err := validSubprefix(subprefix); err != nil {
		return 0, fmt.Errorf("objectstore: %w", err)
	}
	objs, err := s.List(ctx, subprefix)
	if err != nil {
		return 0, err
	}
	for i, o := range objs {
		if err := s.client.RemoveObject(ctx, s.bucket, o.Key, minio.RemoveObjectOptions{}); err != nil {
			return i, s.wrap(err, "deleting %s", o.Key)
		}
	}
	return len(objs), s.abortUploads(ctx, s.prefix+subprefix)
}

// abortUploads aborts the incomplete multipart uploads below the full key
// prefix full, at most MaxListed of them.
func (s *Store) abortUploads(ctx context.Context, full string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine when we return early
	core := minio.Core{Client: s.client}
	n := 0
	for up := range s.client.ListIncompleteUploads(ctx, s.bucket, full, true) {
		if up.Err != nil {
			return s.wrap(up.Err, "listing the incomplete uploads of %s", full)
		}
		if n++; n > MaxListed {
			return fmt.Errorf("objectstore: listing the incomplete uploads of %s in bucket %s: more than %d", full, s.bucket, MaxListed)
		}
		if err := core.AbortMultipartUpload(ctx, s.bucket, up.Key, up.UploadID); err != nil {
			return s.wrap(err, "aborting the upload of %s", up.Key)
		}
	}
	return nil
}
