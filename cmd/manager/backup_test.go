package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/filecrypt"
	"github.com/multi-operator/multi-operator/pkg/objectstore"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/pkg/redisrestore"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

const backupPassword = "backup password"

// backupCluster is three real masters with keys and the backup user, and
// the files a backup Job mounts: the password, and a termination log.
type backupCluster struct {
	keys    backuptest.Keys
	cluster *backuptest.Cluster
	dir     string
	args    []string
}

func startBackupCluster(t *testing.T) *backupCluster {
	t.Helper()
	redistest.Require(t)
	g := NewWithT(t)
	c := backuptest.Start(t, 3)
	keys := backuptest.Keys{N: 2000, TTLs: 500, TTL: time.Hour}
	keys.Write(g, c.Client)
	c.AddBackupUser(g, backupPassword)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "password"), []byte(backupPassword), 0o600)).To(Succeed())
	// Each node announces its own port: the test's nodes do not share one.
	args := []string{backupCommand, "--seeds=" + c.Servers[1].Addr(), "--client-port=0",
		"--redis-password-file=" + filepath.Join(dir, "password"), "--path=tenant-a/cache/nightly",
		"--termination-log=" + filepath.Join(dir, "termination-log")}
	return &backupCluster{keys: keys, cluster: c, dir: dir, args: args}
}

// backup runs the subcommand and returns its exit code and the result it
// printed last, which must equal its termination message.
func (b *backupCluster) backup(g Gomega, extra ...string) (int, backupreport.Result) {
	code, res, stdout := runJobCommand(g, runBackup, append(append([]string(nil), b.args[1:]...), extra...), backupPassword)
	msg, err := os.ReadFile(filepath.Join(b.dir, "termination-log"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(msg) + "\n").To(Equal(stdout[strings.LastIndex(strings.TrimSuffix(stdout, "\n"), "\n")+1:]))
	return code, res
}

// backedUpToDir is a backup cluster whose keys `manager backup` stored
// below a directory, which it returns with the backup's result.
func backedUpToDir(t *testing.T, g Gomega) (*backupCluster, string, backupreport.Result) {
	t.Helper()
	b := startBackupCluster(t)
	root := t.TempDir()
	code, res := b.backup(g, "--dir="+root)
	g.Expect(code).To(Equal(0), "%+v", res)
	return b, root, res
}

// runJobCommand runs a Job's subcommand and returns its exit code, the
// result it printed last, and its stdout, in which, as in its logs, no
// secret may appear.
func runJobCommand(g Gomega, run func(context.Context, []string, io.Writer, io.Writer) int, args []string, secrets ...string) (int, backupreport.Result, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	res, err := backupreport.ReadLast(stdout.Bytes())
	g.Expect(err).NotTo(HaveOccurred(), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	for _, s := range secrets {
		g.Expect(stderr.String()).NotTo(ContainSubstring(s))
		g.Expect(stdout.String()).NotTo(ContainSubstring(s))
	}
	return code, res, stdout.String()
}

// storeArgs are the flags of srv's bucket below the prefix redis, with
// its credentials and CA as files, as a Job mounts them.
func storeArgs(t *testing.T, g Gomega, srv *s3server.Server) []string {
	creds := t.TempDir()
	// kubectl create secret --from-file keeps a file's last newline.
	g.Expect(os.WriteFile(filepath.Join(creds, backupjob.AccessKeyIDFile), []byte(srv.AccessKey+"\n"), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(creds, backupjob.SecretAccessKeyFile), []byte(srv.SecretKey+"\n"), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(creds, "ca.crt"), srv.CA, 0o600)).To(Succeed())
	return []string{"--s3-endpoint=https://" + srv.Endpoint, "--s3-bucket=" + srv.Bucket, "--s3-prefix=redis", "--s3-region=" + s3server.Region,
		"--s3-credentials-dir=" + creds, "--s3-ca-file=" + filepath.Join(creds, "ca.crt")}
}

// `manager backup` to a directory stores every shard and the manifest
// below <path>, and says so in its result, file by file.
func TestBackupSubcommandToADirectory(t *testing.T) {
	g := NewWithT(t)
	b, root, res := backedUpToDir(t, g)
	g.Expect(res.Complete).To(BeTrue())
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))
	g.Expect(res.Shards).To(Equal(3))
	g.Expect(res.Files).To(HaveLen(3))
	var m redisbackup.Manifest
	body, err := os.ReadFile(filepath.Join(root, "tenant-a/cache/nightly", redisbackup.ManifestName))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(body, &m)).To(Succeed())
	var bytes int64
	for i, f := range res.Files {
		g.Expect(f.Name).To(Equal(filepath.Base(m.Shards[i].File.Name)))
		g.Expect(f.SHA256).To(Equal(m.Shards[i].File.SHA256))
		g.Expect(f.Slots).To(Equal(backupreport.SlotString(m.Shards[i].Slots)))
		st, err := os.Stat(filepath.Join(root, m.Shards[i].File.Name))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(st.Size()).To(Equal(f.Bytes))
		bytes += f.Bytes
	}
	g.Expect(res.Bytes).To(Equal(bytes))
}

// `manager backup` to an object store over TLS, with the credentials and
// the CA as files, stores what a restore loads back, key for key; with a
// wrong password it fails with the reason and stores nothing.
func TestBackupSubcommandToAnObjectStore(t *testing.T) {
	// Mostly waiting for its own SeaweedFS to take a first write.
	t.Parallel()
	g := NewWithT(t)
	b := startBackupCluster(t)
	srv := s3server.Start(t, s3server.Options{TLS: true})
	s3 := storeArgs(t, g, srv)
	code, res := b.backup(g, s3...)
	g.Expect(code).To(Equal(0), "%+v", res)
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))

	store, err := objectstore.New(srv.StoreConfig("redis"))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(store.Close)
	dest := redisbackup.ObjectStore{Store: store}
	rc, err := dest.Open(context.Background(), "tenant-a/cache/nightly/"+redisbackup.ManifestName)
	g.Expect(err).NotTo(HaveOccurred())
	var m redisbackup.Manifest
	g.Expect(json.NewDecoder(rc).Decode(&m)).To(Succeed())
	_ = rc.Close()
	target := backuptest.Start(t, 2)
	restored, err := redisrestore.Run(context.Background(), target.Client, dest, &m, redisrestore.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(restored.Keys).To(Equal(int64(b.keys.N)))
	b.keys.Expect(g, target.Client)

	// A wrong password: refused before anything is stored.
	g.Expect(os.WriteFile(filepath.Join(b.dir, "password"), []byte("wrong"), 0o600)).To(Succeed())
	code, res = b.backup(g, append(s3, "--path=tenant-a/cache/other")...)
	g.Expect(code).To(Equal(1))
	g.Expect(res.Complete).To(BeFalse())
	g.Expect(res.Reason).To(Equal(cachev1.ReasonClusterUnavailable))
	g.Expect(res.Message).To(ContainSubstring("WRONGPASS"))
	objects, err := store.List(context.Background(), "tenant-a/cache/other/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects).To(BeEmpty())
}

// A store that refuses the credentials fails the backup with StoreFailed,
// and the message holds no secret.
func TestBackupSubcommandStoreRefused(t *testing.T) {
	g := NewWithT(t)
	b := startBackupCluster(t)
	srv := s3server.Start(t, s3server.Options{})
	creds := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(creds, backupjob.AccessKeyIDFile), []byte(srv.AccessKey), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(creds, backupjob.SecretAccessKeyFile), []byte("not-the-secret-key"), 0o600)).To(Succeed())
	code, res := b.backup(g, "--s3-endpoint=http://"+srv.Endpoint, "--s3-insecure", "--s3-bucket="+srv.Bucket,
		"--s3-region="+s3server.Region, "--s3-credentials-dir="+creds)
	g.Expect(code).To(Equal(1))
	g.Expect(res.Reason).To(Equal(cachev1.ReasonStoreFailed), res.Message)
	g.Expect(res.Message).NotTo(ContainSubstring("not-the-secret-key"))
}

// Bad flags say what is wrong, in the result too, without a backup.
func TestBackupSubcommandBadFlags(t *testing.T) {
	g := NewWithT(t)
	var stdout, stderr bytes.Buffer
	g.Expect(run(context.Background(), []string{backupCommand, "--nope"}, &stderr)).To(Equal(2))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--dir=/tmp"}, "--seeds is required"},
		{[]string{"--seeds=a:1", "--redis-password-file=/p", "--path=a/b/c"}, "exactly one of --dir and --s3-endpoint"},
		{[]string{"--seeds=a:1", "--redis-password-file=/nonexistent", "--path=a/b/c", "--dir=/tmp"}, "/nonexistent"},
		{[]string{"--seeds=a:1", "--redis-password-file=/dev/null", "--path=a/b/c", "--s3-endpoint=http://s3:80", "--s3-bucket=b", "--s3-credentials-dir=/c"}, "http:// only with --s3-insecure"},
		{[]string{"--seeds=a:1", "--redis-password-file=/dev/null", "--path=a/b/c", "--dir=/tmp", "--encryption-key-file=/dev/null"}, "a key is 32 bytes"},
	} {
		stdout.Reset()
		g.Expect(runBackup(context.Background(), tc.args, &stdout, &stderr)).To(Equal(2), "%v", tc.args)
		res, err := backupreport.ReadLast(stdout.Bytes())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Reason).To(Equal(cachev1.ReasonBackupInvalid))
		g.Expect(res.Message).To(ContainSubstring(tc.msg))
	}
}

// With an encryption key (as the file a Secret's key becomes), every shard
// file is stored encrypted, the manifest says so, and the files decrypt
// with that key into the snapshots; the key never shows in the output.
func TestBackupSubcommandEncrypted(t *testing.T) {
	g := NewWithT(t)
	b := startBackupCluster(t)
	key := bytes.Repeat([]byte{42}, filecrypt.KeySize)
	keyFile := filepath.Join(b.dir, "key")
	g.Expect(os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600)).To(Succeed())
	root := t.TempDir()
	code, res := b.backup(g, "--dir="+root, "--encryption-key-file="+keyFile)
	g.Expect(code).To(Equal(0), "%+v", res)
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))
	var m redisbackup.Manifest
	body, err := os.ReadFile(filepath.Join(root, "tenant-a/cache/nightly", redisbackup.ManifestName))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(body, &m)).To(Succeed())
	g.Expect(m.Encryption).To(Equal(filecrypt.Scheme))
	for _, sh := range m.Shards {
		f, err := os.Open(filepath.Join(root, sh.File.Name))
		g.Expect(err).NotTo(HaveOccurred())
		r, err := filecrypt.NewReader(f, key)
		g.Expect(err).NotTo(HaveOccurred())
		plain, err := io.ReadAll(r)
		_ = f.Close()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(plain[:5])).To(Equal("REDIS"), "an RDB file once decrypted")
	}
	target := backuptest.Start(t, 2)
	restored, err := redisrestore.Run(context.Background(), target.Client, redisbackup.Dir{Root: root}, &m, redisrestore.Options{DecryptionKey: key})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(restored.Keys).To(Equal(int64(b.keys.N)))
	b.keys.Expect(g, target.Client)
}

// `manager backup-delete` removes one backup's folder, on a volume and in
// an object store, and nothing beside it: not a sibling backup whose name
// starts the same, not another cluster's. Run again, it succeeds; a path
// that is not a backup's folder is refused before anything is touched.
func TestBackupDeleteSubcommand(t *testing.T) {
	// Mostly waiting for its own SeaweedFS to take a first write.
	t.Parallel()
	files := []string{"shard-000.rdb", "shard-001.rdb", redisbackup.ManifestName}
	kept := []string{"tenant-a/cache/nightly-2/shard-000.rdb", "tenant-a/cache/nightly-2/" + redisbackup.ManifestName,
		"tenant-a/other/nightly/shard-000.rdb"}
	deleteArgs := func(extra ...string) []string {
		return append([]string{backupDeleteCommand, "--path=tenant-a/cache/nightly"}, extra...)
	}

	t.Run("volume", func(t *testing.T) {
		g := NewWithT(t)
		root := t.TempDir()
		for _, name := range append(prefixed("tenant-a/cache/nightly/", files), kept...) {
			p := filepath.Join(root, name)
			g.Expect(os.MkdirAll(filepath.Dir(p), 0o750)).To(Succeed())
			g.Expect(os.WriteFile(p, []byte(name), 0o600)).To(Succeed())
		}
		var stderr bytes.Buffer
		for range 2 {
			g.Expect(run(context.Background(), deleteArgs("--dir="+root), &stderr)).To(Equal(0), stderr.String())
			_, err := os.Stat(filepath.Join(root, "tenant-a/cache/nightly"))
			g.Expect(os.IsNotExist(err)).To(BeTrue(), "the backup's folder is gone")
			for _, name := range kept {
				g.Expect(filepath.Join(root, name)).To(BeAnExistingFile())
			}
		}
		for _, path := range []string{"tenant-a/cache", "tenant-a", "tenant-a/cache/../..", "a/b/c/d", ""} {
			g.Expect(run(context.Background(), []string{backupDeleteCommand, "--path=" + path, "--dir=" + root}, &stderr)).To(Equal(2), path)
		}
		for _, name := range kept {
			g.Expect(filepath.Join(root, name)).To(BeAnExistingFile())
		}
	})

	t.Run("object store", func(t *testing.T) {
		g := NewWithT(t)
		srv := s3server.Start(t, s3server.Options{TLS: true})
		creds := t.TempDir()
		g.Expect(os.WriteFile(filepath.Join(creds, backupjob.AccessKeyIDFile), []byte(srv.AccessKey), 0o600)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(creds, backupjob.SecretAccessKeyFile), []byte(srv.SecretKey), 0o600)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(creds, "ca.crt"), srv.CA, 0o600)).To(Succeed())
		store, err := objectstore.New(srv.StoreConfig("redis"))
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(store.Close)
		ctx := context.Background()
		for _, name := range append(prefixed("tenant-a/cache/nightly/", files), kept...) {
			_, err := store.Upload(ctx, name, strings.NewReader(name))
			g.Expect(err).NotTo(HaveOccurred())
		}
		s3 := []string{"--s3-endpoint=https://" + srv.Endpoint, "--s3-bucket=" + srv.Bucket, "--s3-prefix=redis", "--s3-region=" + s3server.Region,
			"--s3-credentials-dir=" + creds, "--s3-ca-file=" + filepath.Join(creds, "ca.crt")}
		var stderr bytes.Buffer
		for range 2 {
			g.Expect(run(ctx, deleteArgs(s3...), &stderr)).To(Equal(0), stderr.String())
			left, err := store.List(ctx, "")
			g.Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, o := range left {
				names = append(names, o.Name)
			}
			g.Expect(names).To(ConsistOf(kept))
		}
		g.Expect(stderr.String()).NotTo(ContainSubstring(srv.SecretKey))

		// Credentials the store refuses fail the run (exit 1, retried by
		// the Job), without the secret in the log.
		g.Expect(os.WriteFile(filepath.Join(creds, backupjob.SecretAccessKeyFile), []byte("not-the-secret-key"), 0o600)).To(Succeed())
		stderr.Reset()
		g.Expect(run(ctx, []string{backupDeleteCommand, "--path=tenant-a/cache/nightly-2"}, &stderr)).To(Equal(2), "no destination")
		stderr.Reset()
		g.Expect(run(ctx, append([]string{backupDeleteCommand, "--path=tenant-a/cache/nightly-2"}, s3...), &stderr)).To(Equal(1), stderr.String())
		g.Expect(stderr.String()).NotTo(ContainSubstring("not-the-secret-key"))
		left, err := store.List(ctx, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(left).To(HaveLen(len(kept)))
	})
}

// prefixed is names below folder.
func prefixed(folder string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = folder + n
	}
	return out
}
