//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/hack/realnode"
	"github.com/multi-operator/multi-operator/pkg/objectstore"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
	"github.com/multi-operator/multi-operator/test/framework/s3server"
)

// backupPrefix is the folder of the store the e2e backups go below.
const backupPrefix = "e2e"

// startBackupStore runs an S3-compatible store over TLS on the real node's
// address, which the backup Jobs' pods reach across the node's bridge, and
// gives the namespace what a team would apply for it: the credentials
// Secret and the CA ConfigMap, both labelled for the operator. It returns
// the store and the destination's JSON for a RedisClusterBackup.
func startBackupStore(t *testing.T, ns, credentials string) (*s3server.Server, string) {
	t.Helper()
	store := s3server.Start(t, s3server.Options{TLS: true, Host: realnode.NodeIP, Bucket: "redis-backups"})
	labels := fmt.Sprintf(`{%q:%q}`, ownership.LabelWatch, ownership.WatchValue)
	applyJSON(t, fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":%q,"namespace":%q,"labels":%s},"stringData":{"accessKeyID":%q,"secretAccessKey":%q}}`,
		credentials, ns, labels, store.AccessKey, store.SecretKey))
	ca, err := json.Marshal(string(store.CA))
	if err != nil {
		t.Fatal(err)
	}
	applyJSON(t, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"labels":%s},"data":{"ca.crt":%s}}`,
		credentials+"-ca", ns, labels, ca))
	destination := fmt.Sprintf(`{"s3":{"endpoint":"https://%s","bucket":%q,"prefix":%q,"region":%q,"credentialsSecret":%q,"caBundle":{"configMapKeyRef":{"name":%q,"key":"ca.crt"}}}}`,
		store.Endpoint, store.Bucket, backupPrefix, s3server.Region, credentials, credentials+"-ca")
	return store, destination
}

// applyBackup applies a RedisClusterBackup of cluster to destination.
func applyBackup(t *testing.T, ns, name, cluster, destination string) {
	t.Helper()
	applyJSON(t, fmt.Sprintf(`{"apiVersion":"cache.example.com/v1","kind":"RedisClusterBackup","metadata":{"name":%q,"namespace":%q},"spec":{"clusterName":%q,"destination":%s}}`,
		name, ns, cluster, destination))
}

// backupOutcome waits until the backup is Complete or Failed and returns
// its phase and its Ready condition's reason.
func backupOutcome(t *testing.T, ns, name string, within time.Duration) (phase, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func() string {
		phase, reason = backupState(ns, name)
		return phase
	}, within, time.Second).Should(BeElementOf(string(cachev1.BackupComplete), string(cachev1.BackupFailed)), "backup %s/%s finished", ns, name)
	return phase, reason
}

// backupState is the backup's phase and its Ready condition's reason.
func backupState(ns, name string) (phase, reason string) {
	out, _ := run("get", "redisclusterbackup", "-n", ns, name, "-o", `jsonpath={.status.phase} {.status.conditions[?(@.type=="Ready")].reason}`)
	phase, reason, _ = strings.Cut(strings.TrimSpace(out), " ")
	return phase, reason
}

// storedManifest reads a backup's manifest from the store, as a restore
// would, and checks that every shard file it names is stored, whole.
func storedManifest(t *testing.T, store *s3server.Server, ns, cluster, backup string) *redisbackup.Manifest {
	t.Helper()
	g := NewWithT(t)
	s, err := objectstore.New(objectstore.Config{
		Endpoint: store.Endpoint, Bucket: store.Bucket, Prefix: path.Join(backupPrefix, ns, cluster, backup), Region: s3server.Region,
		AccessKey: store.AccessKey, SecretKey: store.SecretKey, CABundle: store.CA,
	})
	g.Expect(err).NotTo(HaveOccurred())
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, _, err := s.Open(ctx, redisbackup.ManifestName)
	g.Expect(err).NotTo(HaveOccurred(), "the manifest is stored")
	var m redisbackup.Manifest
	g.Expect(json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&m)).To(Succeed())
	_ = r.Close()
	for _, sh := range m.Shards {
		f, _, err := s.Open(ctx, path.Base(sh.File.Name))
		g.Expect(err).NotTo(HaveOccurred(), "shard file %s is stored", sh.File.Name)
		// Reading to the end checks the recorded size and SHA-256.
		_, err = io.Copy(io.Discard, f)
		g.Expect(err).NotTo(HaveOccurred(), "shard file %s is whole", sh.File.Name)
		_ = f.Close()
	}
	return &m
}

// TestRedisBackupOnTheRealNode backs up a RedisCluster holding 10,000 keys
// (a third with a time to live) to an S3-compatible store over TLS, from a
// Job on the real node, and checks what the store holds. Then the faults a
// backup meets: a master killed while the Job runs, and the store frozen
// mid-backup and then killed. A backup is Complete only with every key's
// file stored whole, else Failed with the reason, and the cluster serves
// every key afterwards. Last, a schedule's backup restored into a new
// cluster of another size, after the first one was deleted: every key and
// time to live, through the new cluster's client Service.
func TestRedisBackupOnTheRealNode(t *testing.T) {
	requireRedisNode(t)
	t.Parallel()
	g := NewWithT(t)
	ns := namespace(t)
	const cluster, keys = "seed", 10000
	store, destination := startBackupStore(t, ns, "backup-store")
	applyRedisCluster(t, ns, cluster, 3)
	c := redisClient(t, ns, cluster)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < keys; i++ {
		ttl := time.Duration(0)
		if i%3 == 0 {
			ttl = 24 * time.Hour
		}
		pipe.Set(ctx, fmt.Sprintf("k:%d", i), fmt.Sprintf("v:%d", i), ttl)
		if i%1000 == 999 {
			_, err := pipe.Exec(ctx)
			g.Expect(err).NotTo(HaveOccurred())
		}
	}
	expectEveryKey := func() {
		t.Helper()
		for i := 0; i < keys; i += 97 {
			g.Eventually(func() (string, error) { return c.Get(ctx, fmt.Sprintf("k:%d", i)).Result() }).Should(Equal(fmt.Sprintf("v:%d", i)))
		}
	}

	t.Run("a backup stores every shard's snapshot, whole", func(t *testing.T) {
		g := NewWithT(t)
		applyBackup(t, ns, "first", cluster, destination)
		phase, reason := backupOutcome(t, ns, "first", 3*time.Minute)
		g.Expect(phase + " " + reason).To(Equal(string(cachev1.BackupComplete) + " " + cachev1.ReasonBackupComplete))
		g.Expect(kubectl(t, "get", "redisclusterbackup", "-n", ns, "first", "-o", "jsonpath={.status.totals.keys}")).To(Equal(fmt.Sprint(keys)))
		g.Expect(kubectl(t, "get", "redisclusterbackup", "-n", ns, "first", "-o", "jsonpath={.status.location}")).
			To(Equal(fmt.Sprintf("s3://%s/%s/%s/%s/first/", store.Bucket, backupPrefix, ns, cluster)))
		m := storedManifest(t, store, ns, cluster, "first")
		g.Expect(m.Keys()).To(BeEquivalentTo(keys))
		g.Expect(m.Shards).To(HaveLen(3))
		// No secret of the store reaches the Job's spec or the events.
		g.Expect(kubectl(t, "get", "jobs", "-n", ns, "-o", "yaml")).NotTo(ContainSubstring(store.SecretKey))
		g.Expect(kubectl(t, "events", "-n", ns)).NotTo(ContainSubstring(store.SecretKey))
	})

	t.Run("a master killed while the backup runs", func(t *testing.T) {
		g := NewWithT(t)
		pod := redisMasters(t, ns, cluster)[0]
		master := kubectl(t, "get", "pod", "-n", ns, pod, "-o", "jsonpath={.status.podIP}")
		// Frozen first, so that the Job meets it mid-backup, then killed:
		// its container restarts from its volume.
		signalRedis(t, master, syscall.SIGSTOP)
		applyBackup(t, ns, "master-killed", cluster, destination)
		g.Eventually(func() string { p, _ := backupState(ns, "master-killed"); return p }, time.Minute, time.Second).Should(Equal(string(cachev1.BackupRunning)))
		time.Sleep(2 * time.Second)
		signalRedis(t, master, syscall.SIGKILL)
		phase, reason := backupOutcome(t, ns, "master-killed", 4*time.Minute)
		job := kubectl(t, "get", "redisclusterbackup", "-n", ns, "master-killed", "-o", "jsonpath={.status.jobName}")
		t.Logf("the backup ended %s (%s); its Job's failed attempts: %q", phase, reason, kubectl(t, "get", "job", "-n", ns, job, "-o", "jsonpath={.status.failed}"))
		if phase == string(cachev1.BackupComplete) {
			// The Job's second attempt found the cluster whole again.
			g.Expect(storedManifest(t, store, ns, cluster, "master-killed").Keys()).To(BeEquivalentTo(keys))
		} else {
			g.Expect(reason).To(BeElementOf(cachev1.ReasonSnapshotFailed, cachev1.ReasonClusterUnavailable, cachev1.ReasonClusterChanged, cachev1.ReasonBackupTimedOut))
			g.Expect(kubectl(t, "events", "-n", ns, "--for", "redisclusterbackup/master-killed", "--types", "Warning")).To(ContainSubstring(reason))
		}
		expectRedisReady(t, ns, cluster, 3)
		expectEveryKey()
	})

	t.Run("the store frozen mid-backup, then stopped", func(t *testing.T) {
		g := NewWithT(t)
		down, downDestination := startBackupStore(t, ns, "frozen-store")
		g.Expect(down.Signal(syscall.SIGSTOP)).To(Succeed())
		applyBackup(t, ns, "store-down", cluster, downDestination)
		g.Eventually(func() string { p, _ := backupState(ns, "store-down"); return p }, time.Minute, time.Second).Should(Equal(string(cachev1.BackupRunning)))
		time.Sleep(2 * time.Second)
		down.Stop()
		phase, reason := backupOutcome(t, ns, "store-down", 4*time.Minute)
		g.Expect(phase + " " + reason).To(Equal(string(cachev1.BackupFailed) + " " + cachev1.ReasonStoreFailed))
		g.Expect(kubectl(t, "events", "-n", ns, "--for", "redisclusterbackup/store-down", "--types", "Warning")).To(ContainSubstring(cachev1.ReasonStoreFailed))
		g.Expect(kubectl(t, "get", "redisclusterbackup", "-n", ns, "store-down", "-o", "jsonpath={.status.totals}")).To(BeEmpty(), "a failed backup claims no keys")
		expectEveryKey()
	})
	t.Run("a scheduled backup restored into a new cluster of another size", func(t *testing.T) {
		g := NewWithT(t)
		// Every minute; retention keeps the last one.
		applyJSON(t, fmt.Sprintf(`{"apiVersion":"cache.example.com/v1","kind":"RedisClusterBackupSchedule","metadata":{"name":"minutely","namespace":%q},"spec":{"clusterName":%q,"schedule":"* * * * *","retention":{"keepLast":1},"destination":%s}}`,
			ns, cluster, destination))
		var scheduled string
		g.Eventually(func() string {
			out, _ := run("get", "redisclusterbackup", "-n", ns, "-l", cachev1.LabelBackupSchedule+"=minutely", "-o",
				`jsonpath={range .items[?(@.status.phase=="Complete")]}{.metadata.name}{" "}{end}`)
			fields := strings.Fields(out)
			if len(fields) == 0 {
				return ""
			}
			scheduled = fields[len(fields)-1]
			return scheduled
		}, 3*time.Minute, time.Second).ShouldNot(BeEmpty(), "the schedule's first tick made a complete backup")
		kubectl(t, "patch", "redisclusterbackupschedule", "-n", ns, "minutely", "--type=merge", "-p", `{"spec":{"suspend":true}}`)

		// The team loses the cluster, and brings it back at another size.
		kubectl(t, "delete", "rediscluster", "-n", ns, cluster, "--wait=true")
		const restored = "restored"
		// From the schedule's newest Complete backup, as a team restores
		// after losing a cluster.
		applyJSON(t, fmt.Sprintf(`{"apiVersion":"cache.example.com/v1","kind":"RedisCluster","metadata":{"name":%q,"namespace":%q},"spec":{"size":2,"storage":{"size":"64Mi"},"restoreFrom":{"scheduleName":"minutely"}}}`,
			restored, ns))
		expectRedisReady(t, ns, restored, 2)
		g.Expect(kubectl(t, "get", "rediscluster", "-n", ns, restored, "-o", "jsonpath={.status.restore.phase}")).To(Equal("Complete"))
		complete := strings.Fields(kubectl(t, "get", "redisclusterbackup", "-n", ns, "-l", cachev1.LabelBackupSchedule+"=minutely",
			"--sort-by=.metadata.creationTimestamp", "-o", `jsonpath={range .items[?(@.status.phase=="Complete")]}{.metadata.name}{" "}{end}`))
		g.Expect(complete).NotTo(BeEmpty())
		g.Expect(kubectl(t, "get", "rediscluster", "-n", ns, restored, "-o", "jsonpath={.status.restore.backupName}")).
			To(Equal(complete[len(complete)-1]), "the restore chose the schedule's newest complete backup")
		// Once the restore is over, its password is gone.
		g.Eventually(func() (string, error) {
			return run("get", "secret", "-n", ns, restored+"-restore", "-o", "jsonpath={.data}")
		}, time.Minute, time.Second).Should(BeEmpty())
		rc := redisClient(t, ns, restored)
		n := 0
		for i := 0; i < keys; i++ {
			k := fmt.Sprintf("k:%d", i)
			g.Expect(rc.Get(ctx, k).Result()).To(Equal(fmt.Sprintf("v:%d", i)), "key %s", k)
			ttl, err := rc.PTTL(ctx, k).Result()
			g.Expect(err).NotTo(HaveOccurred())
			if i%3 == 0 {
				g.Expect(ttl).To(BeNumerically(">", 0), "%s keeps its time to live", k)
			} else {
				g.Expect(ttl).To(Equal(time.Duration(-1)), "%s has none", k)
			}
			n++
		}
		g.Expect(n).To(Equal(keys))
		size, err := rc.DBSize(ctx).Result()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(size).To(BeEquivalentTo(keys), "nothing but the backup's keys")
	})
}
