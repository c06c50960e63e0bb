package redisadmin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redissnapshot"
)

// backupFixture is two shards of a master and a replica, with keys and
// the backup user on every node.
func backupFixture(t *testing.T) *fixture {
	g := NewWithT(t)
	f := newFixture(t, 4)
	converge(t, f.admin(Options{}), withReplicas)
	f.expectHealthy(g, f.names...)
	f.expectReplicationUp(g, "node-1", "node-3")
	redistest.WriteKeys(g, f.cluster(f.names...))
	want := f.access
	want.BackupPassword = "backup password"
	f.changeAccess(g, want, ReasonBackupUserCreated)
	return f
}

// The backup user may run exactly what BackupSources and a snapshot send,
// as the node itself says (ACL DRYRUN), and nothing that reads a key,
// writes, reads a setting or changes a user.
func TestBackupUserMayOnlyTakeSnapshots(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := backupFixture(t)
	ctx := context.Background()
	admin := f.servers["node-1"].Client()
	dryRun := func(cmd ...any) string {
		v, err := admin.Do(ctx, append([]any{"ACL", "DRYRUN", BackupUser}, cmd...)...).Result()
		g.Expect(err).NotTo(HaveOccurred(), "%v", cmd)
		return v.(string)
	}
	for _, cmd := range [][]any{{"PING"}, {"INFO", "replication"}, {"CLUSTER", "NODES"}, {"REPLCONF", "capa", "eof", "capa", "psync2"}, {"PSYNC", "?", "-1"}, {"SYNC"}} {
		g.Expect(dryRun(cmd...)).To(Equal("OK"), "%v", cmd)
	}
	for _, cmd := range [][]any{{"GET", "key:1"}, {"SET", "x", "1"}, {"DEL", "key:1"}, {"KEYS", "*"}, {"SCAN", "0"}, {"DUMP", "key:1"},
		{"FLUSHALL"}, {"CONFIG", "GET", "masterauth"}, {"CONFIG", "SET", "maxmemory", "1"}, {"ACL", "SETUSER", BackupUser, "+@all"},
		{"ACL", "LIST"}, {"CLUSTER", "RESET"}, {"CLUSTER", "FAILOVER"}, {"CLUSTER", "SETSLOT", "0", "STABLE"}, {"REPLICAOF", "NO", "ONE"},
		{"MIGRATE", "127.0.0.1", "1", "k", "0", "1"}, {"SHUTDOWN"}, {"DEBUG", "SLEEP", "0"}, {"MONITOR"}, {"SUBSCRIBE", "c"}, {"BGSAVE"}} {
		g.Expect(dryRun(cmd...)).To(ContainSubstring("no permissions"), "%v", cmd)
	}
	g.Expect(f.access.ConfigFile()).To(ContainSubstring("user backup reset on #" + Hash("backup password") + " resetkeys"))

	// A real snapshot as that user, from a replica.
	var rdb bytes.Buffer
	res, err := redissnapshot.Take(ctx, f.servers["node-1"].Addr(), &rdb, redissnapshot.Options{Username: BackupUser, Password: "backup password"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Bytes).To(BeNumerically(">", 0))
	g.Expect(rdb.String()).To(HavePrefix("REDIS"))

	// Widened, it is reset; without a password, it goes.
	g.Expect(admin.Do(ctx, "ACL", "SETUSER", BackupUser, "+get", "~*").Err()).To(Succeed())
	g.Expect(f.reconcileAccess(g, f.access).Actions).To(ConsistOf(HaveField("Reason", ReasonBackupUserReset)))
	g.Expect(dryRun("GET", "key:1")).To(ContainSubstring("no permissions"))
	without := f.access
	without.BackupPassword = ""
	g.Expect(f.reconcileAccess(g, without).Actions).To(HaveEach(HaveField("Reason", ReasonBackupUserDeleted)))
	g.Expect(strings.Contains(without.ConfigFile(), "user backup")).To(BeFalse())
}

// BackupSources finds each master's slots, its in-sync replica first,
// asking the first seed that answers; a cluster that does not serve every
// slot is refused.
func TestBackupSourcesPutReplicasFirst(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := backupFixture(t)
	ctx := context.Background()
	opts := BackupSourceOptions{Password: "backup password"}
	seeds := []string{redistest.RefusedAddr(t), f.servers["node-3"].Addr()}
	byAddr := map[string]string{}
	for name, s := range f.servers {
		byAddr[s.Addr()] = name
	}
	// Until gossip tells node-3 of node-1's role, node-0's shard has only
	// its master.
	g.Eventually(func(g Gomega) {
		shards, err := BackupSources(ctx, seeds, opts)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(shards).To(HaveLen(2))
		total := 0
		for _, sh := range shards {
			for _, r := range sh.Slots {
				total += r.To - r.From + 1
			}
		}
		g.Expect(total).To(Equal(NumSlots))
		g.Expect(shards[0].Slots[0].From).To(Equal(0), "sorted by first slot")
		var got [][]string
		for _, sh := range shards {
			var names []string
			for _, a := range sh.Nodes {
				names = append(names, byAddr[a])
			}
			got = append(got, names)
		}
		g.Expect(got).To(ConsistOf([]string{"node-1", "node-0"}, []string{"node-3", "node-2"}))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	_, err := BackupSources(ctx, seeds, BackupSourceOptions{Password: "wrong"})
	g.Expect(err).To(MatchError(ContainSubstring("WRONGPASS")))

	// A slot without a master: refused.
	g.Expect(f.servers["node-0"].Client().Do(ctx, "CLUSTER", "DELSLOTS", "0").Err()).To(Succeed())
	for _, n := range f.names {
		_ = f.servers[n].Client().Do(ctx, "CLUSTER", "DELSLOTS", "0").Err()
	}
	_, err = BackupSources(ctx, []string{f.servers["node-0"].Addr()}, opts)
	g.Expect(err).To(MatchError(ContainSubstring("serve 16383 of the 16384 slots")))
}
