//go:build bench

package benchredis

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/objectstore"
	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
	"github.com/multi-operator/multi-operator/pkg/redisrestore"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

var (
	restoreBatchBytes = flag.Int("restore-batch-bytes", 0, "redisrestore Options.BatchBytes; 0 for its default")
	restoreParallel   = flag.Int("restore-parallel", 0, "redisrestore Options.Parallel; 0 for its default")
	restoreInFlight   = flag.Int("restore-in-flight", 0, "redisrestore Options.InFlight; 0 for its default")
	backupRounds      = flag.Int("backup-rounds", 3, "backups by each tool, in turns; the table shows each one's median")
	valueBytes        = flag.Int("value-bytes", 0, "TestBackupAndRestore pads each value to this many bytes that do not compress; short values when 0")
	restoreRounds     = flag.Int("restore-rounds", 1, "restores into 3 masters by each tool, in turns, each into a fresh cluster; the table shows each one's median")
)

// TestBackupAndRestore backs up 3 masters holding -keys keys (a third of
// them with a time to live) into a directory, once with pkg/redisbackup
// and once with redis-cli --rdb per shard, and restores the backup into a
// new cluster of 3 masters, once with pkg/redisrestore and once with
// redis-cli --pipe per node (of RESTORE commands made from the same
// files, beforehand). It writes the table beside -out, and fails when a
// restore misses a key.
func TestBackupAndRestore(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	keys := backuptest.Keys{N: *keys, TTLs: *keys / 3, TTL: 24 * time.Hour, ValueBytes: *valueBytes}
	placed := pinSelf(t)
	src := startCluster(t, placed, Before)
	keys.Write(g, src.Client)
	shards := src.Shards(g)

	// Each tool backs up in turns with the other, so that a load on the
	// shared machine meets both alike; the medians are compared.
	// Into a directory, and into an S3-compatible store, where the issue's
	// peer is redis-cli --rdb per shard and then an upload of each file
	// with the client pkg/redisbackup uses.
	ours := redisbackup.Dir{Root: t.TempDir()}
	cliDir := t.TempDir()
	srv, store := s3Store(t)
	oursS3 := redisbackup.ObjectStore{Store: store}
	var m *redisbackup.Manifest
	var oursBackups, cliBackups, oursS3Backups, cliS3Backups, backupCPU, backupS3CPU []time.Duration
	for round := range max(*backupRounds, 1) {
		took, usage := backupOurs(g, ctx, ours, fmt.Sprintf("b%d", round), shards, keys.N, &m)
		oursBackups, backupCPU = append(oursBackups, took), append(backupCPU, usage.CPU)
		took, err := timed(func() error {
			return eachShard(len(shards), func(i int) error {
				return cliSnapshot(ctx, shards[i], filepath.Join(cliDir, fmt.Sprintf("shard-%d.rdb", i)))
			})
		})
		g.Expect(err).NotTo(HaveOccurred())
		cliBackups = append(cliBackups, took)

		var discard *redisbackup.Manifest
		took, usage = backupOurs(g, ctx, oursS3, fmt.Sprintf("b%d", round), shards, keys.N, &discard)
		oursS3Backups, backupS3CPU = append(oursS3Backups, took), append(backupS3CPU, usage.CPU)
		took, err = timed(func() error {
			return eachShard(len(shards), func(i int) error {
				file := filepath.Join(cliDir, fmt.Sprintf("s3-shard-%d.rdb", i))
				if err := cliSnapshot(ctx, shards[i], file); err != nil {
					return err
				}
				return upload(ctx, store, fmt.Sprintf("cli%d/shard-%03d.rdb", round, i), file)
			})
		})
		g.Expect(err).NotTo(HaveOccurred())
		cliS3Backups = append(cliS3Backups, took)
	}
	oursBackup, cliBackup := median(oursBackups), median(cliBackups)
	oursS3Backup, cliS3Backup := median(oursS3Backups), median(cliS3Backups)

	// Restores into fresh clusters of the same layout, so that each
	// node's share of redis-cli --pipe is its shard's file.
	pipes := make([]string, len(shards))
	for i, sh := range m.Shards {
		pipes[i] = filepath.Join(t.TempDir(), "restore.resp")
		g.Expect(writeRestores(ctx, ours, sh.File.Name, pipes[i])).To(Succeed())
	}
	var oursRestores, cliRestores []time.Duration
	var oursUsage Usage
	for range max(*restoreRounds, 1) {
		took, usage := restoreOurs(t, ctx, placed, ours, m, keys, Before)
		oursRestores = append(oursRestores, took)
		oursUsage.CPU = max(oursUsage.CPU, usage.CPU)
		oursUsage.Memory = max(oursUsage.Memory, usage.Memory)
		cliRestores = append(cliRestores, restoreCLI(t, ctx, placed, shards, pipes, keys))
	}
	oursRestore, cliRestore := median(oursRestores), median(cliRestores)

	// Into clusters of another size, which redis-cli --pipe cannot do
	// (each node takes only its own slots' keys): every key is moved to
	// its slot's new owner.
	var otherSizes string
	for _, masters := range []int{After, 2} {
		d, u := restoreOurs(t, ctx, placed, ours, m, keys, masters)
		otherSizes += fmt.Sprintf("| Restore into %d new masters | %s (%s), heap +%.1f MiB | - | - |\n", masters, d.Round(time.Millisecond), rate(keys.N, d), float64(u.Memory)/(1<<20))
	}
	jobs := jobProcesses(t, ctx, placed, src, srv, keys, After)

	var bytes int64
	for _, s := range m.Shards {
		bytes += s.File.Size
	}
	values := "short values"
	if keys.ValueBytes > 0 {
		values = fmt.Sprintf("%d-byte values", keys.ValueBytes)
	}
	table := fmt.Sprintf(`| %d keys, %s (%.1f MiB of RDB files), 3 masters | multi-operator | redis-cli | ours / redis-cli |
|---|---|---|---|
| Backup: every shard's snapshot into files | %s (%s) | %s (%s) | %.2fx |
| Backup into an S3-compatible store (redis-cli: --rdb, then each file uploaded with the same client) | %s (%s) | %s (%s) | %.2fx |
| Restore into 3 new masters | %s (%s) | %s (%s) | %.2fx |
%s
Medians of %d backups of each kind and of %d restore rounds into 3
masters by each tool, in turns; %s. pkg/redisbackup's backup took %s of CPU (median) in
the test process into files, %s into the store; pkg/redisrestore's
restore into 3 masters took at most %s, and the Go heap grew by at most
%.1f MiB meanwhile.

%s`, keys.N, values, float64(bytes)/(1<<20),
		oursBackup.Round(time.Millisecond), rate(keys.N, oursBackup), cliBackup.Round(time.Millisecond), rate(keys.N, cliBackup), cliBackup.Seconds()/oursBackup.Seconds(),
		oursS3Backup.Round(time.Millisecond), rate(keys.N, oursS3Backup), cliS3Backup.Round(time.Millisecond), rate(keys.N, cliS3Backup), cliS3Backup.Seconds()/oursS3Backup.Seconds(),
		oursRestore.Round(time.Millisecond), rate(keys.N, oursRestore), cliRestore.Round(time.Millisecond), rate(keys.N, cliRestore), cliRestore.Seconds()/oursRestore.Seconds(),
		otherSizes, len(oursBackups), len(oursRestores), placed, median(backupCPU).Round(time.Millisecond), median(backupS3CPU).Round(time.Millisecond),
		oursUsage.CPU.Round(time.Millisecond), float64(oursUsage.Memory)/(1<<20), jobs)
	t.Log("\n" + table)
	if *out != "" {
		g.Expect(os.WriteFile(strings.TrimSuffix(*out, ".md")+"-backup.md", []byte(backupReport(table)), 0o644)).To(Succeed())
	}
}

// backupOurs backs up shards into dest under prefix with pkg/redisbackup,
// checks the backup's key count, keeps the first manifest in *m, and
// returns how long the backup took and the CPU it used.
func backupOurs(g Gomega, ctx context.Context, dest redisbackup.Destination, prefix string, shards []redisbackup.Shard, keys int, m **redisbackup.Manifest) (time.Duration, Usage) {
	var took time.Duration
	var got *redisbackup.Manifest
	usage, err := selfUsage(func() error {
		var err error
		took, err = timed(func() error {
			got, err = redisbackup.Run(ctx, dest, prefix, shards, redisbackup.Options{Parallel: len(shards)})
			return err
		})
		return err
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Keys()).To(Equal(int64(keys)))
	if *m == nil {
		*m = got
	}
	return took, usage
}

// cliSnapshot writes shard's snapshot to file with redis-cli --rdb.
func cliSnapshot(ctx context.Context, shard redisbackup.Shard, file string) error {
	host, port, err := net.SplitHostPort(shard.Nodes[0])
	if err != nil {
		return err
	}
	return runQuiet(ctx, nil, "redis-cli", "-h", host, "-p", port, "--rdb", file)
}

// upload stores file as name in store, as pkg/redisbackup's uploads go.
func upload(ctx context.Context, store *objectstore.Store, name, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	_, err = store.Upload(ctx, name, f)
	return err
}

// s3Store starts a real S3-compatible store, SeaweedFS on loopback, for
// the test, and returns it with its prefix bench.
func s3Store(t *testing.T) (*s3server.Server, *objectstore.Store) {
	t.Helper()
	srv := s3server.Start(t, s3server.Options{})
	store, err := objectstore.New(srv.StoreConfig("bench"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return srv, store
}

// maxRestoreHeap bounds how much a restore's Go heap may grow, whatever
// the number of keys: the files are streamed, never held.
const maxRestoreHeap = 256 << 20

// restoreOurs restores the backup m into a fresh cluster of the given
// number of masters with pkg/redisrestore, checks every key and its time
// to live there, and that it holds nothing else, and returns how long the
// restore took and what it used.
func restoreOurs(t *testing.T, ctx context.Context, placed placement, src redisbackup.Dir, m *redisbackup.Manifest, keys backuptest.Keys, masters int) (time.Duration, Usage) {
	t.Helper()
	g := NewWithT(t)
	target := startCluster(t, placed, masters)
	var took time.Duration
	usage, err := selfUsage(func() error {
		var err error
		took, err = timed(func() error {
			_, err := redisrestore.Run(ctx, target.Client, src, m, redisrestore.Options{
				BatchBytes: *restoreBatchBytes, Parallel: *restoreParallel, InFlight: *restoreInFlight,
			})
			return err
		})
		return err
	})
	g.Expect(err).NotTo(HaveOccurred(), "restore into %d masters", masters)
	keys.Expect(g, target.Client)
	expectOnly(g, target.Client, keys.N)
	g.Expect(usage.Memory).To(BeNumerically("<", maxRestoreHeap), "the restore's heap stays bounded")
	return took, usage
}

// restoreCLI loads the RESTORE commands pipes[i] holds into shard i of a
// fresh cluster of the shards' layout with redis-cli --pipe, checks every
// key, and returns how long the loads took.
func restoreCLI(t *testing.T, ctx context.Context, placed placement, shards []redisbackup.Shard, pipes []string, keys backuptest.Keys) time.Duration {
	t.Helper()
	g := NewWithT(t)
	target := startCluster(t, placed, len(shards))
	targetShards := target.Shards(g)
	g.Expect(targetShards).To(HaveLen(len(shards)))
	for i := range shards {
		g.Expect(targetShards[i].Slots).To(Equal(shards[i].Slots), "the same layout")
	}
	took, err := timed(func() error {
		return eachShard(len(shards), func(i int) error {
			host, port, err := net.SplitHostPort(targetShards[i].Nodes[0])
			if err != nil {
				return err
			}
			in, err := os.Open(pipes[i])
			if err != nil {
				return err
			}
			defer func() { _ = in.Close() }()
			return runQuiet(ctx, in, "redis-cli", "-h", host, "-p", port, "--pipe")
		})
	})
	g.Expect(err).NotTo(HaveOccurred())
	keys.Expect(g, target.Client)
	expectOnly(g, target.Client, keys.N)
	return took
}

// median is the middle of ds, or the mean of the two middle ones.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// timed runs op and returns how long it took.
func timed(op func() error) (time.Duration, error) {
	start := time.Now()
	err := op()
	return time.Since(start), err
}

// rate is keys per second, as the table shows it.
func rate(keys int, d time.Duration) string {
	return fmt.Sprintf("%.0f keys/s", float64(keys)/d.Seconds())
}

// eachShard runs op for every shard at once and returns the first error.
func eachShard(n int, op func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = op(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runQuiet runs a command with stdin in, and fails with its output.
func runQuiet(ctx context.Context, in io.Reader, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = in
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// writeRestores writes the RESTORE commands of a backup file, in RESP,
// for redis-cli --pipe.
func writeRestores(ctx context.Context, src redisbackup.Dir, name, to string) error {
	in, err := src.Open(ctx, name)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	f, err := os.Create(to)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = rdb.NewParser(in, rdb.Options{}).Each(func(e rdb.Entry) error {
		k, ok := e.(*rdb.Key)
		if !ok {
			return nil
		}
		args := []string{"RESTORE", string(k.Key), "0", string(k.Payload), "REPLACE"}
		if k.Expires {
			args[2] = strconv.FormatInt(k.ExpireAtMs, 10)
			args = append(args, "ABSTTL")
		}
		// A bufio.Writer keeps its first error for Flush, which is checked.
		_, _ = fmt.Fprintf(w, "*%d\r\n", len(args))
		for _, a := range args {
			_, _ = fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
		}
		return nil
	})
	if err != nil {
		_ = f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// backupReport is the backup results file: how it was measured, and the
// table.
func backupReport(table string) string {
	return fmt.Sprintf(`# Backup and restore benchmark: pkg/redisbackup, pkg/redisrestore and redis-cli

Written by `+"`make bench-redis`"+` (test/benchredis, build tag bench, TestBackupAndRestore)
on %s.

A cluster of 3 redis-server processes on loopback, built by pkg/redisadmin,
holds the keys k:<i>, a third of them with a time to live, with short
values or, with -value-bytes, values of that length that do not compress.

- Backup: pkg/redisbackup takes each shard's snapshot over the replication
  protocol, parses it on the way (key counts, slots) and writes it to a
  directory, the 3 shards at once; redis-cli --rdb takes the same
  snapshots into files, 3 at once. The tools take turns, -backup-rounds
  times each (3 unless given), and the table shows each one's median: a
  load on the shared machine then meets both alike.
- Backup into an S3-compatible store: SeaweedFS on loopback, started by
  the test. pkg/redisbackup streams each snapshot into the store in parts
  and reads each object back; the peer is redis-cli --rdb per shard, then
  the file uploaded with the same client (pkg/objectstore), the 3 shards
  at once.
- Restore: into a new cluster of 3 masters with the same slots.
  pkg/redisrestore streams the files, several at once, and writes
  RESTORE ... ABSTTL in batches on a connection per master while it
  reads the replies; redis-cli --pipe sends the same RESTORE commands,
  written beforehand from the same files (not timed), to each node at
  once, -restore-rounds times each (1 unless given), in turns, each into
  a fresh cluster. The CPU and heap growth are the test process's.
- Placement: with -pin (the default, on 2 or more CPUs) the Redis nodes
  run on the first CPU the test may use and the test process, with what
  it starts (redis-cli, the store), on the others, as a Job on another
  node than the masters would; -pin=false shares every CPU.
- Restore into another size: pkg/redisrestore alone into 5 and into 2
  masters (redis-cli --pipe sends a node only its own slots' keys).
  After every restore each key's value and time to live are read back.

%s`, time.Now().UTC().Format("2006-01-02"), table)
}
