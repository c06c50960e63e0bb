package redisbackup

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/multi-operator/multi-operator/pkg/objectstore"
)

// ObjectStore is a Destination, and a source for restores, on an
// S3-compatible store: names are below the store's prefix.
type ObjectStore struct {
	// Store is the bucket's prefix the backups go to.
	Store *objectstore.Store
}

// Put uploads r as name, in parts, and returns the size and SHA-256 the
// store recorded.
func (o ObjectStore) Put(ctx context.Context, name string, r io.Reader) (Stored, error) {
	obj, err := o.Store.Upload(ctx, name, r)
	if err != nil {
		return Stored{}, err
	}
	return Stored{Name: name, Size: obj.Size, SHA256: obj.SHA256}, nil
}

// RemoveAll deletes the objects under the folder prefix (not those of
// another backup whose name starts the same).
func (o ObjectStore) RemoveAll(ctx context.Context, prefix string) error {
	_, err := o.Store.DeletePrefix(ctx, strings.TrimSuffix(prefix, "/")+"/")
	return err
}

// Open opens name, checking its size and SHA-256 at its end.
func (o ObjectStore) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	rc, _, err := o.Store.Open(ctx, name)
	return rc, err
}

// Check reads name back and checks it against what was sent: the store's
// recorded size and SHA-256 must be want's, and Open's reader checks the
// bytes against them as they arrive, so they are hashed once.
func (o ObjectStore) Check(ctx context.Context, want Stored) error {
	rc, obj, err := o.Store.Open(ctx, want.Name)
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	defer func() { _ = rc.Close() }()
	if obj.Size != want.Size || obj.SHA256 != want.SHA256 {
		return fmt.Errorf("read back, it records %d bytes with SHA-256 %s, not the %d bytes with %s that were sent", obj.Size, obj.SHA256, want.Size, want.SHA256)
	}
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return fmt.Errorf("read back, it does not hold what was sent: %w", err)
	}
	return nil
}
