package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/filecrypt"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

// restore runs `manager restore` and returns its exit code and result.
func restore(g Gomega, secrets []string, args ...string) (int, backupreport.Result) {
	code, res, _ := runJobCommand(g, runRestore, args, secrets...)
	return code, res
}

// expectArgs are the flags that hold a restore to what the backup's result
// said, as the controller passes them from the backup's status.
func expectArgs(backup backupreport.Result) []string {
	args := []string{fmt.Sprintf("--expect-keys=%d", backup.Keys), fmt.Sprintf("--expect-shards=%d", backup.Shards)}
	for _, f := range backup.Files {
		args = append(args, "--expect-file="+f.Name+":"+f.SHA256)
	}
	return args
}

// What `manager backup` stored in an object store over TLS, `manager
// restore` loads into a cluster of another number of masters that has a
// password, as the restore user with its own password, as a RedisCluster's
// restore Job does: every key with its time to live, reported in the
// termination message, and no node denied the user a command it sent. A
// folder without a backup fails with RestoreFailed.
func TestRestoreSubcommandFromAnObjectStore(t *testing.T) {
	// Mostly waiting for its own SeaweedFS to take a first write.
	t.Parallel()
	g := NewWithT(t)
	b := startBackupCluster(t)
	srv := s3server.Start(t, s3server.Options{TLS: true})
	s3 := storeArgs(t, g, srv)
	code, res := b.backup(g, s3...)
	g.Expect(code).To(Equal(0), "%+v", res)
	s3 = append(s3, expectArgs(res)...)

	const password, restorePassword = "target password", "restore password"
	target := backuptest.StartWith(t, 5, redistest.Options{Password: password})
	target.AddRestoreUser(g, restorePassword)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "password"), []byte(restorePassword), 0o600)).To(Succeed())
	args := append([]string{"--seeds=" + target.Servers[0].Addr(), "--client-port=0", "--redis-username=" + redisadmin.RestoreUser,
		"--redis-password-file=" + filepath.Join(dir, "password"), "--termination-log=" + filepath.Join(dir, "termination-log")}, s3...)
	secrets := []string{password, restorePassword, srv.SecretKey}

	code, res = restore(g, secrets, append(args, "--path=tenant-a/cache/nightly")...)
	g.Expect(code).To(Equal(0), "%+v", res)
	g.Expect(res.Complete).To(BeTrue())
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))
	b.keys.Expect(g, target.Client)
	for _, s := range target.Servers {
		log, err := s.Client().Do(context.Background(), "ACL", "LOG").Slice()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(log).To(BeEmpty(), "%s denied the restore user nothing", s.Addr())
	}
	msg, err := os.ReadFile(filepath.Join(dir, "termination-log"))
	g.Expect(err).NotTo(HaveOccurred())
	fromLog, err := backupreport.Decode(msg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fromLog).To(Equal(res))

	code, res = restore(g, secrets, append(args, "--path=tenant-a/cache/none")...)
	g.Expect(code).To(Equal(1))
	g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreFailed))
	g.Expect(res.Message).To(ContainSubstring("manifest"))
}

// An encrypted backup restores with its key as a file, and not without it.
func TestRestoreSubcommandEncrypted(t *testing.T) {
	g := NewWithT(t)
	b := startBackupCluster(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	g.Expect(os.WriteFile(keyFile, bytes.Repeat([]byte{9}, filecrypt.KeySize), 0o600)).To(Succeed())
	root := t.TempDir()
	code, res := b.backup(g, "--dir="+root, "--encryption-key-file="+keyFile)
	g.Expect(code).To(Equal(0), "%+v", res)

	target := backuptest.Start(t, 2)
	args := append([]string{"--seeds=" + target.Servers[0].Addr(), "--client-port=0", "--dir=" + root, "--path=tenant-a/cache/nightly"}, expectArgs(res)...)
	code, res = restore(g, nil, args...)
	g.Expect(code).To(Equal(1))
	g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreFailed))
	g.Expect(res.Message).To(ContainSubstring("encrypted"))
	code, res = restore(g, nil, append(args, "--encryption-key-file="+keyFile)...)
	g.Expect(code).To(Equal(0), "%+v", res)
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))
	b.keys.Expect(g, target.Client)
}

// A backup on a volume restores into a cluster that speaks TLS and has no
// password, and bad flags fail with RestoreInvalid and exit 2, which fails
// the Job at once.
func TestRestoreSubcommandFromADirectory(t *testing.T) {
	g := NewWithT(t)
	b, root, res := backedUpToDir(t, g)
	expect := expectArgs(res)

	cert := redistest.NewCA(t).Issue(t)
	target := backuptest.StartWith(t, 2, redistest.Options{TLS: &cert})
	ca := filepath.Join(t.TempDir(), "ca.crt")
	g.Expect(os.WriteFile(ca, cert.CA, 0o600)).To(Succeed())
	code, res := restore(g, nil, append([]string{"--seeds=" + target.Servers[1].Addr(), "--redis-ca-file=" + ca, "--dir=" + root, "--path=tenant-a/cache/nightly"}, expect...)...)
	g.Expect(code).To(Equal(0), "%+v", res)
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))
	b.keys.Expect(g, target.Client)

	code, res = restore(g, nil, append([]string{"--dir=" + root, "--path=tenant-a/cache/nightly"}, expect...)...)
	g.Expect(code).To(Equal(2))
	g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreInvalid))
	g.Expect(res.Message).To(ContainSubstring("--seeds is required"))
	// Without what the backup's status recorded, nothing is restored.
	code, res = restore(g, nil, "--seeds="+target.Servers[1].Addr(), "--redis-ca-file="+ca, "--dir="+root, "--path=tenant-a/cache/nightly")
	g.Expect(code).To(Equal(2))
	g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreInvalid))
	g.Expect(res.Message).To(And(ContainSubstring("--expect-keys is required"), ContainSubstring("--expect-shards is required")))
}

// A manifest rewritten in the store after the backup, to fewer shards
// (each remaining file still matching its record), or to another file's
// checksum, is refused before a key is written: the restore trusts what
// the backup's status recorded, not the store.
func TestRestoreSubcommandRefusesATamperedManifest(t *testing.T) {
	g := NewWithT(t)
	b, root, backup := backedUpToDir(t, g)
	g.Expect(backup.Files).To(HaveLen(3))
	manifestFile := filepath.Join(root, "tenant-a/cache/nightly", redisbackup.ManifestName)
	original, err := os.ReadFile(manifestFile)
	g.Expect(err).NotTo(HaveOccurred())

	target := backuptest.Start(t, 2)
	args := append([]string{"--seeds=" + target.Servers[0].Addr(), "--client-port=0", "--dir=" + root, "--path=tenant-a/cache/nightly"}, expectArgs(backup)...)
	for _, tc := range []struct {
		name    string
		tamper  func(m *redisbackup.Manifest)
		message string
	}{
		{name: "a shard dropped", tamper: func(m *redisbackup.Manifest) { m.Shards = m.Shards[:2] },
			message: "it lists 2 shard files, the status 3"},
		{name: "a file twice, the counts kept", tamper: func(m *redisbackup.Manifest) {
			// The shard count and the total of keys are kept.
			k0, k1 := m.Shards[0].Keys, m.Shards[1].Keys
			m.Shards[1].File, m.Shards[1].Keys, m.Shards[0].Keys = m.Shards[0].File, k0, k1
		}, message: "its shard file 1 is shard-000.rdb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var m redisbackup.Manifest
			g.Expect(json.Unmarshal(original, &m)).To(Succeed())
			tc.tamper(&m)
			body, err := json.Marshal(m)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(os.WriteFile(manifestFile, body, 0o600)).To(Succeed())
			code, res := restore(g, nil, args...)
			g.Expect(code).To(Equal(1), "%+v", res)
			g.Expect(res.Complete).To(BeFalse())
			g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreManifestMismatch))
			g.Expect(res.Message).To(And(ContainSubstring("disagrees with its RedisClusterBackup's status"), ContainSubstring(tc.message)))
			g.Expect(target.Client.DBSize(context.Background()).Val()).To(BeZero(), "no key written")
		})
	}
	// The manifest as the backup wrote it restores.
	g.Expect(os.WriteFile(manifestFile, original, 0o600)).To(Succeed())
	code, res := restore(g, nil, args...)
	g.Expect(code).To(Equal(0), "%+v", res)
	b.keys.Expect(g, target.Client)
}
