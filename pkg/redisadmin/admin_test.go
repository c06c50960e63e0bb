package redisadmin

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// fixture is a set of named redis-server processes. They run with
// authentication on, as a RedisCluster's nodes do by default: the Admin
// works as OperatorUser and clients log in with the default user's password.
type fixture struct {
	t       *testing.T
	servers map[string]*redistest.Server
	names   []string
	access  Access
	persist bool
	host    string
	ca      *redistest.CA
	// cert is the certificate every node serves, like the one Secret all
	// pods mount.
	cert redistest.Certificate
	// busTLS says that cert is for the bus and replication only.
	busTLS bool
}

// fixtureOptions vary the fixture.
type fixtureOptions struct {
	// tls makes the nodes serve TLS only.
	tls bool
	// busTLS keeps the client port plain and makes the bus and
	// replication speak TLS, as a RedisCluster without spec.tls does.
	busTLS bool
	// persist keeps each node's data across a restart.
	persist bool
	// host is the address the nodes listen on and announce; 127.0.0.1
	// when empty.
	host string
}

func newFixture(t *testing.T, n int) *fixture { return newFixtureWith(t, n, fixtureOptions{}) }

func newFixtureWith(t *testing.T, n int, o fixtureOptions) *fixture {
	f := &fixture{t: t, servers: map[string]*redistest.Server{}, access: Access{
		Passwords:        []string{"client password with \"quotes\" and spaces"},
		OperatorPassword: "operator-password",
	}, persist: o.persist, host: o.host}
	if f.host == "" {
		f.host = "127.0.0.1"
	}
	if o.tls || o.busTLS {
		f.ca = redistest.NewCA(t)
		f.cert = f.ca.Issue(t)
	}
	f.busTLS = o.busTLS
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		f.servers[name] = f.start()
		f.names = append(f.names, name)
	}
	return f
}

// start starts a new, empty node with the fixture's access.
func (f *fixture) start() *redistest.Server {
	opts := redistest.Options{Config: f.access.ConfigFile(), Password: f.access.Passwords[0], Persist: f.persist}
	cert := f.cert
	switch {
	case f.busTLS:
		opts.BusTLS = &cert
	case f.ca != nil:
		opts.TLS = &cert
	}
	return redistest.StartWith(f.t, f.host, 0, opts)
}

// resolve reads the server's current port, so a restarted node resolves to
// its new address, as a pod's new IP would.
func (f *fixture) resolve(_ context.Context, name string) (string, error) {
	s, ok := f.servers[name]
	if !ok {
		return "", fmt.Errorf("no node %s", name)
	}
	return s.Addr(), nil
}

// admin returns an Admin that works as OperatorUser, over TLS when the
// nodes serve it.
func (f *fixture) admin(opts Options) *Admin {
	opts.Username, opts.Password = OperatorUser, f.access.OperatorPassword
	if f.ca != nil && !f.busTLS {
		opts.TLSRootCAs = f.ca.Pool()
	}
	return New(f.resolve, opts)
}

// masters returns a topology of one-node shards.
func masters(names ...string) Topology {
	t := Topology{}
	for _, n := range names {
		t.Shards = append(t.Shards, []string{n})
	}
	return t
}

// converge runs Reconcile until it reports Done, as the controller's
// requeues do: at least 10 runs, and for a minute at most. Redis's own
// gossip (cluster_state, a node's view of a slot's owner) settles in its
// cron, later on a loaded machine, so runs are spaced a little.
func converge(t *testing.T, a *Admin, topo Topology) Result {
	t.Helper()
	var res Result
	var err error
	deadline := time.Now().Add(time.Minute)
	for run := 0; run < 10 || time.Now().Before(deadline); run++ {
		res, err = a.Reconcile(context.Background(), topo)
		if err == nil && res.Done {
			return res
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not converged within a minute: err=%v pending=%q actions=%v", err, res.Pending, res.Actions)
	return res
}

// view is what node name's CLUSTER NODES says of the cluster.
func (f *fixture) view(g Gomega, name string) []Peer {
	peers, err := f.peers(name)
	g.Expect(err).NotTo(HaveOccurred())
	return peers
}

// peers is view for another goroutine than the test's: it returns its
// error.
func (f *fixture) peers(name string) ([]Peer, error) {
	text, err := f.servers[name].Client().ClusterNodes(context.Background()).Result()
	if err != nil {
		return nil, err
	}
	return parseNodes(text)
}

// expectHealthy waits until every given node says cluster_state:ok and
// serves all slots.
func (f *fixture) expectHealthy(g *WithT, names ...string) {
	g.Eventually(func(g Gomega) {
		for _, n := range names {
			info, err := f.servers[n].Client().ClusterInfo(context.Background()).Result()
			g.Expect(err).NotTo(HaveOccurred())
			kv := parseInfo(info)
			g.Expect(kv["cluster_state"]).To(Equal("ok"), "node %s", n)
			g.Expect(kv["cluster_slots_assigned"]).To(Equal("16384"), "node %s", n)
		}
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// threeMastersWithKeys bootstraps node-0 to node-2 as masters, writes the
// keys of redistest.WriteKeys, and returns a client of them.
func (f *fixture) threeMastersWithKeys(g *WithT) *redis.ClusterClient {
	converge(f.t, f.admin(Options{}), masters(f.names[:3]...))
	f.expectHealthy(g, f.names[:3]...)
	c := f.cluster(f.names[:3]...)
	redistest.WriteKeys(g, c)
	return c
}

// allMastersLeavingAllButThree bootstraps every node as a master, writes
// the keys of redistest.WriteKeys, and returns a client of node-0 to
// node-2 and the topology that removes the others.
func (f *fixture) allMastersLeavingAllButThree(g *WithT, a *Admin) (*redis.ClusterClient, Topology) {
	converge(f.t, a, masters(f.names...))
	f.expectHealthy(g, f.names...)
	c := f.cluster(f.names[:3]...)
	redistest.WriteKeys(g, c)
	topo := masters(f.names[:3]...)
	topo.Leaving = f.names[3:]
	return c, topo
}

func (f *fixture) cluster(names ...string) *redis.ClusterClient {
	var servers []*redistest.Server
	for _, n := range names {
		servers = append(servers, f.servers[n])
	}
	return redistest.ClusterClient(f.t, servers...)
}

// slotsOf returns how many slots each named node serves, from Observe.
func slotsOf(g *WithT, a *Admin, topo Topology) map[string]int {
	st, err := a.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]int{}
	for _, n := range st.Nodes {
		out[n.Name] = n.Slots
	}
	return out
}

func expectBalanced(g *WithT, counts map[string]int, names ...string) {
	total := 0
	for _, n := range names {
		g.Expect(counts[n]).To(BeNumerically(">=", NumSlots/len(names)), "node %s", n)
		g.Expect(counts[n]).To(BeNumerically("<=", NumSlots/len(names)+1), "node %s", n)
		total += counts[n]
	}
	g.Expect(total).To(Equal(NumSlots))
}

func TestBootstrapThreeMasters(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 3)
	a := f.admin(Options{})
	topo := masters(f.names...)

	res := converge(t, a, topo)
	g.Expect(res.Actions).To(ContainElement(HaveField("Reason", ReasonSlotsAssigned)))
	g.Expect(res.SlotsAssigned).To(Equal(NumSlots), "a new cluster gets every slot assigned")
	f.expectHealthy(g, f.names...)
	expectBalanced(g, slotsOf(g, a, topo), f.names...)

	st, err := a.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.SlotsAssigned).To(Equal(NumSlots))
	g.Expect(st.Masters).To(Equal(3))
	g.Expect(st.ClusterState).To(Equal("ok"))
	g.Expect(st.OpenSlots).To(BeZero())

	again, err := a.Reconcile(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Done).To(BeTrue())
	g.Expect(again.Actions).To(BeEmpty(), "a converged cluster needs no change")
	g.Expect(again.SlotsAssigned).To(BeZero())

	// Every node forgets who serves two ranges, as after their masters
	// came back empty: those slots alone are assigned again, and counted.
	for _, n := range f.names {
		g.Expect(f.servers[n].Client().Do(context.Background(), "CLUSTER", "DELSLOTSRANGE", 100, 199, 9000, 9009).Err()).To(Succeed(), n)
	}
	st, err = a.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.SlotsAssigned).To(Equal(NumSlots - 110))
	assigned := 0
	for range 10 {
		res, err := a.Reconcile(context.Background(), topo)
		assigned += res.SlotsAssigned
		if err == nil && res.Done {
			break
		}
	}
	g.Expect(assigned).To(Equal(110), "the runs count the slots they assigned")
	f.expectHealthy(g, f.names...)
	expectBalanced(g, slotsOf(g, a, topo), f.names...)
}

func TestUnreachableErrorListsNodesByName(t *testing.T) {
	g := NewWithT(t)
	err := &UnreachableError{Nodes: map[string]string{"node-2": "pod has no IP yet", "node-10": "connection refused"}}
	g.Expect(err.List()).To(Equal("node-10: connection refused; node-2: pod has no IP yet"))
	g.Expect(err.Error()).To(Equal("unreachable nodes: " + err.List()))
}

func TestBootstrapWithReplicas(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 4)
	a := f.admin(Options{})
	topo := Topology{Shards: [][]string{{"node-0", "node-1"}, {"node-2", "node-3"}}}

	converge(t, a, topo)
	f.expectHealthy(g, f.names...)
	st, err := a.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	byName := map[string]NodeState{}
	for _, n := range st.Nodes {
		byName[n.Name] = n
	}
	g.Expect(byName["node-1"].Master).To(BeFalse())
	g.Expect(byName["node-1"].MasterName).To(Equal("node-0"))
	g.Expect(byName["node-3"].MasterName).To(Equal("node-2"))
	g.Expect(byName["node-0"].Slots + byName["node-2"].Slots).To(Equal(NumSlots))
}

func TestScaleUpThreeToFiveKeepsEveryKey(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 5)
	a := f.admin(Options{})
	converge(t, a, masters(f.names[:3]...))
	f.expectHealthy(g, f.names[:3]...)
	c := f.cluster(f.names[:3]...)
	redistest.WriteKeys(g, c)

	res := converge(t, a, masters(f.names...))
	g.Expect(res.Actions).To(ContainElement(HaveField("Reason", ReasonSlotsMoved)))
	f.expectHealthy(g, f.names...)
	expectBalanced(g, slotsOf(g, a, masters(f.names...)), f.names...)
	redistest.ExpectKeys(g, c)
}

func TestScaleDownFiveToThreeKeepsEveryKeyAndForgetsNodes(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 5)
	a := f.admin(Options{})
	c, topo := f.allMastersLeavingAllButThree(g, a)
	var leavingKeys int64
	for _, n := range topo.Leaving {
		leavingKeys += f.servers[n].Client().DBSize(context.Background()).Val()
	}
	g.Expect(leavingKeys).To(BeNumerically(">", 0))
	res, err := a.Reconcile(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.SlotsMoved).To(BeNumerically(">", 0))
	// The run drains both leaving nodes: it measures every key they held.
	g.Expect(res.Migration.Slots).To(Equal(res.SlotsMoved))
	g.Expect(res.Migration.Keys).To(Equal(leavingKeys))
	g.Expect(res.Migration.Bytes).To(BeNumerically(">=", leavingKeys), "every key takes a byte of the dataset at least")
	g.Expect(res.Migration.Duration).To(BeNumerically(">", 0))
	g.Expect(res.LeavingDrained).To(BeFalse(), "they served slots when the run began")
	g.Expect(res.LeavingForgotten).To(BeFalse(), "the run that drains them does not forget them")
	res = converge(t, a, topo)
	g.Expect(res.LeavingForgotten).To(BeTrue())
	g.Expect(res.Actions).To(ContainElement(HaveField("Reason", ReasonNodeForgotten)))
	counts := slotsOf(g, a, topo)
	g.Expect(counts["node-3"]).To(BeZero())
	g.Expect(counts["node-4"]).To(BeZero())
	expectBalanced(g, counts, f.names[:3]...)

	// The leaving nodes can now go away: nothing is lost and nobody knows them.
	f.servers["node-3"].Stop()
	f.servers["node-4"].Stop()
	f.expectHealthy(g, f.names[:3]...)
	for _, n := range f.names[:3] {
		g.Expect(f.view(g, n)).To(HaveLen(3), "node %s still knows a removed node", n)
	}
	redistest.ExpectKeys(g, c)
	res = converge(t, a, masters(f.names[:3]...))
	g.Expect(res.Actions).To(BeEmpty())
}

func TestInterruptedMigrationResumes(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 5)
	c := f.threeMastersWithKeys(g)

	// The first run "crashes" after its 200th MIGRATE, in the middle of a
	// batch: slots are left IMPORTING and MIGRATING with keys on both sides.
	crashing := f.admin(Options{})
	migrations := 0
	crash := errors.New("manager killed")
	crashing.afterMigrate = func(int) error {
		if migrations++; migrations == 200 {
			return crash
		}
		return nil
	}
	topo := masters(f.names...)
	_, err := crashing.Reconcile(context.Background(), topo)
	g.Expect(err).To(MatchError(crash))
	st, err := crashing.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.OpenSlots).To(BeNumerically(">", 0), "the crash must leave slots open for this test to mean anything")

	res := converge(t, f.admin(Options{}), topo)
	g.Expect(res.Actions).To(ContainElement(HaveField("Reason", ReasonSlotMigrationFinished)))
	g.Expect(res.Migration.Slots).To(BeNumerically(">", res.SlotsMoved), "the finished slots count as migrated")
	f.expectHealthy(g, f.names...)
	st, err = crashing.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.OpenSlots).To(BeZero())
	expectBalanced(g, slotsOf(g, crashing, topo), f.names...)
	redistest.ExpectKeys(g, c)
}

// Slots whose keys all moved are handed over within handOverAfter, while
// the rest of their batch still migrates: until then their source answers
// every read of them with ASK.
func TestEmptiedSlotsAreHandedOverBeforeTheirBatchEnds(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 4)
	c := f.threeMastersWithKeys(g)
	// migrating runs on the Admin's goroutines: it returns its error, for
	// the test's goroutine to check.
	migrating := func() (map[int]bool, error) {
		out := map[int]bool{}
		for _, n := range f.names {
			peers, err := f.peers(n)
			if err != nil {
				return nil, err
			}
			for _, p := range peers {
				for slot := range p.Migrating {
					out[slot] = true
				}
			}
		}
		return out, nil
	}
	// One batch at a time, so that the slots migrating at the first
	// MIGRATE are that batch's.
	a := f.admin(Options{SlotsPerBatch: 64, ParallelMoves: 1})
	first, batch := -1, map[int]bool{}
	// handedOver is whether first was seen handed over, and before is
	// whether others of its batch were still migrating then.
	handedOver, before := false, false
	var viewErr error
	a.afterMigrate = func(slot int) error {
		if handedOver || viewErr != nil {
			return nil
		}
		// A batch that lasts several times handOverAfter, as on a loaded
		// source.
		time.Sleep(handOverAfter / 8)
		now, err := migrating()
		switch {
		case err != nil:
			viewErr = err
		case first < 0:
			first, batch = slot, now
		default:
			if handedOver = !now[first]; handedOver {
				for other := range batch {
					before = before || now[other]
				}
			}
		}
		return nil
	}
	converge(t, a, masters(f.names...))
	g.Expect(viewErr).NotTo(HaveOccurred())
	g.Expect(len(batch)).To(BeNumerically(">", migrateWindow), "a batch of more than one window")
	g.Expect(handedOver).To(BeTrue())
	g.Expect(before).To(BeTrue(), "slot %d was handed over with the rest of its batch, not before", first)
	f.expectHealthy(g, f.names...)
	redistest.ExpectKeys(g, c)
}

func TestCancelledRunResumesInSmallSteps(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 4)
	c := f.threeMastersWithKeys(g)

	// A caller's context ends mid-run.
	a := f.admin(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	migrations := 0
	a.afterMigrate = func(int) error {
		if migrations++; migrations == 50 {
			cancel()
		}
		return nil
	}
	topo := masters(f.names...)
	_, err := a.Reconcile(ctx, topo)
	g.Expect(err).To(MatchError(context.Canceled))

	// Runs bounded to 1000 slots report what is left until they are done.
	bounded := f.admin(Options{MaxSlotsPerRun: 1000})
	res, err := bounded.Reconcile(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Done).To(BeFalse())
	g.Expect(res.Pending).To(MatchRegexp(`^moving \d+ slots to node-3$`))
	converge(t, bounded, topo)
	f.expectHealthy(g, f.names...)
	expectBalanced(g, slotsOf(g, bounded, topo), f.names...)
	redistest.ExpectKeys(g, c)
}

func TestRestartOnNewPortIsHealed(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 3)
	a := f.admin(Options{})
	topo := masters(f.names...)
	converge(t, a, topo)
	f.expectHealthy(g, f.names...)
	c := f.cluster(f.names...)
	redistest.WriteKeys(g, c)

	moved := f.servers["node-1"]
	oldAddr := moved.Addr()
	// Keep the data across the restart, as the pod's volume does.
	g.Expect(moved.Client().Save(context.Background()).Err()).To(Succeed())
	moved.Restart(0)
	g.Expect(moved.Addr()).NotTo(Equal(oldAddr))

	converge(t, a, topo)
	for _, n := range []string{"node-0", "node-2"} {
		g.Eventually(func(g Gomega) {
			text, err := f.servers[n].Client().ClusterNodes(context.Background()).Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(text).To(ContainSubstring(moved.Addr()))
			g.Expect(text).NotTo(ContainSubstring(oldAddr))
		}).Should(Succeed())
	}
	f.expectHealthy(g, f.names...)
	redistest.ExpectKeys(g, f.cluster(f.names...))
}

func TestReplicaOfVanishedMasterTakesOver(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 4)
	a := f.admin(Options{})
	topo := Topology{Shards: [][]string{{"node-0", "node-1"}, {"node-2", "node-3"}}}
	converge(t, a, topo)
	f.expectHealthy(g, f.names...)
	c := f.cluster(f.names...)
	redistest.WriteKeys(g, c)
	g.Eventually(func() int64 { // the replica has the data
		n, _ := f.servers["node-1"].Client().DBSize(context.Background()).Result()
		return n
	}, 20*time.Second).Should(BeNumerically(">", redistest.NumKeys/3))

	// node-0 comes back as a new, empty node: its pod lost its volume.
	old := f.servers["node-0"]
	old.Stop()
	f.servers["node-0"] = f.start()

	res := converge(t, a, topo)
	g.Expect(res.Actions).To(ContainElement(HaveField("Reason", ReasonReplicaPromoted)))
	st, err := a.Observe(context.Background(), topo)
	g.Expect(err).NotTo(HaveOccurred())
	byName := map[string]NodeState{}
	for _, n := range st.Nodes {
		byName[n.Name] = n
	}
	g.Expect(byName["node-1"].Master).To(BeTrue())
	g.Expect(byName["node-0"].MasterName).To(Equal("node-1"), "the new node is attached to the promoted one")
	f.expectHealthy(g, f.names...)
	redistest.ExpectKeys(g, f.cluster(f.names...))
}

func TestUnreachableNodeChangesNothing(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 2)
	a := f.admin(Options{})
	topo := masters("node-0", "node-1", "node-missing")
	res, err := a.Reconcile(context.Background(), topo)
	g.Expect(IsUnreachable(err)).To(BeTrue())
	g.Expect(err.Error()).To(ContainSubstring("node-missing"))
	g.Expect(res.State.Unreachable).To(HaveKey("node-missing"))
	g.Expect(res.Actions).To(BeEmpty())
	g.Expect(res.Done).To(BeFalse())
	st, _ := a.Observe(context.Background(), topo)
	g.Expect(st.SlotsAssigned).To(BeZero())
	for _, n := range st.Nodes {
		g.Expect(n.KnownNodes).To(Equal(1), "nobody was met")
	}
}

// TestLoadingNodeIsReportedAsLoading: a node restarted with its data
// answers LOADING while it reads it, as a replica does after a full
// resynchronization. The run says so, so that the controller waits for it
// without a warning, and converges once the node has loaded.
func TestLoadingNodeIsReportedAsLoading(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, 3)
	a := f.admin(Options{})
	topo := masters(f.names...)
	converge(t, a, topo)
	redistest.WriteKeys(g, f.cluster(f.names...))

	slow := f.servers["node-1"]
	g.Expect(slow.Client().Save(ctx).Err()).To(Succeed())
	// Each key takes 1ms to load, and the server answers clients while it
	// loads instead of after.
	slow.Options.Args = append(slow.Options.Args, "--key-load-delay", "1000", "--loading-process-events-interval-bytes", "1024")
	slow.Restart(slow.Port)

	res, err := a.Reconcile(ctx, topo)
	var u *UnreachableError
	g.Expect(errors.As(err, &u)).To(BeTrue(), "got %v", err)
	g.Expect(u.Loading).To(HaveKey("node-1"), "got %v", err)
	g.Expect(u.OnlyLoading()).To(BeTrue(), "got %v", err)
	g.Expect(res.Actions).To(BeEmpty())

	g.Eventually(func() error { return slow.Client().Ping(ctx).Err() }, 60*time.Second).Should(Succeed())
	converge(t, a, topo)
	f.expectHealthy(g, f.names...)
	redistest.ExpectKeys(g, f.cluster(f.names...))
}

// TestReplicaMigrationIsTurnedOffInPlace: nodes that run with Redis's
// default cluster-allow-replica-migration (started before their
// configuration file said no) are set to no by the next run, without a
// restart, and a scale-down over them keeps every key; the run after
// changes nothing.
func TestReplicaMigrationIsTurnedOffInPlace(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, 4)
	for _, n := range f.names {
		g.Expect(f.servers[n].Client().ConfigSet(ctx, ReplicaMigration, "yes").Err()).To(Succeed())
	}
	a := f.admin(Options{})
	res := converge(t, a, masters(f.names...))
	g.Expect(res.Actions).To(ContainElement(And(
		HaveField("Reason", ReasonReplicaMigrationDisabled),
		HaveField("Message", ContainSubstring("node-3")),
	)))
	for _, n := range f.names {
		got, err := f.servers[n].Client().ConfigGet(ctx, ReplicaMigration).Result()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(HaveKeyWithValue(ReplicaMigration, "no"), "node %s", n)
	}
	f.expectHealthy(g, f.names...)
	c := f.cluster(f.names[:3]...)
	redistest.WriteKeys(g, c)

	topo := masters(f.names[:3]...)
	topo.Leaving = f.names[3:]
	res = converge(t, a, topo)
	g.Expect(res.LeavingForgotten).To(BeTrue())
	g.Expect(res.Actions).NotTo(ContainElement(HaveField("Reason", ReasonReplicaMigrationDisabled)), "set once")
	redistest.ExpectKeys(g, c)
}

// TestKeptDrainedNodesRedirect: with KeepDrained, leaving nodes stay in
// the cluster once drained and answer MOVED, and Done waits; without it
// they are forgotten and reset, and answer CLUSTERDOWN.
func TestKeptDrainedNodesRedirect(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, 4)
	a := f.admin(Options{})
	c, topo := f.allMastersLeavingAllButThree(g, a)
	topo.KeepDrained = true
	var res Result
	for range 10 {
		var err error
		res, err = a.Reconcile(ctx, topo)
		g.Expect(err).NotTo(HaveOccurred())
		if res.LeavingDrained {
			break
		}
	}
	g.Expect(res.LeavingDrained).To(BeTrue())
	g.Expect(res.Done).To(BeFalse(), "the leaving node is still in the cluster")
	g.Expect(res.LeavingForgotten).To(BeFalse())
	g.Expect(f.servers["node-3"].Client().Get(ctx, "a-key").Err()).To(MatchError(HavePrefix("MOVED")))
	g.Expect(f.view(g, "node-0")).To(HaveLen(4), "the others still know it")

	topo.KeepDrained = false
	res = converge(t, a, topo)
	g.Expect(res.LeavingForgotten).To(BeTrue())
	g.Expect(f.servers["node-3"].Client().Get(ctx, "a-key").Err()).To(MatchError(HavePrefix("CLUSTERDOWN")))
	redistest.ExpectKeys(g, c)
}
