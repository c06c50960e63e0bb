package redisbackup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Dir is a Destination in a directory, such as a PersistentVolumeClaim's
// mount, for clusters without an object store.
type Dir struct {
	// Root is the directory; every name stays below it.
	Root string
}

// path is name's file below Root, refusing a name that would leave it.
func (d Dir) path(name string) (string, error) {
	clean := filepath.Clean("/" + name)
	if name == "" || clean == "/" || strings.Contains(name, "..") {
		return "", fmt.Errorf("invalid file name %q", name)
	}
	return filepath.Join(d.Root, clean), nil
}

// Put writes r to name through a temporary file that is synced and then
// renamed, so that a file under its name is always whole.
func (d Dir) Put(ctx context.Context, name string, r io.Reader) (Stored, error) {
	p, err := d.path(name)
	if err != nil {
		return Stored{}, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return Stored{}, err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".partial-*")
	if err != nil {
		return Stored{}, err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Stored{}, err
	}
	if err := os.Rename(tmp, p); err != nil {
		return Stored{}, err
	}
	return Stored{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// RemoveAll deletes prefix's files.
func (d Dir) RemoveAll(_ context.Context, prefix string) error {
	p, err := d.path(prefix)
	if err != nil {
		return err
	}
	return os.RemoveAll(p)
}

// Open opens name for reading; reads stop once ctx ends.
func (d Dir) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return ctxFile{ctxReader{ctx, f}, f}, nil
}

// ctxFile is a file whose reads stop once a context ends.
type ctxFile struct {
	ctxReader
	io.Closer
}

// ctxReader stops reading once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
