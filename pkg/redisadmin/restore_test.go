package redisadmin

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// The users file has the restore user only while Access gives it a
// password, with its rules.
func TestConfigFileHasTheRestoreUserOnlyWithAPassword(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	without := Access{Passwords: []string{"clients"}, OperatorPassword: "operator", BackupPassword: "backup"}
	g.Expect(without.ConfigFile()).NotTo(ContainSubstring("user " + RestoreUser))
	with := without
	with.RestorePassword = "restore password"
	g.Expect(with.ConfigFile()).To(ContainSubstring("\nuser restore reset on #" + Hash("restore password") + " " + strings.Join(restoreRules, " ") + "\n"))
	g.Expect(with.ConfigFile()).NotTo(ContainSubstring("restore password"), "only the password's hash")
	g.Expect(strings.Replace(with.ConfigFile(), restoreServiceUser.configLine("restore password"), "", 1)).To(Equal(without.ConfigFile()),
		"nothing else changes")
}

// restoreLibrary is a function library a restore loads.
const restoreLibrary = "#!lua name=restored\nredis.register_function('restored_one', function(keys, args) return 1 end)"

// The restore user may run exactly what a restore sends, as the node
// itself says (ACL DRYRUN), and nothing that reads a key, lists keys, runs
// a function, reads a setting or changes a user. A real restore through a
// cluster client of RestoreClusterOptions, as that user, loads keys with
// their expiries and a function library, and no node logs a denied
// command: the rules cover everything the client sends.
func TestRestoreUserMayOnlyRestore(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 2)
	converge(t, f.admin(Options{}), masters(f.names...))
	f.expectHealthy(g, f.names...)
	clients := f.cluster(f.names...)
	redistest.WriteKeys(g, clients)
	ctx := context.Background()

	want := f.access
	want.RestorePassword = "restore password"
	f.changeAccess(g, want, ReasonRestoreUserCreated)
	g.Expect(f.reconcileAccess(g, want).Actions).To(BeEmpty(), "steady")

	admin := f.servers["node-0"].Client()
	dryRun := func(cmd ...any) string {
		v, err := admin.Do(ctx, append([]any{"ACL", "DRYRUN", RestoreUser}, cmd...)...).Result()
		g.Expect(err).NotTo(HaveOccurred(), "%v", cmd)
		return v.(string)
	}
	g.Expect(clients.Set(ctx, "probe", "v", 0).Err()).To(Succeed())
	payload, err := clients.Dump(ctx, "probe").Result()
	g.Expect(err).NotTo(HaveOccurred())
	for _, cmd := range [][]any{{"PING"}, {"HELLO", "2"}, {"CLUSTER", "SLOTS"}, {"COMMAND"}, {"COMMAND", "INFO", "restore"}, {"ASKING"}, {"RESTORE", "k", "0", payload, "REPLACE"},
		{"RESTORE", "k", "99999999999999", payload, "REPLACE", "ABSTTL"}, {"FUNCTION", "LOAD", "REPLACE", restoreLibrary}} {
		g.Expect(dryRun(cmd...)).To(Equal("OK"), "%v", cmd)
	}
	for _, cmd := range [][]any{{"GET", "k"}, {"SET", "k", "1"}, {"DEL", "k"}, {"KEYS", "*"}, {"SCAN", "0"}, {"DUMP", "k"}, {"TTL", "k"},
		{"FLUSHALL"}, {"FLUSHDB"}, {"FCALL", "restored_one", "0"}, {"EVAL", "return 1", "0"}, {"FUNCTION", "DELETE", "restored"},
		{"FUNCTION", "FLUSH"}, {"FUNCTION", "DUMP"}, {"CONFIG", "GET", "masterauth"}, {"CONFIG", "SET", "maxmemory", "1"},
		{"ACL", "SETUSER", RestoreUser, "+@all"}, {"ACL", "LIST"}, {"CLUSTER", "NODES"}, {"CLUSTER", "RESET"}, {"CLUSTER", "FAILOVER"},
		{"MIGRATE", "127.0.0.1", "1", "k", "0", "1"}, {"REPLICAOF", "NO", "ONE"}, {"SHUTDOWN"}, {"MONITOR"}, {"SUBSCRIBE", "c"},
		{"CLIENT", "LIST"}, {"INFO"}, {"DEBUG", "SLEEP", "0"}} {
		g.Expect(dryRun(cmd...)).To(ContainSubstring("no permissions"), "%v", cmd)
	}

	// A restore as that user: the keys' payloads, read as the clients'
	// user, go back after a flush, with expiries, and a library.
	dumps := map[string]string{}
	ttl := map[string]int64{}
	for _, key := range []string{"restore:a", "restore:{b}", "restore:c"} {
		g.Expect(clients.Set(ctx, key, "value of "+key, 0).Err()).To(Succeed())
		dumps[key] = clients.Dump(ctx, key).Val()
		ttl[key] = 0
	}
	ttl["restore:c"] = time.Now().Add(time.Hour).UnixMilli()
	for _, n := range f.names {
		g.Expect(f.servers[n].Client().FlushAll(ctx).Err()).To(Succeed())
		g.Expect(f.servers[n].Client().Do(ctx, "ACL", "LOG", "RESET").Err()).To(Succeed())
	}
	var servers []string
	for _, n := range f.names {
		servers = append(servers, f.servers[n].Addr())
	}
	restorer := redis.NewClusterClient(RestoreClusterOptions(servers[:1], RestoreUser, want.RestorePassword, nil))
	defer func() { _ = restorer.Close() }()
	for key, payload := range dumps {
		args := []any{"RESTORE", key, ttl[key], payload, "REPLACE"}
		if ttl[key] > 0 {
			args = append(args, "ABSTTL")
		}
		g.Expect(restorer.Do(ctx, args...).Err()).To(Succeed(), key)
	}
	g.Expect(restorer.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		return n.FunctionLoadReplace(ctx, restoreLibrary).Err()
	})).To(Succeed())
	for key := range dumps {
		g.Expect(clients.Get(ctx, key).Val()).To(Equal("value of "+key), key)
	}
	// A key whose slot is being moved, and which its old owner lacks, is
	// redirected with ASK: the client sends ASKING, then the RESTORE, to
	// the new owner.
	const asked = "restore:asked"
	slot := KeySlot(asked)
	owner, err := clients.MasterForKey(ctx, asked)
	g.Expect(err).NotTo(HaveOccurred())
	var from, to *redis.Client
	for _, n := range f.names {
		if f.servers[n].Addr() == owner.Options().Addr {
			from = f.servers[n].Client()
		} else {
			to = f.servers[n].Client()
		}
	}
	g.Expect(from).NotTo(BeNil())
	g.Expect(to).NotTo(BeNil())
	fromID, toID := from.ClusterMyID(ctx).Val(), to.ClusterMyID(ctx).Val()
	g.Expect(to.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromID).Err()).To(Succeed())
	g.Expect(from.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", toID).Err()).To(Succeed())
	g.Expect(restorer.Do(ctx, "RESTORE", asked, 0, dumps["restore:a"], "REPLACE").Err()).To(Succeed())
	for _, c := range []*redis.Client{to, from} {
		g.Expect(c.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", toID).Err()).To(Succeed())
	}
	g.Expect(to.Get(ctx, asked).Val()).To(Equal("value of restore:a"), "the key is on the slot's new owner")
	g.Expect(clients.TTL(ctx, "restore:c").Val()).To(BeNumerically(">", 0))
	for _, n := range f.names {
		log, err := f.servers[n].Client().Do(ctx, "ACL", "LOG").Slice()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(log).To(BeEmpty(), "%s denied nothing the restore sent", n)
	}
	g.Expect(restorer.Get(ctx, "restore:a").Err()).To(MatchError(ContainSubstring("NOPERM")))
	g.Expect(restorer.FlushAll(ctx).Err()).To(MatchError(ContainSubstring("NOPERM")))

	// Widened, it is reset; without a password, it goes.
	g.Expect(admin.Do(ctx, "ACL", "SETUSER", RestoreUser, "+get").Err()).To(Succeed())
	g.Expect(f.reconcileAccess(g, f.access).Actions).To(ConsistOf(HaveField("Reason", ReasonRestoreUserReset)))
	g.Expect(dryRun("GET", "k")).To(ContainSubstring("no permissions"))
	over := f.access
	over.RestorePassword = ""
	f.changeAccess(g, over, ReasonRestoreUserDeleted)
	g.Expect(f.servers["node-1"].ClientAs(RestoreUser, want.RestorePassword).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")))
}
