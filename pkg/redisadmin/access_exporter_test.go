package redisadmin

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// expectExporterUser expects the node to let ExporterUser in with
// password and to run only what a scrape needs.
func expectExporterUser(g *WithT, c *redis.Client) {
	ctx := context.Background()
	g.ExpectWithOffset(1, c.Info(ctx, "all").Err()).To(Succeed())
	g.ExpectWithOffset(1, c.ClusterInfo(ctx).Err()).To(Succeed())
	g.ExpectWithOffset(1, c.Do(ctx, "SLOWLOG", "LEN").Err()).To(Succeed())
	g.ExpectWithOffset(1, c.Do(ctx, "LATENCY", "LATEST").Err()).To(Succeed())
	for _, cmd := range [][]any{{"GET", "x"}, {"SET", "x", "1"}, {"KEYS", "*"}, {"FLUSHALL"}, {"CONFIG", "GET", "masterauth"},
		{"CONFIG", "SET", "maxmemory", "1"}, {"CLUSTER", "NODES"}, {"CLUSTER", "RESET"}, {"ACL", "LIST"}, {"PUBLISH", "c", "m"}} {
		g.ExpectWithOffset(1, c.Do(ctx, cmd...).Err()).To(MatchError(ContainSubstring("NOPERM")), "%v", cmd)
	}
}

// A node started from the users file has the exporter's user, as a pod
// that restarts reads it from its mounted Secret, and the next run finds
// it as it must be.
func TestExporterUserComesFromTheConfigFile(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 0)
	f.access.ExporterPassword = "exporter password"
	g.Expect(f.access.ConfigFile()).To(ContainSubstring("user exporter reset on #" + Hash("exporter password") + " resetkeys"))
	f.servers["node-0"] = f.start()
	f.names = append(f.names, "node-0")

	s := f.servers["node-0"]
	expectExporterUser(g, s.ClientAs(ExporterUser, "exporter password"))
	g.Expect(s.ClientAs(ExporterUser, "wrong").Ping(context.Background()).Err()).To(MatchError(ContainSubstring("WRONGPASS")))
	g.Expect(f.reconcileAccess(g, f.access).Actions).To(BeEmpty(), "the file's user is the one ReconcileAccess keeps")
}

// ReconcileAccess creates the exporter's user on a node that lacks it,
// resets it when widened or given another password, and deletes it when
// the exporter is disabled; each run after that finds nothing to do.
func TestExporterUserIsCreatedResetAndDeleted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 1)
	ctx := context.Background()
	s := f.servers["node-0"]
	g.Expect(f.access.ConfigFile()).NotTo(ContainSubstring("user exporter"), "no exporter, no user")

	want := f.access
	want.ExporterPassword = "first"
	g.Expect(f.reconcileAccess(g, want).Actions).To(ConsistOf(HaveField("Reason", ReasonExporterUserCreated)))
	expectExporterUser(g, s.ClientAs(ExporterUser, "first"))
	g.Expect(f.reconcileAccess(g, want).Actions).To(BeEmpty())

	g.Expect(s.Client().Do(ctx, "ACL", "SETUSER", ExporterUser, "+@all", "~*").Err()).To(Succeed())
	g.Expect(s.ClientAs(ExporterUser, "first").Do(ctx, "CONFIG", "GET", "masterauth").Err()).To(Succeed(), "widened")
	g.Expect(f.reconcileAccess(g, want).Actions).To(ConsistOf(HaveField("Reason", ReasonExporterUserReset)))
	expectExporterUser(g, s.ClientAs(ExporterUser, "first"))

	want.ExporterPassword = "second"
	g.Expect(f.reconcileAccess(g, want).Actions).To(ConsistOf(HaveField("Reason", ReasonExporterUserReset)))
	g.Expect(s.ClientAs(ExporterUser, "first").Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")))
	expectExporterUser(g, s.ClientAs(ExporterUser, "second"))

	want.ExporterPassword = ""
	g.Expect(f.reconcileAccess(g, want).Actions).To(ConsistOf(HaveField("Reason", ReasonExporterUserDeleted)))
	g.Expect(s.Client().Do(ctx, "ACL", "GETUSER", ExporterUser).Err()).To(Equal(redis.Nil), "the user is gone")
	g.Expect(f.reconcileAccess(g, want).Actions).To(BeEmpty())
	g.Expect(s.ClientAs(OperatorUser, f.access.OperatorPassword).ClusterInfo(ctx).Err()).To(Succeed(), "the operator's user is untouched")
}
