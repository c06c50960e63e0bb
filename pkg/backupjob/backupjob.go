// Package backupjob is the backup Job's side of a RedisClusterBackup: the
// command line the controller gives `manager backup` (Config, Args, Bind),
// and the run itself (Run): the cluster's shards found as the backup user,
// each shard's snapshot streamed to the object store or the volume, and a
// result for the operator (pkg/backupreport). The cleanup Job of a deleted
// backup, `manager backup-delete`, shares the destination's flags (Store)
// and removes the backup's folder (DeleteConfig, Delete).
//
// No secret is on the command line: the Redis password, the store's
// credentials and the CA certificates are files of mounted volumes.
package backupjob

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/filecrypt"
	"github.com/multi-operator/multi-operator/pkg/objectstore"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisrestore"
	"github.com/multi-operator/multi-operator/pkg/redissnapshot"
)

// Names of the files in the credentials directory, as the Secret's keys.
const (
	AccessKeyIDFile     = "accessKeyID"
	SecretAccessKeyFile = "secretAccessKey"
)

// maxFileBytes bounds each file the run reads: a password, a key, a CA
// bundle.
const maxFileBytes = 1 << 20

// Config is what one backup run needs.
type Config struct {
	// Seeds are addresses (host:port) to ask for the cluster's shards.
	Seeds []string
	// ClientPort is the port every node serves clients on.
	ClientPort int
	// PasswordFile holds the backup user's password.
	PasswordFile string
	// RedisCAFile, when set, holds the CA certificates of the nodes' TLS.
	RedisCAFile string
	// Path is the backup's folder: <namespace>/<cluster>/<backup>.
	Path string
	// Store is where the files go.
	Store
	// EncryptionKeyFile, when set, holds the key the files are encrypted
	// with (pkg/filecrypt: 32 bytes or their base64).
	EncryptionKeyFile string
	// Timeout bounds the whole run.
	Timeout time.Duration
	// TerminationLog, when set, is the file the result is written to as
	// well: the container's termination message.
	TerminationLog string
}

// Store is a backup's destination, as both the backup and its cleanup
// name it: a volume's directory or an object store's bucket and prefix.
type Store struct {
	// Dir, for a volume, is the directory the files go below.
	Dir string
	// S3Endpoint, for an object store, is its URL.
	S3Endpoint string
	// S3Insecure allows an http:// endpoint.
	S3Insecure bool
	// S3Bucket, S3Prefix and S3Region say where in the store.
	S3Bucket, S3Prefix, S3Region string
	// S3CredentialsDir holds the files AccessKeyIDFile and
	// SecretAccessKeyFile.
	S3CredentialsDir string
	// S3CAFile, when set, holds the CA certificates trusted for the store.
	S3CAFile string
}

// Flag names.
const (
	flagSeeds          = "seeds"
	flagClientPort     = "client-port"
	flagPasswordFile   = "redis-password-file"
	flagRedisCAFile    = "redis-ca-file"
	flagPath           = "path"
	flagDir            = "dir"
	flagS3Endpoint     = "s3-endpoint"
	flagS3Insecure     = "s3-insecure"
	flagS3Bucket       = "s3-bucket"
	flagS3Prefix       = "s3-prefix"
	flagS3Region       = "s3-region"
	flagS3Credentials  = "s3-credentials-dir"
	flagS3CAFile       = "s3-ca-file"
	flagEncryptionKey  = "encryption-key-file"
	flagTimeout        = "timeout"
	flagTerminationLog = "termination-log"
)

// Args is c as the command line Bind reads, omitting what is unset.
func (c Config) Args() []string {
	var args []string
	add := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name+"="+value)
		}
	}
	add(flagSeeds, strings.Join(c.Seeds, ","))
	if c.ClientPort != 0 {
		add(flagClientPort, strconv.Itoa(c.ClientPort))
	}
	add(flagPasswordFile, c.PasswordFile)
	add(flagRedisCAFile, c.RedisCAFile)
	add(flagPath, c.Path)
	args = append(args, c.Store.Args()...)
	add(flagEncryptionKey, c.EncryptionKeyFile)
	if c.Timeout != 0 {
		add(flagTimeout, c.Timeout.String())
	}
	add(flagTerminationLog, c.TerminationLog)
	return args
}

// Args is s as the command line Bind reads, omitting what is unset.
func (s Store) Args() []string {
	var args []string
	add := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name+"="+value)
		}
	}
	add(flagDir, s.Dir)
	add(flagS3Endpoint, s.S3Endpoint)
	if s.S3Insecure {
		add(flagS3Insecure, "true")
	}
	add(flagS3Bucket, s.S3Bucket)
	add(flagS3Prefix, s.S3Prefix)
	add(flagS3Region, s.S3Region)
	add(flagS3Credentials, s.S3CredentialsDir)
	add(flagS3CAFile, s.S3CAFile)
	return args
}

// Bind defines c's flags on fs.
func (c *Config) Bind(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.Seeds, flagSeeds, nil, "Addresses (host:port) to ask for the cluster's shards.")
	fs.IntVar(&c.ClientPort, flagClientPort, 6379, "The port every node serves clients on.")
	fs.StringVar(&c.PasswordFile, flagPasswordFile, "", "The file with the backup user's password.")
	fs.StringVar(&c.RedisCAFile, flagRedisCAFile, "", "The file with the CA certificates of the nodes' TLS; plain text when empty.")
	fs.StringVar(&c.Path, flagPath, "", "The backup's folder, <namespace>/<cluster>/<backup>.")
	c.Store.Bind(fs)
	fs.StringVar(&c.EncryptionKeyFile, flagEncryptionKey, "", "The file with the key the files are encrypted with (32 bytes or their base64); not encrypted when empty.")
	fs.DurationVar(&c.Timeout, flagTimeout, 6*time.Hour, "How long the whole backup may take.")
	fs.StringVar(&c.TerminationLog, flagTerminationLog, "", "A file to write the result to as well, such as /dev/termination-log.")
}

// Bind defines s's flags on fs.
func (s *Store) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&s.Dir, flagDir, "", "The directory of a volume the files go below.")
	fs.StringVar(&s.S3Endpoint, flagS3Endpoint, "", "The object store's URL, https://host[:port].")
	fs.BoolVar(&s.S3Insecure, flagS3Insecure, false, "Allow an http:// endpoint.")
	fs.StringVar(&s.S3Bucket, flagS3Bucket, "", "The bucket.")
	fs.StringVar(&s.S3Prefix, flagS3Prefix, "", "The folder of the bucket the backups go below.")
	fs.StringVar(&s.S3Region, flagS3Region, "", "The bucket's region; asked of the store when empty.")
	fs.StringVar(&s.S3CredentialsDir, flagS3Credentials, "", "The directory with the files accessKeyID and secretAccessKey.")
	fs.StringVar(&s.S3CAFile, flagS3CAFile, "", "The file with the CA certificates trusted for the store; the system's when empty.")
}

// Validate says what is missing or contradictory.
func (c Config) Validate() error { return c.validate(true) }

// validate is Validate, with the password file optional for a restore into
// a cluster whose clients need none.
func (c Config) validate(needPassword bool) error {
	var errs []error
	if len(c.Seeds) == 0 {
		errs = append(errs, fmt.Errorf("--%s is required", flagSeeds))
	}
	if needPassword && c.PasswordFile == "" {
		errs = append(errs, fmt.Errorf("--%s is required", flagPasswordFile))
	}
	if c.Path == "" {
		errs = append(errs, fmt.Errorf("--%s is required", flagPath))
	}
	errs = append(errs, c.Store.Validate())
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--%s must be above 0", flagTimeout))
	}
	return errors.Join(errs...)
}

// Validate says what is missing or contradictory.
func (s Store) Validate() error {
	var errs []error
	if (s.Dir == "") == (s.S3Endpoint == "") {
		errs = append(errs, fmt.Errorf("exactly one of --%s and --%s is required", flagDir, flagS3Endpoint))
	}
	if s.S3Endpoint != "" && (s.S3Bucket == "" || s.S3CredentialsDir == "") {
		errs = append(errs, fmt.Errorf("--%s needs --%s and --%s", flagS3Endpoint, flagS3Bucket, flagS3Credentials))
	}
	return errors.Join(errs...)
}

// Run takes the backup c describes and returns its result; it never
// panics on bad input, which becomes a failed result.
func Run(ctx context.Context, c Config, logger *slog.Logger) backupreport.Result {
	if err := c.Validate(); err != nil {
		return backupreport.Failed(cachev1.ReasonBackupInvalid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	password, err := readFile(c.PasswordFile)
	if err != nil {
		return backupreport.Failed(cachev1.ReasonBackupInvalid, err)
	}
	var roots *x509.CertPool
	if c.RedisCAFile != "" {
		if roots, err = readPool(c.RedisCAFile); err != nil {
			return backupreport.Failed(cachev1.ReasonBackupInvalid, err)
		}
	}
	key, err := c.encryptionKey()
	if err != nil {
		return backupreport.Failed(cachev1.ReasonBackupInvalid, err)
	}
	dest, closeDest, err := c.Open()
	if err != nil {
		return backupreport.Failed(cachev1.ReasonBackupInvalid, err)
	}
	defer closeDest()

	sources, err := redisadmin.BackupSources(ctx, c.Seeds, redisadmin.BackupSourceOptions{
		Password: string(password), TLSRootCAs: roots, ClientPort: c.ClientPort,
	})
	if err != nil {
		reason := cachev1.ReasonClusterUnavailable
		if errors.Is(err, redisadmin.ErrMigrating) {
			reason = cachev1.ReasonClusterChanged
		}
		return backupreport.Failed(reason, fmt.Errorf("finding the cluster's shards: %w", err))
	}
	shards := make([]redisbackup.Shard, len(sources))
	for i, s := range sources {
		shards[i] = redisbackup.Shard{Slots: s.Slots, Nodes: s.Nodes}
		logger.Info("shard", "index", i, "slots", backupreport.SlotString(s.Slots), "nodes", s.Nodes)
	}
	m, err := redisbackup.Run(ctx, dest, c.Path, shards, redisbackup.Options{
		Snapshot:      redissnapshot.Options{Username: redisadmin.BackupUser, Password: string(password), TLS: redisadmin.TLSConfig(roots)},
		EncryptionKey: key,
	})
	if err != nil {
		return backupreport.Failed(reasonOf(ctx, err), err)
	}
	return backupreport.FromManifest(m)
}

// encryptionKey reads the key of EncryptionKeyFile; nil without one.
func (c Config) encryptionKey() ([]byte, error) {
	if c.EncryptionKeyFile == "" {
		return nil, nil
	}
	raw, err := readFile(c.EncryptionKeyFile)
	if err != nil {
		return nil, err
	}
	key, err := filecrypt.ParseKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.EncryptionKeyFile, err)
	}
	return key, nil
}

// reasonOf says which kind of failure err is.
func reasonOf(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return cachev1.ReasonBackupTimedOut
	case errors.Is(err, redisbackup.ErrClusterChanged):
		return cachev1.ReasonClusterChanged
	case errors.Is(err, redisbackup.ErrSnapshot):
		return cachev1.ReasonSnapshotFailed
	case errors.Is(err, redisbackup.ErrStore):
		return cachev1.ReasonStoreFailed
	}
	return cachev1.ReasonBackupFailed
}

// Files is where a backup's files are: a backup writes them there, a
// restore reads them back, a cleanup removes them.
type Files interface {
	redisbackup.Destination
	redisrestore.Source
}

// Open opens the volume's directory or the store's prefix, reading the
// store's credentials and CA from their files; the func closes it.
func (s Store) Open() (Files, func(), error) {
	if s.Dir != "" {
		return redisbackup.Dir{Root: s.Dir}, func() {}, nil
	}
	u, err := url.Parse(s.S3Endpoint)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" {
		return nil, nil, fmt.Errorf("--%s %q is not a URL of scheme, host and port", flagS3Endpoint, s.S3Endpoint)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && s.S3Insecure:
	default:
		return nil, nil, fmt.Errorf("--%s must be https:// (http:// only with --%s)", flagS3Endpoint, flagS3Insecure)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	id, err := readFile(filepath.Join(s.S3CredentialsDir, AccessKeyIDFile))
	if err != nil {
		return nil, nil, err
	}
	secret, err := readFile(filepath.Join(s.S3CredentialsDir, SecretAccessKeyFile))
	if err != nil {
		return nil, nil, err
	}
	var ca []byte
	if s.S3CAFile != "" {
		if ca, err = readFile(s.S3CAFile); err != nil {
			return nil, nil, err
		}
	}
	store, err := objectstore.New(objectstore.Config{
		Endpoint: u.Host, Bucket: s.S3Bucket, Prefix: s.S3Prefix, Region: s.S3Region,
		AccessKey: strings.TrimSpace(string(id)), SecretKey: strings.TrimSpace(string(secret)),
		CABundle: ca, Insecure: u.Scheme == "http",
	})
	if err != nil {
		return nil, nil, err
	}
	return redisbackup.ObjectStore{Store: store}, store.Close, nil
}

// readFile reads a mounted file of at most maxFileBytes.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxFileBytes)
	}
	return b, nil
}

// readPool reads PEM CA certificates.
func readPool(name string) (*x509.CertPool, error) {
	b, err := readFile(name)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", name)
	}
	return pool, nil
}
