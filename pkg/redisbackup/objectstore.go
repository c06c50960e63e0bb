package redisbackup

import (
	"context"
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
