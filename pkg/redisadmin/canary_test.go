package redisadmin

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// KeySlot agrees with the slots Redis documents, hash tags included.
func TestKeySlotMatchesRedis(t *testing.T) {
	for key, want := range map[string]int{
		"foo": 12182, "bar": 5061, "hello": 866,
		"{user1000}.following": KeySlot("user1000"),
		"foo{}{bar}":           KeySlot("foo{}{bar}"), // empty tag: the whole key
		"{}":                   15257,
	} {
		if got := KeySlot(key); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if KeySlot("foo{}{bar}") == KeySlot("bar") {
		t.Errorf("an empty first tag must not make {bar} the tag")
	}
	for key, tag := range map[string]string{
		"plain": "plain", "a{b": "a{b", "a{}b{c}": "a{}b{c}", "x{y}z{w}": "y",
		"}{a}": "a", "{{a}}": "{a", "{a}": "a", "": "", "}": "}",
	} {
		if got := hashTag(key); got != tag {
			t.Errorf("hashTag(%q) = %q, want %q", key, got, tag)
		}
		if KeySlotOf([]byte(key)) != KeySlot(key) {
			t.Errorf("KeySlotOf(%q) = %d, KeySlot %d", key, KeySlotOf([]byte(key)), KeySlot(key))
		}
	}
}

// Every slot has a canary key, with the prefix, that lands in it.
func TestCanaryKeyLandsInItsSlot(t *testing.T) {
	for slot := range NumSlots {
		key := CanaryKey(slot)
		if !strings.HasPrefix(key, CanaryKeyPrefix) || len(key) > len(CanaryKeyPrefix)+8 {
			t.Fatalf("slot %d: key %q", slot, key)
		}
		if got := KeySlot(key); got != slot {
			t.Fatalf("CanaryKey(%d) = %q lands in slot %d", slot, key, got)
		}
	}
}

func TestLineageCheck(t *testing.T) {
	const epoch = "e1"
	for _, tc := range []struct {
		name     string
		lineage  Lineage
		present  bool
		value    string
		lost     uint64
		next     Lineage
		tracking bool
	}{
		{"the last acknowledged write", Lineage{LastAcked: 9, Floor: 3}, true, "e1:9", 0, Lineage{LastAcked: 9, Floor: 3}, true},
		{"a later unacknowledged write", Lineage{LastAcked: 9, Floor: 3}, true, "e1:10", 0, Lineage{LastAcked: 9, Floor: 3}, true},
		{"rolled back", Lineage{LastAcked: 9, Floor: 3}, true, "e1:6", 3, Lineage{LastAcked: 9, Floor: 9}, true},
		{"rolled back before tracking began", Lineage{LastAcked: 9, Floor: 3}, true, "e1:1", 6, Lineage{LastAcked: 9, Floor: 9}, true},
		{"missing", Lineage{LastAcked: 9, Floor: 3}, false, "", 6, Lineage{LastAcked: 9, Floor: 9}, true},
		{"missing again: counted once", Lineage{LastAcked: 9, Floor: 9}, false, "", 0, Lineage{LastAcked: 9, Floor: 9}, true},
		{"another epoch", Lineage{LastAcked: 9, Floor: 3}, true, "e0:100", 0, Lineage{}, false},
		{"not the canary's", Lineage{LastAcked: 9, Floor: 3}, true, "junk", 0, Lineage{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lost, next, tracking := tc.lineage.Check(epoch, tc.present, tc.value)
			if lost != tc.lost || next != tc.next || tracking != tc.tracking {
				t.Errorf("got %d %+v %v, want %d %+v %v", lost, next, tracking, tc.lost, tc.next, tc.tracking)
			}
		})
	}
}

// No read counts more writes than were acknowledged since tracking
// began, and, read after read, each is counted at most once.
func FuzzLineageCheck(f *testing.F) {
	f.Add(uint64(3), uint64(9), true, "e:6", false, "")
	f.Add(uint64(0), uint64(1), false, "", true, "e:0")
	f.Fuzz(func(t *testing.T, floor, acked uint64, present1 bool, v1 string, present2 bool, v2 string) {
		if floor > acked {
			floor, acked = acked, floor
		}
		l := Lineage{LastAcked: acked, Floor: floor}
		lost1, next, tracking := l.Check("e", present1, v1)
		if lost1 > acked-floor {
			t.Fatalf("%+v lost %d", l, lost1)
		}
		if !tracking {
			return
		}
		if next.LastAcked != acked || next.Floor < floor || next.Floor > acked {
			t.Fatalf("%+v became %+v", l, next)
		}
		lost2, _, _ := next.Check("e", present2, v2)
		if lost1+lost2 > acked-floor {
			t.Fatalf("%+v: %d then %d lost", l, lost1, lost2)
		}
	})
}

// canaryFixture is two shards of a master and a replica, with the canary
// user on every node.
func canaryFixture(t *testing.T) (*fixture, *Admin, Topology, CanaryTarget) {
	return canaryFixtureOf(t, Topology{Shards: [][]string{{"node-0", "node-1"}, {"node-2", "node-3"}}})
}

// canaryFixtureOf is topo's nodes, node-0 to node-<n-1>, with the canary
// user on every one.
func canaryFixtureOf(t *testing.T, topo Topology) (*fixture, *Admin, Topology, CanaryTarget) {
	f := newFixture(t, len(topo.Nodes()))
	a := f.admin(Options{})
	converge(t, a, topo)
	g := NewWithT(t)
	f.expectHealthy(g, f.names...)
	for _, shard := range topo.Shards {
		f.expectReplicationUp(g, shard[1:]...)
	}
	want := f.access
	want.CanaryPassword = "canary-password"
	res, err := a.ReconcileAccess(context.Background(), f.names, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Actions).To(ContainElement(HaveField("Reason", ReasonCanaryUserCreated)))
	target := CanaryTarget{Replicas: 1}
	for _, shard := range topo.Shards {
		var addrs []string
		for _, n := range shard {
			addrs = append(addrs, f.servers[n].Addr())
		}
		target.Shards = append(target.Shards, addrs)
	}
	return f, a, topo, target
}

// testCanary is a Canary of the fixture's canary user, closed with the
// test.
func testCanary(t *testing.T, timeout time.Duration) *Canary {
	c := NewCanary(CanaryOptions{Password: "canary-password", Timeout: timeout})
	t.Cleanup(c.Close)
	return c
}

func probeOK(g *WithT, c *Canary, target CanaryTarget) []ShardProbe {
	res := c.Probe(context.Background(), time.Now(), target)
	g.Expect(res).To(HaveLen(len(target.Shards)))
	for i, r := range res {
		g.Expect(r.Err).NotTo(HaveOccurred(), "shard %d", i)
		g.Expect(r.Acked).To(BeTrue(), "shard %d", i)
	}
	return res
}

func totalLost(res []ShardProbe) uint64 {
	var n uint64
	for _, r := range res {
		n += r.Lost
	}
	return n
}

// The canary user may touch its own keys only, and a node that widened it
// is reset.
func TestCanaryUserIsLimitedToItsPrefix(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, a, _, _ := canaryFixture(t)
	c := f.servers["node-0"].ClientAs(CanaryUser, "canary-password")
	ctx := context.Background()
	g.Expect(c.Ping(ctx).Err()).To(Succeed())
	for _, cmd := range [][]any{{"GET", "x"}, {"SET", "x", "1"}, {"FLUSHALL"}, {"CONFIG", "GET", "masterauth"}, {"KEYS", "*"}} {
		g.Expect(c.Do(ctx, cmd...).Err()).To(MatchError(ContainSubstring("NOPERM")), "%v", cmd)
	}
	admin := f.servers["node-0"].Client()
	// Redis itself places the canary's keys, and others, where KeySlot does.
	for _, key := range []string{"foo", "{user1000}.following", "foo{}{bar}", "{}", "a{b", "}{a}", "{{a}}", "x{y}z{w}", CanaryKey(0), CanaryKey(16383), CanaryKey(9000)} {
		g.Expect(admin.ClusterKeySlot(ctx, key).Val()).To(BeEquivalentTo(KeySlot(key)), key)
	}
	g.Expect(admin.Do(ctx, "ACL", "SETUSER", CanaryUser, "+flushall").Err()).To(Succeed())
	want := f.access
	want.CanaryPassword = "canary-password"
	res, err := a.ReconcileAccess(ctx, f.names, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Actions).To(ConsistOf(HaveField("Reason", ReasonCanaryUserReset)))
	g.Expect(c.Do(ctx, "FLUSHALL").Err()).To(MatchError(ContainSubstring("NOPERM")))
	// Without a password the user goes.
	want.CanaryPassword = ""
	res, err = a.ReconcileAccess(ctx, f.names, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Actions).To(HaveLen(4))
	g.Expect(res.Actions).To(HaveEach(HaveField("Reason", ReasonCanaryUserDeleted)))
	g.Expect(strings.Contains(want.ConfigFile(), CanaryUser)).To(BeFalse())
}

// A coordinated failover loses no acknowledged write, and the canary
// follows the shard to its new master.
func TestCanaryCoordinatedFailoverLosesNothing(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	_, a, topo, target := canaryFixture(t)
	c := testCanary(t, 2*time.Second)
	for range 3 {
		g.Expect(totalLost(probeOK(g, c, target))).To(BeZero())
	}
	_, err := a.Failover(context.Background(), topo, "node-0")
	g.Expect(err).NotTo(HaveOccurred())
	for range 3 {
		g.Expect(totalLost(probeOK(g, c, target))).To(BeZero())
	}
	g.Expect(c.shards[0].lineage.LastAcked).To(BeEquivalentTo(6))
	g.Expect(c.shards[0].tracking).To(BeTrue(), "the key stayed: its slot moved with the shard")
}

// A master that lost the acknowledged writes (flushed, or rolled back to
// an older value as a lagging replica promoted by force would be) is
// reported, each lost write once; a new canary (a manager restart) sees
// no loss in what an earlier one wrote.
func TestCanaryReportsLostWrites(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, _, _, target := canaryFixture(t)
	ctx := context.Background()
	c := testCanary(t, 2*time.Second)
	for range 4 {
		g.Expect(totalLost(probeOK(g, c, target))).To(BeZero())
	}
	// Shard 0's key holds write 4; it goes back to write 1.
	key := CanaryKey(c.shards[0].slot)
	master := f.servers["node-0"].Client()
	g.Expect(master.Set(ctx, key, CanaryValue(c.epoch, 1), 0).Err()).To(Succeed())
	res := probeOK(g, c, target)
	g.Expect(res[0].Lost).To(BeEquivalentTo(3))
	g.Expect(res[1].Lost).To(BeZero())
	g.Expect(totalLost(probeOK(g, c, target))).To(BeZero(), "counted once")

	// Shard 1's master is flushed: every write since tracking began is gone.
	g.Expect(f.servers["node-2"].Client().FlushAll(ctx).Err()).To(Succeed())
	res = probeOK(g, c, target)
	g.Expect(res[0].Lost).To(BeZero())
	g.Expect(res[1].Lost).To(BeEquivalentTo(6))

	restarted := testCanary(t, 2*time.Second)
	for range 2 {
		g.Expect(totalLost(probeOK(g, restarted, target))).To(BeZero())
	}
}

// A node that never answers makes the writes of its shard fail within the
// timeout and count as outage; the other shard keeps its writes.
func TestCanaryCountsOutageOfAStalledMaster(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, _, _, target := canaryFixture(t)
	c := testCanary(t, time.Second)
	// Every shard acknowledged once, however loaded the machine.
	g.Eventually(func() []ShardProbe { return c.Probe(context.Background(), time.Now(), target) }, 10*time.Second).Should(HaveEach(HaveField("Acked", true)))
	// node-2 stops answering: SIGSTOP leaves its connections open.
	_ = f.servers["node-2"].Pause(t)
	start := time.Now()
	var outage time.Duration
	for i := range 3 {
		res := c.Probe(context.Background(), start.Add(time.Duration(i+1)*time.Second), target)
		g.Expect(res[0].Acked).To(BeTrue())
		g.Expect(res[1].Err).To(HaveOccurred())
		outage += res[1].Outage
	}
	g.Expect(outage).To(BeNumerically(">=", 3*time.Second))
	g.Expect(time.Since(start)).To(BeNumerically("<", 3*4*time.Second), "every command is bounded")
}

// A shard keeps its slot, and its lineage, while its master serves it.
// A slot another shard's master serves now moved: the shard takes its
// master's first slot and the lineage starts again. A slot the map does not
// place with any master of the cluster is a passing gap: the lineage stays
// and the probe fails.
func TestChooseSlot(t *testing.T) {
	shards := [][]string{{"10.0.0.1:6379"}, {"10.0.0.2:6379", "10.0.0.3:6379"}, {"10.0.0.4:6379"}}
	ranges := []slotRange{
		{0, 99, "10.0.0.1:6379"}, {100, 199, "10.0.0.2:6379"}, {300, 399, "10.0.0.2:6379"}, {200, 299, "10.9.9.9:6379"},
	}
	tracked := func(slot int) canaryShard {
		return canaryShard{slot: slot, lineage: Lineage{LastAcked: 5, Floor: 1}, tracking: true}
	}
	for _, tc := range []struct {
		name     string
		shard    int
		before   canaryShard
		master   string
		err      error
		slot     int
		tracking bool
	}{
		{"keeps a slot its master still serves", 1, tracked(350), "10.0.0.2:6379", nil, 350, true},
		{"a slot that moved to another shard: the master's first", 0, tracked(350), "10.0.0.1:6379", nil, 0, false},
		{"no slot chosen yet", 1, canaryShard{slot: -1}, "10.0.0.2:6379", nil, 100, false},
		{"a slot served by a master the cluster does not list", 0, tracked(250), "", errSlotUnknown, 250, true},
		{"a slot the map does not place", 1, tracked(500), "", errSlotUnknown, 500, true},
		{"a shard without slots", 2, canaryShard{slot: -1}, "", nil, -1, false},
		{"a shard whose slots all moved", 2, tracked(50), "", nil, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.before
			master, err := (&Canary{}).chooseSlot(&s, tc.shard, shards, ranges)
			if master != tc.master || err != tc.err || s.slot != tc.slot || s.tracking != tc.tracking {
				t.Errorf("got %q %v slot %d tracking %v, want %q %v slot %d tracking %v", master, err, s.slot, s.tracking, tc.master, tc.err, tc.slot, tc.tracking)
			}
			if tc.tracking && s.lineage != tc.before.lineage {
				t.Errorf("the lineage changed: %+v", s.lineage)
			}
		})
	}
}

// A replica that missed acknowledged writes (its master dropped it while
// it stalled) and takes over by force (CLUSTER FAILOVER TAKEOVER) loses
// them, and the canary says how many.
func TestCanaryReportsTheWritesALaggingReplicaTookOverWithout(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	f, _, _, target := canaryFixtureOf(t, Topology{Shards: [][]string{{"node-0", "node-1", "node-2"}}})
	c := testCanary(t, 2*time.Second)
	probeOK(g, c, target)
	master, lagging := f.servers["node-0"].Client(), f.servers["node-2"]
	// The master drops a replica that has not acknowledged for 2s; node-1
	// acknowledges every second.
	g.Expect(master.ConfigSet(ctx, "repl-timeout", "2").Err()).To(Succeed())
	// The TAKEOVER waits in node-2's socket, to run first when it resumes,
	// before it reconnects to its master.
	takeover := lagging.Client()
	g.Expect(takeover.Ping(ctx).Err()).To(Succeed())
	resume := lagging.Pause(t)
	g.Eventually(func() string {
		return master.Info(ctx, "replication").Val()
	}, 10*time.Second, 100*time.Millisecond).Should(ContainSubstring("connected_slaves:1"))
	for range 3 {
		g.Expect(totalLost(probeOK(g, c, target))).To(BeZero())
	}
	acked := c.shards[0].lineage.LastAcked
	done := make(chan error, 1)
	go func() { done <- takeover.Do(ctx, "CLUSTER", "FAILOVER", "TAKEOVER").Err() }()
	time.Sleep(200 * time.Millisecond) // the command reaches node-2's socket
	resume()
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
	// The old master follows node-2 and holds what node-2 holds.
	g.Eventually(func() string {
		return master.Info(ctx, "replication").Val()
	}, 20*time.Second, 100*time.Millisecond).Should(And(ContainSubstring("role:slave"), ContainSubstring("master_port:"+strconv.Itoa(lagging.Port)), ContainSubstring("master_link_status:up")))
	var lost uint64
	g.Eventually(func(g Gomega) {
		res := c.Probe(ctx, time.Now(), target)
		lost += totalLost(res)
		g.Expect(res[0].Acked).To(BeTrue(), "%v", res[0].Err)
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(lost).To(BeNumerically(">=", 3), "the three writes node-2 missed")
	g.Expect(lost).To(BeNumerically("<=", acked), "each acknowledged write counted once")
}
