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
	"strings"

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
// the cluster it goes to, as for a backup, the user it logs in as, and
// what the backup's status recorded, which its manifest must agree with.
type RestoreConfig struct {
	Config
	// Username is the ACL user the restore logs in as with the password of
	// PasswordFile: redisadmin.RestoreUser for a RedisCluster's restore
	// Job, which may only restore; the default user when empty.
	Username string
	// Expect is what the backup's RedisClusterBackup status recorded.
	Expect Expected
}

// flagUsername names RestoreConfig.Username's flag.
const flagUsername = "redis-username"

// maxUsernameBytes bounds --redis-username: the operator's users have
// short names.
const maxUsernameBytes = 64

// Args is c as the command line Bind reads.
func (c RestoreConfig) Args() []string {
	args := c.Config.Args()
	if c.Username != "" {
		args = append(args, "--"+flagUsername+"="+c.Username)
	}
	return append(args, c.Expect.args()...)
}

// Bind defines c's flags on fs.
func (c *RestoreConfig) Bind(fs *pflag.FlagSet) {
	c.Config.Bind(fs)
	fs.StringVar(&c.Username, flagUsername, "", "The ACL user to log in as with the password of --"+flagPasswordFile+"; the default user when empty.")
	c.Expect.bind(fs)
}

// validate says what is missing or contradictory: the password file is
// optional, for a cluster whose default user needs none, but a user needs
// one.
func (c RestoreConfig) validate() error {
	errs := []error{c.Config.validate(false), c.Expect.validate()}
	switch {
	case c.Username == "":
	case len(c.Username) > maxUsernameBytes || strings.IndexFunc(c.Username, notUsernameRune) >= 0:
		errs = append(errs, fmt.Errorf("--%s must be at most %d letters, digits, '.', '_' or '-'", flagUsername, maxUsernameBytes))
	case c.PasswordFile == "":
		errs = append(errs, fmt.Errorf("--%s needs --%s", flagUsername, flagPasswordFile))
	}
	return errors.Join(errs...)
}

// notUsernameRune reports whether r may not be in --redis-username: Redis
// reads a user name up to the first space, and a log shows it.
func notUsernameRune(r rune) bool {
	return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '.' && r != '_' && r != '-'
}

// Restore loads the backup at c.Path of the store or volume into the
// cluster at c.Seeds, as c.Username (the default user when empty) with the
// password of c.PasswordFile (none when empty: a cluster without
// authentication), and returns its result: Keys is how many keys were restored. A manifest
// that disagrees with c.Expect fails it, of reason
// cachev1.ReasonRestoreManifestMismatch, before any key is written. It
// never panics on bad input, which becomes a failed result of reason
// cachev1.ReasonRestoreInvalid.
func Restore(ctx context.Context, c RestoreConfig, logger *slog.Logger) backupreport.Result {
	if err := c.validate(); err != nil {
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

	client := redis.NewClusterClient(redisadmin.RestoreClusterOptions(c.Seeds, c.Username, string(password), roots))
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
