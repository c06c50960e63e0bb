//go:build bench

package benchredis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

// managerBinary is the manager binary that a backup or restore Job runs
// (MANAGER, which make bench-redis sets). Without it, the Jobs' own
// processes are not measured.
var managerBinary = os.Getenv("MANAGER")

// maxJobRSS bounds the peak RSS of `manager backup` and `manager restore`
// whatever the number of keys: they stream the files through buffers of
// fixed sizes (two parts of an upload per shard in flight), so a process
// that held a backup's data besides them would exceed it with the
// 100-byte values of a million keys.
const maxJobRSS = 160 << 20

// jobRun is what one run of a Job's subcommand reported and used.
type jobRun struct {
	took    time.Duration
	cpu     time.Duration
	peakRSS int64
	result  backupreport.Result
}

// runJob runs `manager args...` as a process of its own, as a Job's
// container does, and returns the result it printed and what the process
// used. Its peak RSS is the kernel's high-water mark (VmHWM), read while
// it runs: rusage's ru_maxrss would report the test process's, whose
// memory Go's fork shares with the child until it execs.
func runJob(ctx context.Context, args ...string) (jobRun, error) {
	cmd := exec.CommandContext(ctx, managerBinary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return jobRun{}, err
	}
	peak, err := peakWhile(5*time.Millisecond, func() (int64, bool) { return highWaterRSS(cmd.Process.Pid) }, cmd.Wait)
	run := jobRun{took: time.Since(start), peakRSS: peak}
	if st := cmd.ProcessState; st != nil {
		run.cpu = st.UserTime() + st.SystemTime()
	}
	if err != nil {
		return run, fmt.Errorf("manager %s: %w: %s", args[0], err, lastLines(stderr.String(), 5))
	}
	run.result, err = backupreport.ReadLast(stdout.Bytes())
	return run, err
}

// highWaterRSS is process pid's peak resident set, VmHWM in its
// /proc/<pid>/status, in bytes; false once the process has exited.
func highWaterRSS(pid int) (int64, bool) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kib << 10, err == nil
		}
	}
	return 0, false
}

// lastLines is the end of a process's output, for an error.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// jobArgs are the flags a Job passes for the store srv, below prefix, with
// its credentials as files in dir.
func jobArgs(g Gomega, srv *s3server.Server, prefix, dir string) []string {
	g.Expect(os.WriteFile(filepath.Join(dir, backupjob.AccessKeyIDFile), []byte(srv.AccessKey), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, backupjob.SecretAccessKeyFile), []byte(srv.SecretKey), 0o600)).To(Succeed())
	scheme := "https://"
	args := []string{"--s3-bucket=" + srv.Bucket, "--s3-prefix=" + prefix, "--s3-region=" + s3server.Region, "--s3-credentials-dir=" + dir}
	if srv.TLS {
		g.Expect(os.WriteFile(filepath.Join(dir, "ca.crt"), srv.CA, 0o600)).To(Succeed())
		args = append(args, "--s3-ca-file="+filepath.Join(dir, "ca.crt"))
	} else {
		scheme = "http://"
		args = append(args, "--s3-insecure")
	}
	return append(args, "--s3-endpoint="+scheme+srv.Endpoint)
}

// jobProcesses backs src up into srv with `manager backup`, logged in as
// the backup user, and restores that backup into a fresh cluster of
// masters masters with `manager restore`, as the restore user, each as
// its own process and with the flags the Jobs get. It checks every key,
// that the target holds nothing else, and that neither process's peak RSS
// reached maxJobRSS, and returns the table rows.
func jobProcesses(t *testing.T, ctx context.Context, placed placement, src *backuptest.Cluster, srv *s3server.Server, keys backuptest.Keys, masters int) string {
	t.Helper()
	if managerBinary == "" {
		t.Log("MANAGER is not set: the Jobs' own processes are not measured")
		return ""
	}
	g := NewWithT(t)
	dir := t.TempDir()
	store := jobArgs(g, srv, "jobs", dir)
	const backupPassword, restorePassword = "bench backup password", "bench restore password"
	src.AddBackupUser(g, backupPassword)
	g.Expect(os.WriteFile(filepath.Join(dir, "backup-password"), []byte(backupPassword), 0o600)).To(Succeed())
	backup, err := runJob(ctx, append([]string{"backup", "--seeds=" + src.Servers[0].Addr(), "--client-port=0",
		"--redis-password-file=" + filepath.Join(dir, "backup-password"), "--path=bench/jobs/backup"}, store...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(backup.result.Complete).To(BeTrue(), "%+v", backup.result)
	g.Expect(backup.result.Keys).To(BeEquivalentTo(keys.N))

	target := startCluster(t, placed, masters)
	target.AddRestoreUser(g, restorePassword)
	g.Expect(os.WriteFile(filepath.Join(dir, "restore-password"), []byte(restorePassword), 0o600)).To(Succeed())
	args := append([]string{"restore", "--seeds=" + target.Servers[0].Addr(), "--client-port=0", "--redis-username=" + redisadmin.RestoreUser,
		"--redis-password-file=" + filepath.Join(dir, "restore-password"), "--path=bench/jobs/backup",
		fmt.Sprintf("--expect-keys=%d", backup.result.Keys), fmt.Sprintf("--expect-shards=%d", backup.result.Shards)}, store...)
	for _, f := range backup.result.Files {
		args = append(args, "--expect-file="+f.Name+":"+f.SHA256)
	}
	restore, err := runJob(ctx, args...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(restore.result.Complete).To(BeTrue(), "%+v", restore.result)
	keys.Expect(g, target.Client)
	expectOnly(g, target.Client, keys.N)

	for _, r := range []jobRun{backup, restore} {
		g.Expect(r.peakRSS).To(And(BeNumerically(">", 0), BeNumerically("<", maxJobRSS)), "the Job's process streams the files")
	}
	row := func(what string, r jobRun) string {
		return fmt.Sprintf("| %s | %s (%s) | %s | %.1f MiB |\n", what, r.took.Round(time.Millisecond), rate(keys.N, r.took), r.cpu.Round(time.Millisecond), float64(r.peakRSS)/(1<<20))
	}
	return "| The Jobs' processes (the manager binary) | time | CPU | peak RSS |\n|---|---|---|---|\n" +
		row("`manager backup` into the store, as the backup user", backup) +
		row(fmt.Sprintf("`manager restore` from the store into %d new masters, as the restore user", masters), restore)
}

// expectOnly checks that the cluster holds n keys in all: the restore
// wrote nothing but the backup's.
func expectOnly(g Gomega, c *redis.ClusterClient, n int) {
	ctx := context.Background()
	var total atomic.Int64
	g.Expect(c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		size, err := m.DBSize(ctx).Result()
		if err == nil {
			total.Add(size)
		}
		return err
	})).To(Succeed())
	g.Expect(total.Load()).To(BeEquivalentTo(n), "keys in the cluster, all masters together")
}
