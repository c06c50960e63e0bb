package backupjob_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
)

// What the controller writes on the Job's command line is what the
// subcommand reads, field for field.
func TestArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  backupjob.Config
	}{
		{"a volume", backupjob.Config{Seeds: []string{"cache.ns.svc:6379"}, ClientPort: 6379, PasswordFile: "/p/password",
			Path: "ns/cache/b1", Store: backupjob.Store{Dir: "/backup"}, Timeout: time.Hour, TerminationLog: "/dev/termination-log"}},
		{"a store over TLS to TLS nodes", backupjob.Config{Seeds: []string{"a:6379", "b:6379"}, ClientPort: 6379, PasswordFile: "/p/password",
			RedisCAFile: "/redis-ca/ca.crt", Path: "ns/cache/b1", Store: backupjob.Store{S3Endpoint: "https://s3.example.com", S3Bucket: "backups",
				S3Prefix: "redis", S3Region: "eu-west-1", S3CredentialsDir: "/s3", S3CAFile: "/s3-ca/ca.crt"}, Timeout: 6 * time.Hour}},
		{"an insecure store", backupjob.Config{Seeds: []string{"a:6379"}, ClientPort: 6379, PasswordFile: "/p", Path: "a/b/c",
			Store: backupjob.Store{S3Endpoint: "http://minio:9000", S3Insecure: true, S3Bucket: "b", S3CredentialsDir: "/s3"}, Timeout: time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tc.cfg.Validate()).To(Succeed())
			var got backupjob.Config
			fs := pflag.NewFlagSet("backup", pflag.ContinueOnError)
			got.Bind(fs)
			g.Expect(fs.Parse(tc.cfg.Args())).To(Succeed())
			g.Expect(got).To(Equal(tc.cfg))
		})
	}
}

// A restore's command line round-trips with what the backup's status
// recorded, and malformed expectations are refused as it is parsed.
func TestRestoreArgsRoundTrip(t *testing.T) {
	g := NewWithT(t)
	sum := strings.Repeat("ab", 32)
	cfg := backupjob.RestoreConfig{
		Config: backupjob.Config{Seeds: []string{"copy-headless.ns.svc:6379"}, ClientPort: 6379, Path: "ns/cache/b1",
			Store: backupjob.Store{Dir: "/backup"}, Timeout: time.Hour},
		Expect: backupjob.Expected{Keys: 42, Shards: 3, Files: []backupjob.ExpectedFile{{Name: "shard-000.rdb", SHA256: sum}}},
	}
	withUser := cfg
	withUser.Username, withUser.PasswordFile = "restore", "/p/password"
	for _, cfg := range []backupjob.RestoreConfig{cfg, withUser} {
		var got backupjob.RestoreConfig
		fs := pflag.NewFlagSet("restore", pflag.ContinueOnError)
		got.Bind(fs)
		g.Expect(fs.Parse(cfg.Args())).To(Succeed())
		g.Expect(got).To(Equal(cfg))
	}
	g.Expect(cfg.Args()).NotTo(ContainElement(HavePrefix("--redis-username")), "the default user when none is set")
	for _, bad := range []string{"shard-000.rdb", "a/shard-000.rdb:" + sum, ":" + sum, "shard-000.rdb:abc", "shard-000.rdb:" + strings.Repeat("zz", 32)} {
		var c backupjob.RestoreConfig
		fs := pflag.NewFlagSet("restore", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.Bind(fs)
		g.Expect(fs.Parse([]string{"--expect-file=" + bad})).NotTo(Succeed(), "%q", bad)
	}
}

// The cleanup's command line round-trips too, and only a backup's own
// folder, three names deep, is accepted: never a cluster's, a namespace's
// or the prefix's whole.
func TestDeleteConfig(t *testing.T) {
	g := NewWithT(t)
	cfg := backupjob.DeleteConfig{Path: "ns/cache/b1", Store: backupjob.Store{S3Endpoint: "https://s3.example.com", S3Bucket: "backups",
		S3Prefix: "redis", S3CredentialsDir: "/s3", S3CAFile: "/s3-ca/ca.crt"}, Timeout: 14 * time.Minute}
	g.Expect(cfg.Validate()).To(Succeed())
	var got backupjob.DeleteConfig
	fs := pflag.NewFlagSet("backup-delete", pflag.ContinueOnError)
	got.Bind(fs)
	g.Expect(fs.Parse(cfg.Args())).To(Succeed())
	g.Expect(got).To(Equal(cfg))
	for _, path := range []string{"", "ns", "ns/cache", "ns/cache/", "/ns/cache", "ns//b1", "ns/cache/..", "ns/./b1", "ns/cache/b1/x"} {
		bad := cfg
		bad.Path = path
		g.Expect(bad.Validate()).To(MatchError(ContainSubstring("is not <namespace>/<cluster>/<backup>")), "%q", path)
		g.Expect(backupjob.Delete(context.Background(), bad)).To(MatchError(backupjob.ErrInvalid), "%q", path)
	}
}

// The restore's user is checked before anything is read: a user needs a
// password file, and a name is bounded and holds no space, control
// character or anything else a log or Redis would read otherwise.
func TestRestoreUsernameIsChecked(t *testing.T) {
	g := NewWithT(t)
	ok := backupjob.RestoreConfig{
		Config: backupjob.Config{Seeds: []string{"a:6379"}, PasswordFile: "/nonexistent/password", Path: "ns/cache/b1",
			Store: backupjob.Store{Dir: "/backup"}, Timeout: time.Hour},
		Username: "restore",
		Expect:   backupjob.Expected{Keys: 1, Shards: 1},
	}
	for _, tc := range []struct {
		name    string
		edit    func(c *backupjob.RestoreConfig)
		message string
	}{
		{"no password file", func(c *backupjob.RestoreConfig) { c.PasswordFile = "" }, "--redis-username needs --redis-password-file"},
		{"a space", func(c *backupjob.RestoreConfig) { c.Username = "re store" }, "--redis-username must be at most 64 letters"},
		{"a newline", func(c *backupjob.RestoreConfig) { c.Username = "restore\nforged log line" }, "--redis-username must be"},
		{"too long", func(c *backupjob.RestoreConfig) { c.Username = strings.Repeat("u", 65) }, "--redis-username must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := ok
			tc.edit(&c)
			res := backupjob.Restore(context.Background(), c, slog.New(slog.DiscardHandler))
			g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreInvalid))
			g.Expect(res.Message).To(ContainSubstring(tc.message))
		})
	}
	// The longest name passes the check, and the run goes on to read the
	// password file.
	ok.Username = strings.Repeat("u", 64)
	res := backupjob.Restore(context.Background(), ok, slog.New(slog.DiscardHandler))
	g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreInvalid))
	g.Expect(res.Message).To(ContainSubstring("/nonexistent/password"))
}
