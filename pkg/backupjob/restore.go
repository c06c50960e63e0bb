package backupjob

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisrestore"
)

// MaxManifestBytes bounds the manifest a restore reads: a hundred shards'
// records take a small part of it.
const MaxManifestBytes = 4 << 20

// RestoreConfig is what one restore run needs: where the backup is and
// the cluster it goes to, as for a backup, and what the backup's status
// recorded, which its manifest must agree with.
type RestoreConfig struct {
	Config
	// Expect is what the backup's RedisClusterBackup status recorded.
	Expect Expected
}

// Args is c as the command line Bind reads.
func (c RestoreConfig) Args() []string {
	return append(c.Config.Args(), c.Expect.args()...)
}

// Bind defines c's flags on fs.
func (c *RestoreConfig) Bind(fs *pflag.FlagSet) {
	c.Config.Bind(fs)
	c.Expect.bind(fs)
}

// Restore loads the backup at c.Path of the store or volume into the
// cluster at c.Seeds, as the default user with the password of
// c.PasswordFile (none when empty: a cluster without authentication), and
// returns its result: Keys is how many keys were restored. A manifest
// that disagrees with c.Expect fails it, of reason
// cachev1.ReasonRestoreManifestMismatch, before any key is written. It
// never panics on bad input, which becomes a failed result of reason
// cachev1.ReasonRestoreInvalid.
func Restore(ctx context.Context, c RestoreConfig, logger *slog.Logger) backupreport.Result {
	if err := errors.Join(c.validate(false), c.Expect.validate()); err != nil {
		return backupreport.Failed(cachev1.ReasonRestoreInvalid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var password []byte
	if c.PasswordFile != "" {
		var err error
		if password, err = readFile(c.PasswordFile); err != nil {
			return backupreport.Failed(cachev1.ReasonRestoreInvalid, err)
		}
	}
	var roots *x509.CertPool
	if c.RedisCAFile != "" {
		var err error
		if roots, err = readPool(c.RedisCAFile); err != nil {
			return backupreport.Failed(cachev1.ReasonRestoreInvalid, err)
		}
	}
	key, err := c.encryptionKey()
	if err != nil {
		return backupreport.Failed(cachev1.ReasonRestoreInvalid, err)
	}
	store, closeStore, err := c.Open()
	if err != nil {
		return backupreport.Failed(cachev1.ReasonRestoreInvalid, err)
	}
	defer closeStore()
	m, err := readManifest(ctx, store, c.Path)
	if err != nil {
		return backupreport.Failed(cachev1.ReasonRestoreFailed, err)
	}
	if err := c.Expect.check(m, c.Path); err != nil {
		return backupreport.Failed(cachev1.ReasonRestoreManifestMismatch, err)
	}
	logger.Info("manifest", "path", c.Path, "shards", len(m.Shards), "keys", m.Keys())

	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:     c.Seeds,
		Password:  string(password),
		TLSConfig: redisadmin.TLSConfig(roots),
	})
	defer func() { _ = client.Close() }()
	res, err := redisrestore.Run(ctx, client, store, m, redisrestore.Options{DecryptionKey: key})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s: %w", c.Timeout, err)
		}
		return backupreport.Failed(cachev1.ReasonRestoreFailed, err)
	}
	return backupreport.Result{
		Complete: true,
		Keys:     res.Keys,
		Message:  fmt.Sprintf("restored %d keys of %d shard files; %d had expired since the backup", res.Keys, len(m.Shards), res.Expired),
	}
}

// readManifest reads the backup's manifest, of at most MaxManifestBytes: a
// folder without one is not a backup.
func readManifest(ctx context.Context, src redisrestore.Source, folder string) (*redisbackup.Manifest, error) {
	r, err := src.Open(ctx, path.Join(folder, redisbackup.ManifestName))
	if err != nil {
		return nil, fmt.Errorf("reading the backup's manifest: %w", err)
	}
	defer func() { _ = r.Close() }()
	body, err := io.ReadAll(io.LimitReader(r, MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the backup's manifest: %w", err)
	}
	if len(body) > MaxManifestBytes {
		return nil, fmt.Errorf("the backup's manifest is larger than %d bytes", MaxManifestBytes)
	}
	var m redisbackup.Manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("the backup's manifest does not parse: %w", err)
	}
	return &m, nil
}
