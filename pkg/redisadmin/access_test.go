package redisadmin

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// withReplicas is a topology of two shards with one replica each.
var withReplicas = Topology{Shards: [][]string{{"node-0", "node-1"}, {"node-2", "node-3"}}}

func TestOperatorUserAdministersButCannotReadOrFlush(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 3)
	converge(t, f.admin(Options{}), masters(f.names...))
	redistest.WriteKeys(g, f.cluster(f.names...))

	ctx := context.Background()
	op := f.servers["node-0"].ClientAs(OperatorUser, f.access.OperatorPassword)
	g.Expect(op.ClusterInfo(ctx).Err()).To(Succeed())
	for _, cmd := range [][]any{{"GET", "key:1"}, {"FLUSHALL"}, {"SET", "x", "1"}, {"KEYS", "*"}, {"ACL", "LIST"},
		{"ACL", "SETUSER", OperatorUser, "+@all"}, {"ACL", "GETUSER", "default"}} {
		err := op.Do(ctx, cmd...).Err()
		g.Expect(err).To(MatchError(ContainSubstring("NOPERM")), "%v", cmd)
	}
	// Nobody gets in without a password.
	err := f.servers["node-0"].ClientAs("", "").Ping(ctx).Err()
	g.Expect(err).To(MatchError(ContainSubstring("NOAUTH")))
	err = f.servers["node-0"].ClientAs("", "wrong").Ping(ctx).Err()
	g.Expect(err).To(MatchError(ContainSubstring("WRONGPASS")))
	redistest.ExpectKeys(g, f.cluster(f.names...))
}

// expectReplicationUp waits until every replica's link to its master is up.
func (f *fixture) expectReplicationUp(g *WithT, replicas ...string) {
	g.Eventually(func(g Gomega) {
		for _, n := range replicas {
			info, err := f.servers[n].Client().Info(context.Background(), "replication").Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(info).To(ContainSubstring("role:slave"), "node %s", n)
			g.Expect(info).To(ContainSubstring("master_link_status:up"), "node %s", n)
		}
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// reconnectReplicas makes the replicas log in to their masters again, as
// after a network blip, to prove that masterauth is right.
func (f *fixture) reconnectReplicas(g *WithT, replicas ...string) {
	for _, n := range replicas {
		g.Expect(f.servers[n].Client().Do(context.Background(), "CLIENT", "KILL", "TYPE", "master").Err()).To(Succeed())
	}
}

func (f *fixture) reconcileAccess(g *WithT, want Access) AccessResult {
	res, err := f.admin(Options{}).ReconcileAccess(context.Background(), f.names, want)
	g.Expect(err).NotTo(HaveOccurred())
	return res
}

// changeAccess makes the nodes enforce want, expecting one action of
// reason per node, and keeps want as the fixture's access.
func (f *fixture) changeAccess(g *WithT, want Access, reason Reason) {
	res := f.reconcileAccess(g, want)
	g.Expect(res.Actions).To(HaveLen(len(f.names)))
	g.Expect(res.Actions).To(HaveEach(HaveField("Reason", reason)))
	f.access = want
}

func TestRotationUnderLoadLosesNothingAndKeepsReplication(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 5)
	topo := Topology{Shards: [][]string{{"node-0", "node-1"}, {"node-2", "node-3", "node-4"}}}
	converge(t, f.admin(Options{}), topo)
	f.expectHealthy(g, f.names...)
	replicas := []string{"node-1", "node-3", "node-4"}
	f.expectReplicationUp(g, replicas...)
	ctx := context.Background()
	oldPassword, newPassword := f.access.Passwords[0], "the new password"
	clientWith := func(password string) *redis.ClusterClient {
		return redistest.ClusterClientWith(t, redis.ClusterOptions{Password: password}, f.servers["node-0"], f.servers["node-2"])
	}

	// A replica is down while the password changes; it comes back with the
	// configuration it had.
	f.servers["node-4"].Stop()
	load := redistest.StartLoad(clientWith(oldPassword), "before")

	// Step 1: the Secret holds the new password and keeps the old one as
	// the previous one.
	both := f.access
	both.Passwords = []string{newPassword, oldPassword}
	// The nodes enforced the old password when a run last completed.
	both.KnownPasswords = []string{oldPassword}
	res := f.reconcileAccess(g, both)
	g.Expect(res.Rotated).To(BeTrue())
	g.Expect(res.Unreachable).To(HaveKey("node-4"))
	g.Expect(res.Actions).To(ContainElements(HaveField("Reason", ReasonPasswordsAdded), HaveField("Reason", ReasonMasterAuthUpdated)))
	g.Expect(res.Actions).NotTo(ContainElement(HaveField("Reason", ReasonPasswordsRemoved)))
	for _, password := range []string{oldPassword, newPassword} {
		for _, n := range []string{"node-0", "node-1", "node-2", "node-3"} {
			g.Expect(f.servers[n].ClientAs("", password).Ping(ctx).Err()).To(Succeed(), "%s with %q", n, password)
		}
	}
	// Clients move to the new password while the old one still works.
	acked := load.ExpectNoLoss(g, clientWith(newPassword))
	g.Expect(load.Errors()).To(BeEmpty())
	load = redistest.StartLoad(clientWith(newPassword), "after")

	// Step 2: the previous password is dropped.
	only := f.access
	only.Passwords = []string{newPassword}
	only.KnownPasswords = []string{oldPassword}
	res = f.reconcileAccess(g, only)
	g.Expect(res.Actions).To(ConsistOf(HaveField("Reason", ReasonPasswordsRemoved)))
	for _, n := range []string{"node-0", "node-1", "node-2", "node-3"} {
		g.Expect(f.servers[n].ClientAs("", oldPassword).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")), n)
		g.Expect(f.servers[n].ClientAs("", newPassword).Ping(ctx).Err()).To(Succeed(), n)
	}

	// The replica that was down comes back knowing only the old password;
	// the next run gives it the current one and its link comes up.
	f.servers["node-4"].Restart(0)
	res = f.reconcileAccess(g, only)
	g.Expect(res.Done()).To(BeTrue())
	g.Expect(res.Actions).To(ContainElements(HaveField("Message", ContainSubstring("node-4"))))
	g.Expect(f.servers["node-4"].ClientAs("", oldPassword).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")))
	for _, n := range f.names {
		f.servers[n].Options.Password = newPassword
	}
	f.reconnectReplicas(g, replicas...)
	f.expectReplicationUp(g, replicas...)
	acked += load.ExpectNoLoss(g, clientWith(newPassword))
	g.Expect(load.Errors()).To(BeEmpty())
	t.Logf("%d acknowledged writes, none lost", acked)

	// Steady state: nothing to change.
	res = f.reconcileAccess(g, only)
	g.Expect(res.Actions).To(BeEmpty())
	g.Expect(res.Rotated).To(BeFalse())
	converge(t, f.admin(Options{}), topo)
}

func TestAuthCanBeTurnedOffAndOnAgain(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 2)
	topo := Topology{Shards: [][]string{{"node-0", "node-1"}}}
	converge(t, f.admin(Options{}), topo)
	ctx := context.Background()

	off := f.access
	off.Passwords, off.KnownPasswords = nil, f.access.Passwords
	res := f.reconcileAccess(g, off)
	g.Expect(res.Actions).To(ConsistOf(HaveField("Reason", ReasonAuthDisabled)))
	g.Expect(f.servers["node-0"].ClientAs("", "").Ping(ctx).Err()).To(Succeed())
	masterauth, err := f.servers["node-1"].ClientAs("", "").ConfigGet(ctx, "masterauth").Result()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(masterauth["masterauth"]).To(BeEmpty())
	// The operator keeps its own user.
	g.Expect(f.servers["node-0"].ClientAs(OperatorUser, f.access.OperatorPassword).Ping(ctx).Err()).To(Succeed())

	res = f.reconcileAccess(g, f.access)
	g.Expect(res.Rotated).To(BeTrue())
	g.Expect(f.servers["node-0"].ClientAs("", "").Ping(ctx).Err()).To(MatchError(ContainSubstring("NOAUTH")))
	f.reconnectReplicas(g, "node-1")
	f.expectReplicationUp(g, "node-1")
}

func TestNodeWithoutOperatorUserIsAdopted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	// A node started before authentication existed: no users, no password.
	old := redistest.StartAt(t, "127.0.0.1", 0)
	access := Access{Passwords: []string{"secret"}, OperatorPassword: "operator"}
	a := New(func(context.Context, string) (string, error) { return old.Addr(), nil },
		Options{Username: OperatorUser, Password: access.OperatorPassword})
	res, err := a.ReconcileAccess(context.Background(), []string{"old"}, access)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Actions).To(HaveExactElements(HaveField("Reason", ReasonOperatorUserCreated), HaveField("Reason", ReasonPasswordsAdded), HaveField("Reason", ReasonMasterAuthUpdated)),
		"adding a password ends nopass: nothing to remove")
	g.Expect(old.ClientAs("", "").Ping(context.Background()).Err()).To(MatchError(ContainSubstring("NOAUTH")))
	g.Expect(old.ClientAs("", "secret").Ping(context.Background()).Err()).To(Succeed())

	// A node that requires a password the operator does not know is not
	// touched: it is reported unreachable.
	stranger := redistest.StartWith(t, "127.0.0.1", 0, redistest.Options{Config: "requirepass unknown\n"})
	a = New(func(context.Context, string) (string, error) { return stranger.Addr(), nil },
		Options{Username: OperatorUser, Password: access.OperatorPassword})
	res, err = a.ReconcileAccess(context.Background(), []string{"stranger"}, access)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Unreachable).To(HaveKeyWithValue("stranger", ContainSubstring("refuses every password of the default user the operator knows")))
	g.Expect(res.Refused).To(Equal([]string{"stranger"}), "told apart from a node that does not answer")
	g.Expect(res.Actions).To(BeEmpty())
}

func TestConfigFileKeepsAnyPasswordIntact(t *testing.T) {
	t.Parallel()
	passwords := []string{
		"plain",
		`with "double" and 'single' quotes`,
		`back\slash\`,
		"tab\tnewline\nreturn\r",
		"\x00\x01\xff binary",
		"ünïcödé 🔑",
		" leading and trailing spaces ",
		"#hash-like >gt <lt !bang ~tilde &amp",
	}
	for _, password := range passwords {
		t.Run(fmt.Sprintf("%q", password), func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			access := Access{Passwords: []string{password}, OperatorPassword: "op"}
			s := redistest.StartWith(t, "127.0.0.1", 0, redistest.Options{Config: access.ConfigFile(), Password: password})
			ctx := context.Background()
			g.Expect(s.Client().Ping(ctx).Err()).To(Succeed(), "the default user accepts the password")
			got, err := s.Client().ConfigGet(ctx, "masterauth").Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got["masterauth"]).To(Equal(password))
		})
	}
}

func TestRespellAlternates(t *testing.T) {
	g := NewWithT(t)
	g.Expect(respell("/etc/redis/tls/tls.crt")).To(Equal("/etc/redis/tls/./tls.crt"))
	g.Expect(respell("/etc/redis/tls/./tls.crt")).To(Equal("/etc/redis/tls/tls.crt"))
	g.Expect(respell("tls.crt")).To(Equal("./tls.crt"))
	g.Expect(respell("./tls.crt")).To(Equal("tls.crt"))
}

func FuzzQuote(f *testing.F) {
	for _, seed := range []string{"", "a", `"`, `\`, "\n", "\x00", "\xff", `\x41`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		// One line of printable ASCII, so the password cannot end the
		// directive or start another.
		for i := 0; i < len(q); i++ {
			if q[i] < 0x20 || q[i] >= 0x7f {
				t.Fatalf("Quote(%q) = %q holds byte %#x", s, q, q[i])
			}
		}
		if got, err := Unquote(q); err != nil || got != s {
			t.Fatalf("Quote(%q) = %q reads back as %q (%v)", s, q, got, err)
		}
	})
}

func TestTLSServesOnlyTLSAndReloadsARenewedCertificate(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixtureWith(t, 4, fixtureOptions{tls: true})
	a := f.admin(Options{})
	converge(t, a, masters(f.names[:3]...))
	f.expectHealthy(g, f.names[:3]...)
	c := f.cluster(f.names[:3]...)
	redistest.WriteKeys(g, c)
	ctx := context.Background()

	// A plain-text client is refused.
	plain := redis.NewClient(&redis.Options{Addr: f.servers["node-0"].Addr(), Password: f.access.Passwords[0], MaxRetries: -1, Protocol: 2, DisableIdentity: true})
	defer func() { _ = plain.Close() }()
	g.Expect(plain.Ping(ctx).Err()).To(HaveOccurred())

	// Scaling moves every key over TLS: MIGRATE and the bus speak it too.
	converge(t, a, masters(f.names...))
	f.expectHealthy(g, f.names...)
	redistest.ExpectKeys(g, c)

	// cert-manager renews the certificate; the kubelet replaces the files.
	pids := map[string]int{}
	renewed := f.ca.Issue(t)
	for _, n := range f.names {
		pids[n] = f.servers[n].PID()
		g.Expect(renewed.WriteFiles(f.servers[n].TLSDir())).To(Succeed())
	}
	want := f.access
	want.Certificate = renewed.Cert
	for _, n := range f.names {
		res, err := New(f.resolve, a.opts).ReconcileAccess(ctx, []string{n}, want)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Done()).To(BeTrue(), "%s: %s", n, res.Pending)
		g.Expect(res.Actions).To(ConsistOf(HaveField("Reason", ReasonCertificateReloaded)))
		g.Expect(f.servers[n].ServedCertificate()).To(Equal(renewed.Cert), n)
		// Again: the node serves it, nothing to do.
		res, err = New(f.resolve, a.opts).ReconcileAccess(ctx, []string{n}, want)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Actions).To(BeEmpty())
	}
	// Renewed once more: the path goes back to its first spelling.
	again := f.ca.Issue(t)
	want.Certificate = again.Cert
	for _, n := range f.names {
		g.Expect(again.WriteFiles(f.servers[n].TLSDir())).To(Succeed())
	}
	res, err := a.ReconcileAccess(ctx, f.names, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Done()).To(BeTrue(), res.Pending)
	for _, n := range f.names {
		g.Expect(f.servers[n].ServedCertificate()).To(Equal(again.Cert), n)
	}
	// A node whose files are not renewed yet is reloaded and reported pending.
	late := f.ca.Issue(t)
	want.Certificate = late.Cert
	res, err = a.ReconcileAccess(ctx, f.names[:1], want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Done()).To(BeFalse())
	g.Expect(res.Pending).To(ContainSubstring("node-0"))
	g.Expect(res.Actions).To(BeEmpty())
	for _, n := range f.names {
		g.Expect(f.servers[n].PID()).To(Equal(pids[n]), "%s was restarted", n)
	}
	redistest.ExpectKeys(g, c)
}

// A lost operator password, made anew, reaches the nodes through the
// default user, whose password the operator knows; the old one stops
// working, and the default user keeps its passwords.
func TestLostOperatorPasswordIsReplacedThroughTheDefaultUser(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 3)
	converge(t, f.admin(Options{}), masters(f.names...))
	old := f.access.OperatorPassword
	f.access.OperatorPassword = "a new operator password"

	res := f.reconcileAccess(g, f.access)
	g.Expect(res.Done()).To(BeTrue())
	g.Expect(res.Actions).To(HaveLen(3))
	g.Expect(res.Actions).To(HaveEach(HaveField("Reason", ReasonOperatorUserReset)))
	ctx := context.Background()
	for _, name := range f.names {
		s := f.servers[name]
		g.Expect(s.ClientAs(OperatorUser, old).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")), name)
		g.Expect(s.ClientAs(OperatorUser, f.access.OperatorPassword).Do(ctx, "GET", "x").Err()).To(MatchError(ContainSubstring("NOPERM")),
			"%s: the reset user has the operator's rules, not more", name)
		g.Expect(s.ClientAs("", f.access.Passwords[0]).Ping(ctx).Err()).To(Succeed(), name)
	}
	g.Expect(f.reconcileAccess(g, f.access).Actions).To(BeEmpty(), "a second run finds nothing to do")
	converge(t, f.admin(Options{}), masters(f.names...))
}

// An operator user that someone widened is reset to its own rules by the
// next run.
func TestWidenedOperatorUserIsReset(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 1)
	ctx := context.Background()
	s := f.servers["node-0"]
	g.Expect(s.Client().Do(ctx, "ACL", "SETUSER", OperatorUser, "+@all").Err()).To(Succeed())
	g.Expect(s.ClientAs(OperatorUser, f.access.OperatorPassword).Do(ctx, "ACL", "LIST").Err()).To(Succeed(), "widened")

	res := f.reconcileAccess(g, f.access)
	g.Expect(res.Actions).To(ConsistOf(HaveField("Reason", ReasonOperatorUserReset)))
	g.Expect(s.ClientAs(OperatorUser, f.access.OperatorPassword).Do(ctx, "ACL", "LIST").Err()).To(MatchError(ContainSubstring("NOPERM")))
	g.Expect(f.reconcileAccess(g, f.access).Actions).To(BeEmpty())
}
