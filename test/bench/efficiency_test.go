//go:build bench

package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The efficiency scenario (issue "Manager efficiency") runs first: for each
// selected kind, our manager with that kind's controller alone, on that
// kind's CRD without its admission policy, so that the manager adds its
// finalizer itself, as a cluster without the policy makes it. For each kind,
// in this order, each phase after a cleanup of the one before:
//
//  1. for memcached, the kubebuilder tutorial's operator (PEER): createRounds
//     paired rounds of the client's N creates, with no operator running
//     and while the operator runs, started for the round and idle, in
//     alternating order, the last round with no operator first; between
//     rounds the operator stops and the CRs go with their
//     namespace; the last round's operator goes on: its CRs converge, then
//     it idles; then its RSS slope: restarted over those N CRs, then, once
//     it converged the rest, over -slope-n;
//  2. our manager, the same rounds, convergence and idle;
//  3. for memcached, our RSS slope, measured the same way.
//
// Each round with an operator is set against the round with none just
// before or after it, so that the slow and fast moments of two cores shared with
// the whole cluster weigh on both alike: the rounds with no operator of one
// run took from 0.86 to 1.57 s, and a baseline measured once at the start
// of the run set every later round against the cluster as it was then.

// peerKind is the kind the tutorial's operator serves, compared side by
// side, and the one whose RSS slope is measured.
const peerKind = "memcached"

// The targets for our manager. The scenario reports against them
// and fails on none: only writes in the idle window fail the run.
const (
	targetCPUPerCR = 6.8 // ms of CPU per CR, first create to end of idle
	targetRSS      = 64  // MiB of peak RSS, at N = targetRSSAt
	targetRSSAt    = 500
	targetSlope    = 10 // KiB of peak RSS per further CR
	// targetConvergeVsPeer bounds our time until all children are
	// available against the tutorial's in the same run.
	targetConvergeVsPeer = 1.1
	targetWrites         = 5 // writes per CR, without the admission policy
)

// efficiency is what one operator cost for N CRs of one kind, alone on the
// cluster: from the client's first create to the end of the idle window.
type efficiency struct {
	n int
	// baseline is the client's time for the N creates with no operator
	// running, created its time right after while the operator ran, idle:
	// the pair with the median ratio of createRounds paired rounds.
	// createdRounds lists the pairs, in the order they ran.
	baseline, created time.Duration
	createdRounds     string
	// baselineShares and createShares are the shares of the machine's
	// cores each process took over the client's creates in the median
	// pair, with no operator and while the operator ran.
	baselineShares, createShares string
	converged                    bool
	// available is from the first create to the last child seen available.
	available  time.Duration
	cpu        float64 // the operator's CPU seconds
	reconciles float64
	rss        float64 // peak RSS (VmHWM), MiB
	// writes are the operator's own, less the reviews the benchmark's
	// scrapes caused; idleWrites those of the idle window alone.
	writes, idleWrites float64
	// reads are the operator's GETs: reads past the cache, and watches it
	// opened again. Each takes a token of the client-side limit, as a
	// write does.
	reads float64
	// apiWrites are the API server's writes by resource, of every client
	// but the benchmark; idleAPIWrites those of the idle window alone,
	// which tell what the operator's idle writes were.
	apiWrites, idleAPIWrites map[string]float64
	// slope is the peak RSS per further CR, for peerKind only.
	slope slope
}

// slope is what each further CR adds to an operator's peak RSS, restarted
// over N CRs and then over more.
type slope struct {
	// why not measured; empty once measured.
	why string
	// failed marks a slope not measured because the further CRs did not
	// converge: a miss, not a measure left out.
	failed bool
	// low and high are the peak RSS (MiB) over from and over to CRs.
	low, high float64
	from, to  int
}

// kibPerCR is the slope in KiB per further CR.
func (s slope) kibPerCR() float64 { return (s.high - s.low) * 1024 / float64(s.to-s.from) }

// slopeTotal is the number of CRs of the slope's second restart.
func slopeTotal() int {
	if *slopeN == 0 {
		return 4 * *n
	}
	return *slopeN
}

// createRatio is how much longer the client's creates took with the
// operator running than without.
func (e efficiency) createRatio() float64 { return e.created.Seconds() / e.baseline.Seconds() }

// cpuPerCR is the operator's CPU per CR, in milliseconds.
func (e efficiency) cpuPerCR() float64 { return 1000 * e.cpu / float64(e.n) }

// writesPerCR is the operator's writes per CR.
func (e efficiency) writesPerCR() float64 { return e.writes / float64(e.n) }

// efficiencyMeasure is one measure of an efficiency run: the same list
// makes each kind's rows and the side-by-side table.
type efficiencyMeasure struct {
	name   string
	value  func(e efficiency) string
	target string
	// met reports whether e meets the target; nil for a measure without
	// one. applies is false where the target does not apply (peak RSS at
	// another N than targetRSSAt).
	met func(e efficiency) (met, applies bool)
	// early marks a measure taken before convergence, which a run that did
	// not converge still has.
	early bool
	// peerOnly marks a measure of peerKind alone, left out of the other
	// kinds' rows.
	peerOnly bool
	// vsPeer is the target of the side-by-side table, set against the
	// tutorial's operator in the same run; nil keeps target and met.
	vsPeer *peerTarget
}

// peerTarget is a target relative to the tutorial's operator.
type peerTarget struct {
	target string
	met    func(ours, theirs efficiency) bool
}

// sideBySideCell is m's value for ours, and its target and verdict against
// theirs.
func (m efficiencyMeasure) sideBySideCell(ours, theirs efficiency) (value, target, mark string) {
	value, mark = m.cell(ours)
	if m.vsPeer == nil || mark == "MISSED" && !ours.converged {
		return value, m.target, mark
	}
	if !theirs.converged {
		return value, m.vsPeer.target, "n/a"
	}
	if m.peerOnly && ours.slope.failed {
		return value, m.vsPeer.target, "MISSED"
	}
	if m.peerOnly && (ours.slope.why != "" || theirs.slope.why != "") {
		return value, m.vsPeer.target, "n/a"
	}
	return value, m.vsPeer.target, verdict(m.vsPeer.met(ours, theirs))
}

// cell is m's value and verdict for e.
func (m efficiencyMeasure) cell(e efficiency) (value, mark string) {
	if !e.converged && !m.early {
		return "did not converge", "MISSED"
	}
	if m.met == nil {
		return m.value(e), ""
	}
	met, applies := m.met(e)
	if !applies {
		return m.value(e), "n/a"
	}
	return m.value(e), verdict(met)
}

// efficiencyMeasures are the measures of an efficiency run, as the
// results show them.
func efficiencyMeasures() []efficiencyMeasure {
	return []efficiencyMeasure{{
		name: fmt.Sprintf("%d CRs created by the client while the operator runs, once it is idle, against no operator just before or after (median of %d paired rounds)", *n, *createRounds),
		value: func(e efficiency) string {
			return fmt.Sprintf("%.2fx: %s against %s (rounds, with / without: %s)", e.createRatio(), secs(e.created), secs(e.baseline), e.createdRounds)
		},
		// Reported, not a target: with no client-side limit, fairness to
		// other clients is the API server's (the fairness table).
		target: "-",
		early:  true,
	}, {
		name: "Share of the machine's cores while the client creates: with the operator running / with none (median pair)",
		value: func(e efficiency) string {
			return e.createShares + " / " + e.baselineShares
		},
		target: "-",
		early:  true,
	}, {
		name:   "All children available, from the first create",
		value:  func(e efficiency) string { return secs(e.available) },
		target: "-",
		vsPeer: &peerTarget{target: fmt.Sprintf("<= %.1fx the tutorial's", targetConvergeVsPeer), met: func(o, t efficiency) bool {
			return o.available.Seconds() <= targetConvergeVsPeer*t.available.Seconds()
		}},
	}, {
		name: "Operator CPU per CR, first create to end of idle",
		value: func(e efficiency) string {
			return fmt.Sprintf("%.2f ms (%.1f s in all)", e.cpuPerCR(), e.cpu)
		},
		target: fmt.Sprintf("<= %.1f ms", targetCPUPerCR),
		met:    func(e efficiency) (bool, bool) { return e.cpuPerCR() <= targetCPUPerCR, true },
		vsPeer: &peerTarget{target: "<= the tutorial's", met: func(o, t efficiency) bool { return o.cpuPerCR() <= t.cpuPerCR() }},
	}, {
		name: "Operator CPU per reconcile",
		value: func(e efficiency) string {
			return fmt.Sprintf("%.2f ms (%.1f reconciles per CR)", 1000*e.cpu/max(e.reconciles, 1), e.reconciles/float64(e.n))
		},
		target: "-",
	}, {
		name:   "Peak RSS (VmHWM) at the end of idle",
		value:  func(e efficiency) string { return mib(e.rss) },
		target: fmt.Sprintf("<= %d MiB at N=%d", targetRSS, targetRSSAt),
		met:    func(e efficiency) (bool, bool) { return e.rss <= targetRSS, e.n == targetRSSAt },
		vsPeer: &peerTarget{target: "<= the tutorial's", met: func(o, t efficiency) bool { return o.rss <= t.rss }},
	}, {
		name:   "Operator writes per CR, first create to end of idle",
		value:  func(e efficiency) string { return fmt.Sprintf("%.2f", e.writesPerCR()) },
		target: fmt.Sprintf("<= %d", targetWrites),
		met:    func(e efficiency) (bool, bool) { return e.writesPerCR() <= targetWrites, true },
	}, {
		name:   "Operator reads per CR (GETs past the cache, re-opened watches included), first create to end of idle",
		value:  func(e efficiency) string { return fmt.Sprintf("%.2f", e.reads/float64(e.n)) },
		target: "-",
	}, {
		name:   "API server writes per CR by resource, first create to end of idle (all clients but the benchmark)",
		value:  func(e efficiency) string { return formatWrites(e.apiWrites, e.n) },
		target: "-",
	}, {
		name: fmt.Sprintf("Peak RSS per further CR, restarted over N CRs and over -slope-n (%s only)", peerKind),
		value: func(e efficiency) string {
			if e.slope.why != "" {
				return e.slope.why
			}
			return fmt.Sprintf("%.1f KiB (%s over %d CRs, %s over %d)", e.slope.kibPerCR(), mib(e.slope.low), e.slope.from, mib(e.slope.high), e.slope.to)
		},
		target: fmt.Sprintf("<= %d KiB", targetSlope),
		met: func(e efficiency) (bool, bool) {
			if e.slope.failed {
				return false, true
			}
			return e.slope.kibPerCR() <= targetSlope, e.slope.why == ""
		},
		peerOnly: true,
		vsPeer:   &peerTarget{target: "<= the tutorial's", met: func(o, t efficiency) bool { return o.slope.kibPerCR() <= t.slope.kibPerCR() }},
	}, {
		name:   fmt.Sprintf("Operator writes in the %s idle window", *idle),
		value:  func(e efficiency) string { return fmt.Sprintf("%.0f", e.idleWrites) },
		target: "0",
		met:    func(e efficiency) (bool, bool) { return e.idleWrites == 0, true },
	}}
}

// efficiency runs the efficiency scenario for the selected kinds, with the
// admission policies uninstalled for its length, and adds its tables.
func (b *bench) efficiency(selected []kind) {
	if *createRounds < 1 {
		b.t.Fatalf("-rounds=%d: at least one paired round is needed", *createRounds)
	}
	env, err := manifestEnv()
	b.must(err)
	b.begin("Efficiency: one controller alone, no admission policy", fmt.Sprintf(
		"bin/manager `--max-concurrent-reconciles=%d %s` (the kind's controller alone, at the default log level and the default client-side limit (none: the benchmark's API server runs Priority and Fairness); with %s, which its Deployment sets from its limits), with only that kind's CRD applied by this scenario "+
			"and no admission policy, so the manager adds its finalizer itself. The client's %d creates, one after the other as kubectl create sends them, are timed in %d paired rounds, each "+
			"with no operator running and while the operator runs, idle (the benchmark's watches open in both), in alternating order (the last round with no operator first), so that a drift of the cluster's speed over the run weighs on both halves alike; the pair with the median ratio counts. CPU (utime + stime), reconciles and writes "+
			"(the operator's rest_client_requests_total, less the reviews the benchmark's scrapes of our secure metrics cause) count from the "+
			"first create to the end of the idle window, and the CPU includes serving the benchmark's scrapes (10 a second while it waits for the last writes); "+
			"peak RSS is VmHWM at its end. Targets are reported, not enforced; only idle writes "+
			"fail the run.", *reconcilers, strings.Join(aloneArgs(kind{name: "<kind>"}), " "), strings.Join(env, " "), *n, *createRounds),
		"Measure", "Value", "Target", "")
	b.removePolicies()
	defer b.restorePolicies()
	var ours, theirs *efficiency
	for _, k := range selected {
		o, t := b.alone(k)
		if k.name == peerKind {
			ours, theirs = o, t
		}
	}
	b.cleanup()
	switch {
	case ours == nil:
		b.t.Logf("side by side: -kinds leaves out %s, the tutorial's kind: no side-by-side table", peerKind)
	case theirs != nil:
		b.sideBySide(*ours, *theirs)
		b.guardConvergence(*ours, *theirs)
	}
}

// removePolicies deletes every kind's admission policy, for the scenario.
func (b *bench) removePolicies() {
	b.t.Helper()
	for _, dir := range policies(kinds) {
		b.kubectl("delete", "--ignore-not-found", "-k", b.configDir(dir))
	}
}

// restorePolicies installs the admission policies again, as the cluster
// had them before the scenario. It runs deferred, also after a failure, so
// it reports its own errors rather than stopping the test a second time.
func (b *bench) restorePolicies() {
	for _, dir := range policies(kinds) {
		if err := runKubectl("apply", "--server-side", "-k", b.configDir(dir)); err != nil {
			b.t.Errorf("restoring the admission policy: %v", err)
		}
	}
}

// alone runs kind k's phases of the scenario (see the top of this file)
// and returns our manager's run, and the tutorial's for peerKind when it
// ran.
func (b *bench) alone(k kind) (ours, theirs *efficiency) {
	b.cleanup()
	b.install([]kind{k}, k.crdDir())
	b.must(b.awaitPolicy(k, false))
	ns := b.namespace("bench-alone-" + k.name)

	if k.name == peerKind && b.peerWanted() {
		e, _ := b.runAlone(func(round int) *managerProcess {
			return b.startPeer(fmt.Sprintf("tutorial-%s-%d", k.name, round))
		}, k, ns, false)
		e.slope = b.rssSlope(k, ns, e.converged, func(name string, _ bool) *managerProcess {
			return b.startPeer("tutorial-" + name)
		})
		theirs = &e
		b.cleanup()
		b.namespace(ns)
	}

	b.authorize()
	args := aloneArgs(k)
	e, mgr := b.runAlone(func(round int) *managerProcess {
		return b.start(fmt.Sprintf("alone-%s-%d", k.name, round), args...)
	}, k, ns, true)
	e.slope = b.rssSlope(k, ns, e.converged, func(name string, unthrottled bool) *managerProcess {
		if unthrottled {
			// So that the further CRs converge quickly: a restart over
			// converged CRs writes nothing either way.
			return b.start(name, slices.Concat(args, []string{"--kube-api-qps=0"})...)
		}
		return b.start(name, args...)
	})
	for _, m := range efficiencyMeasures() {
		if m.peerOnly && k.name != peerKind {
			continue
		}
		value, mark := m.cell(e)
		b.add(k.name+": "+m.name, value, m.target, mark)
	}
	if e.converged && e.idleWrites != 0 {
		b.failed = append(b.failed, fmt.Sprintf("%s alone: %.0f manager writes in the idle window (the API server's writes meanwhile of the resources such a run writes, all clients but the benchmark: %s): see %s",
			k.name, e.idleWrites, formatWrites(e.idleAPIWrites, 1), mgr.Log.Name()))
	}
	return &e, theirs
}

// aloneArgs are our manager's flags in the scenario: kind k's controller
// alone, the default log level (the scale part's debug log costs CPU that
// a user's manager does not spend), then -alone-flags.
func aloneArgs(k kind) []string {
	return append([]string{"--controllers=" + k.name, "--zap-log-level=info"}, strings.Fields(*aloneFlags)...)
}

// peerWanted says whether the tutorial's operator is to run, and why not
// when it is not.
func (b *bench) peerWanted() bool {
	switch {
	case !*peer:
		b.t.Log("side by side: -peer=false: the tutorial's Memcached operator is not run")
		return false
	case peerBin == "":
		b.t.Log("side by side: PEER is empty: the tutorial's Memcached operator is not run (make bench builds it and sets PEER)")
		return false
	}
	return true
}

// createRound is one timed round of the client's N creates.
type createRound struct {
	took time.Duration
	// shares are the shares of the machine's cores each process took
	// over the round (cpuShares).
	shares string
}

// pairedRound is one round of the client's N creates with no operator
// running and, just before or after, with the operator running, idle.
type pairedRound struct {
	without, with createRound
}

// ratio is how much longer the creates took with the operator running.
func (p pairedRound) ratio() float64 { return p.with.took.Seconds() / p.without.took.Seconds() }

// medianPair returns the pair of rounds with the median ratio, and each
// pair's times and ratio, in the order they ran.
func medianPair(rounds []pairedRound) (median pairedRound, each string) {
	pairs := make([]string, len(rounds))
	for i, r := range rounds {
		pairs[i] = fmt.Sprintf("%.2f / %.2f s (%.2fx)", r.with.took.Seconds(), r.without.took.Seconds(), r.ratio())
	}
	sorted := slices.SortedFunc(slices.Values(rounds), func(x, y pairedRound) int { return cmp.Compare(x.ratio(), y.ratio()) })
	return sorted[nearestRank(len(sorted), 0.5)], strings.Join(pairs, ", ")
}

// withoutOperator times the client's N creates of kind k in ns with no
// operator running, and deletes them.
func (b *bench) withoutOperator(k kind, ns string) createRound {
	b.awaitNoCRs(k)
	r := b.timeCreates(k, ns, 0)
	b.deleteCRs(k, ns)
	return r
}

// startIdle starts an operator with start and waits until it has nothing
// left to do: a client's burst meets an operator that has been running,
// not one that became ready a moment before (in the first second after
// its start, the same manager slowed the client's creates 1.8x instead of
// 1.1x; README, Scale).
func (b *bench) startIdle(start func() *managerProcess) *managerProcess {
	m := start()
	b.drain(m)
	return m
}

// pairRound times one paired round of the client's N creates of kind k in
// ns: with no operator and with the operator that start starts, once it
// is idle; withFirst says which goes first. After the round with the
// operator, it stops the operator and deletes ns, with the CRs and
// whatever the operator made of them, and creates it again.
//
// The rounds alternate the order (runAlone): a cluster that slows down or
// speeds up over a run (each kind's first round with no operator was the
// fastest of its run) would otherwise always weigh on the same half of
// each pair.
func (b *bench) pairRound(start func() *managerProcess, k kind, ns string, withFirst bool) pairedRound {
	var r pairedRound
	if !withFirst {
		r.without = b.withoutOperator(k, ns)
	}
	b.awaitNoCRs(k)
	m := b.startIdle(start)
	r.with = b.timeCreates(k, ns, m.Pid())
	m.Stop()
	b.deleteNamespaces(ns)
	b.namespace(ns)
	if withFirst {
		r.without = b.withoutOperator(k, ns)
	}
	return r
}

// timeCreates times the client's N creates of kind k in ns, the operator
// (pid operator, 0 for none) among the processes whose share of the cores
// it reports, with the watches of an operator's run open: the API server
// sends their events while it takes the creates, with an operator and
// without.
func (b *bench) timeCreates(k kind, ns string, operator int) createRound {
	ctx, stop := context.WithCancel(b.ctx)
	defer stop()
	b.watchKind(ctx, k, ns)
	return b.timedCreates(k, ns, operator)
}

// timedCreates makes the client's N creates of kind k in ns and returns
// how long they took and what each process took of the machine's cores
// meanwhile, the operator (pid operator, if above 0) among them.
func (b *bench) timedCreates(k kind, ns string, operator int) createRound {
	cpu0, began := machineCPUWith(operator), time.Now()
	b.must(b.createOneByOne(k, ns))
	took := time.Since(began)
	return createRound{took: took, shares: cpuShares(cpu0, machineCPUWith(operator), took, runtime.NumCPU())}
}

// createOneByOne creates the N CRs of kind k in ns one after the other, as
// `kubectl create -f` of a list does: the client, whose creates
// the operator's work slows down. (The scale part's parallel creates are
// bound by the API server instead.)
func (b *bench) createOneByOne(k kind, ns string) error {
	for i := range *n {
		if err := b.c.Create(b.ctx, k.object(ns, crName(k, i))); err != nil {
			return err
		}
	}
	return nil
}

// runAlone times the client's N creates of kind k in ns in createRounds
// paired rounds, each with no operator running and with an operator from
// start (given the round) running, idle, in alternating order, the last
// round with no operator first; the last round's operator
// goes on to converge its CRs (all children available), waits until it
// stops writing, and idles. With awaitReady, the idle window also waits
// until every CR reports Ready (ours do; the tutorial's CRs report
// Available, which the benchmark does not read). It returns what that last
// round cost and the median pair's creates, and the last round's operator,
// stopped.
func (b *bench) runAlone(start func(round int) *managerProcess, k kind, ns string, awaitReady bool) (efficiency, *managerProcess) {
	b.t.Helper()
	e := efficiency{n: *n}
	rounds := make([]pairedRound, 0, *createRounds)
	// The last round, whose operator goes on, runs without the operator
	// first: the rounds before it alternate so that as many of the pairs
	// as can ran the other way round.
	for i := range *createRounds - 1 {
		withFirst := (*createRounds-1-i)%2 == 1
		rounds = append(rounds, b.pairRound(func() *managerProcess { return start(i) }, k, ns, withFirst))
	}
	without := b.withoutOperator(k, ns)
	ctx, stop := context.WithCancel(b.ctx)
	defer stop()
	children, ready := b.watchKind(ctx, k, ns)
	m := b.startIdle(func() *managerProcess { return start(*createRounds - 1) })
	defer m.Stop()
	m0, a0 := b.scrape(m), b.scrapeAPI()
	cpu0, err := m.cpuSeconds()
	b.must(err)
	began := time.Now()
	rounds = append(rounds, pairedRound{without: without, with: b.timedCreates(k, ns, m.Pid())})
	median, each := medianPair(rounds)
	e.baseline, e.baselineShares = median.without.took, median.without.shares
	e.created, e.createShares, e.createdRounds = median.with.took, median.with.shares, each
	last, err := awaitMatched(children, *n, convergeDeadline(began, *n))
	if err != nil {
		b.t.Errorf("%s alone: children: %v: see %s", k.name, err, m.Log.Name())
		return e, m
	}
	e.available = last.Sub(began)
	// A CR's Ready can follow its child's availability by more than the
	// drain's quiet 2 s: a WhaleSay's status write waits behind its pod
	// list and log read in the client-side limit, and in a full run 7 of
	// them fell into the idle window.
	if awaitReady {
		if _, err := awaitMatched(ready, *n, convergeDeadline(began, *n)); err != nil {
			b.t.Errorf("%s alone: Ready: %v: see %s", k.name, err, m.Log.Name())
			return e, m
		}
	}
	e.converged = true
	// The idle window starts once the writes that follow the CRs' Ready
	// (events) are out.
	b.drain(m)
	m1, a1 := b.scrape(m), b.scrapeAPI()
	time.Sleep(*idle)
	m2, a2 := b.scrape(m), b.scrapeAPI()
	cpu1, err := m.cpuSeconds()
	b.must(err)
	e.rss, err = m.procStatus("VmHWM")
	b.must(err)

	total := m2.sub(m0)
	e.cpu = cpu1 - cpu0
	e.reconciles = total.sum("controller_runtime_reconcile_total", nil)
	e.writes = m.writes(total, a2.sub(a0))
	e.idleWrites = m.writes(m2.sub(m1), a2.sub(a1))
	e.reads = readsByManager(total)
	e.apiWrites = k.writesOf(a2.sub(a0))
	e.idleAPIWrites = apiWrites(a2.sub(a1), k.ownResources)
	return e, m
}

// awaitMatched waits until f has matched want objects, at most until
// deadline, and returns when it saw the last of them.
func awaitMatched(f *firstSeen, want int, deadline time.Time) (time.Time, error) {
	for time.Now().Before(deadline) {
		if _, matched := f.counts(); matched >= want {
			return f.lastMatched(), nil
		}
		if f.broken() {
			return time.Time{}, errors.New("the benchmark's watch ended (410 Gone)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, matched := f.counts()
	return time.Time{}, fmt.Errorf("%d of %d available at the deadline", matched, want)
}

// rssSlope measures what each further CR of kind k adds to the peak RSS
// of an operator restarted over them: once over the N CRs in ns that its
// run converged, once over slopeTotal() after it converged the rest.
// start starts the operator, unthrottled for the restart that converges
// the further CRs. Only peerKind is measured, and only after a converged
// run.
func (b *bench) rssSlope(k kind, ns string, converged bool, start func(name string, unthrottled bool) *managerProcess) slope {
	s := slope{from: *n, to: slopeTotal()}
	switch {
	case k.name != peerKind:
		s.why = "not measured: " + peerKind + " only"
		return s
	case !converged:
		s.why = "not measured: the run did not converge"
		return s
	case s.to < 0:
		s.why = "not measured: -slope-n=-1"
		return s
	case s.to <= s.from:
		s.why = fmt.Sprintf("not measured: -slope-n=%d is not above -n=%d", s.to, s.from)
		return s
	}
	low := start(fmt.Sprintf("slope-%s-%d", k.name, s.from), true)
	s.low = b.settle(low, s.from)
	if !b.grow(low, k, ns, s.from, s.to) {
		low.Stop()
		s.why, s.failed = "not measured: the further CRs did not converge", true
		return s
	}
	// The new CRs' last status writes, so that the restart over all of
	// them finds them as the first N: converged and Ready.
	b.drain(low)
	low.Stop()
	high := start(fmt.Sprintf("slope-%s-%d", k.name, s.to), false)
	s.high = b.settle(high, s.to)
	high.Stop()
	return s
}

// grow creates kind k's CRs numbered from to to-1 in ns and waits until
// their children are available, which m converges; false if they did not
// in time.
func (b *bench) grow(m *managerProcess, k kind, ns string, from, to int) bool {
	ctx, stop := context.WithCancel(b.ctx)
	defer stop()
	// Only the new CRs' children count: a status event of an old one must
	// not stand in for a new one.
	fresh := b.watchFirst(ctx, k.childResource(), ns, k.childAvailable, controlledFrom(k, from))
	began := time.Now()
	b.must(b.createRange(k, ns, from, to))
	if _, err := awaitMatched(fresh, to-from, convergeDeadline(began, to-from)); err != nil {
		b.t.Errorf("%s RSS slope: the %d further CRs' children: %v: see %s", k.name, to-from, err, m.Log.Name())
		return false
	}
	return true
}

// controlledFrom keys a child by the UID of its controller, a CR of kind
// k, and only the child of a CR numbered from on (see crName).
func controlledFrom(k kind, from int) func(*unstructured.Unstructured) (types.UID, bool) {
	return func(u *unstructured.Unstructured) (types.UID, bool) {
		ref := metav1.GetControllerOfNoCopy(u)
		if ref == nil {
			return "", false
		}
		suffix, ok := strings.CutPrefix(ref.Name, k.name+"-")
		i, err := strconv.Atoi(suffix)
		return ref.UID, ok && err == nil && i >= from
	}
}

// guardConvergence fails the run when our children took more than
// -max-converge-vs-peer times the tutorial's to become available: CI's
// smoke run keeps a client-side limit from coming back by default, which
// made a burst converge an order of magnitude slower than the tutorial.
func (b *bench) guardConvergence(ours, theirs efficiency) {
	if *maxConvergeVsPeer <= 0 || !ours.converged || !theirs.converged {
		return
	}
	ratio := ours.available.Seconds() / theirs.available.Seconds()
	if ratio > *maxConvergeVsPeer && ours.available-theirs.available > *convergeVsPeerSlack {
		b.failed = append(b.failed, fmt.Sprintf("%s: all children available after %s, %.2fx the tutorial's %s (-max-converge-vs-peer=%.1f, -converge-vs-peer-slack=%s)",
			peerKind, secs(ours.available), ratio, secs(theirs.available), *maxConvergeVsPeer, *convergeVsPeerSlack))
	}
}

// sideBySide adds the table of our manager against the tutorial's
// operator, measure by measure, with the target and verdict for ours.
func (b *bench) sideBySide(ours, theirs efficiency) {
	b.begin(fmt.Sprintf("Side by side: ours vs the kubebuilder tutorial's Memcached operator, %d CRs", *n), fmt.Sprintf(
		"The tutorial's operator (test/peers/tutorialmemcached, PEER) at its own defaults: one worker, development (debug) logging, plain HTTP metrics. "+
			"As in the tutorial, all its Deployments share one selector, so kube-controller-manager checks every other ReplicaSet of the namespace on each sync: "+
			"its time until all children are available is partly kube-controller-manager's. Its one-minute requeue rewrites every status, "+
			"so it writes in an idle window of a minute or more. "+
			"Ours as in the table above. Both on the same %s CRD without the admission policy, measured the same way, each round "+
			"against a round with no operator just before or after it; the tutorial ran first. The targets are ours: convergence, CPU per CR, peak RSS and RSS per further CR are set against the tutorial's in this run, the others as in the table above.", peerKind),
		"Measure", "Ours", "Tutorial", "Target (ours)", "Ours vs target")
	for _, m := range efficiencyMeasures() {
		o, target, v := m.sideBySideCell(ours, theirs)
		t, _ := m.cell(theirs)
		b.addRow(m.name, o, t, target, v)
	}
}
