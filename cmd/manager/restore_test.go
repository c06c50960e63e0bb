package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/filecrypt"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

// restore runs `manager restore` and returns its exit code and result.
func restore(g Gomega, secrets []string, args ...string) (int, backupreport.Result) {
	code, res, _ := runJobCommand(g, runRestore, args, secrets...)
	return code, res
}

// What `manager backup` stored in an object store over TLS, `manager
// restore` loads into a cluster of another number of masters that has a
// password: every key with its time to live, reported in the termination
// message. A folder without a backup fails with RestoreFailed.
func TestRestoreSubcommandFromAnObjectStore(t *testing.T) {
	g := NewWithT(t)
	b := startBackupCluster(t)
	srv := s3server.Start(t, s3server.Options{TLS: true})
	s3 := storeArgs(t, g, srv)
	code, res := b.backup(g, s3...)
	g.Expect(code).To(Equal(0), "%+v", res)

	const password = "target password"
	target := backuptest.StartWith(t, 5, redistest.Options{Password: password})
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "password"), []byte(password), 0o600)).To(Succeed())
	args := append([]string{"--seeds=" + target.Servers[0].Addr(), "--client-port=0", "--redis-password-file=" + filepath.Join(dir, "password"),
		"--termination-log=" + filepath.Join(dir, "termination-log")}, s3...)
	secrets := []string{password, srv.SecretKey}

	code, res = restore(g, secrets, append(args, "--path=tenant-a/cache/nightly")...)
	g.Expect(code).To(Equal(0), "%+v", res)
	g.Expect(res.Complete).To(BeTrue())
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))
	b.keys.Expect(g, target.Client)
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
	args := []string{"--seeds=" + target.Servers[0].Addr(), "--client-port=0", "--dir=" + root, "--path=tenant-a/cache/nightly"}
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
	b := startBackupCluster(t)
	root := t.TempDir()
	code, res := b.backup(g, "--dir="+root)
	g.Expect(code).To(Equal(0), "%+v", res)

	cert := redistest.NewCA(t).Issue(t)
	target := backuptest.StartWith(t, 2, redistest.Options{TLS: &cert})
	ca := filepath.Join(t.TempDir(), "ca.crt")
	g.Expect(os.WriteFile(ca, cert.CA, 0o600)).To(Succeed())
	code, res = restore(g, nil, "--seeds="+target.Servers[1].Addr(), "--redis-ca-file="+ca, "--dir="+root, "--path=tenant-a/cache/nightly")
	g.Expect(code).To(Equal(0), "%+v", res)
	g.Expect(res.Keys).To(Equal(int64(b.keys.N)))
	b.keys.Expect(g, target.Client)

	code, res = restore(g, nil, "--dir="+root, "--path=tenant-a/cache/nightly")
	g.Expect(code).To(Equal(2))
	g.Expect(res.Reason).To(Equal(cachev1.ReasonRestoreInvalid))
	g.Expect(res.Message).To(ContainSubstring("--seeds is required"))
}
