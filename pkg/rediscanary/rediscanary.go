// Package rediscanary runs the write canaries of the RedisClusters that
// enable one: the no-data-loss test as a live signal. One leader-elected
// Runnable holds a registry of clusters, which the RedisCluster controller
// keeps up to date, and probes each (pkg/redisadmin's Canary) every
// interval from a bounded pool of workers. A cluster has at most one probe
// in flight, every probe has a deadline, and a slow or hostile cluster
// holds one worker for at most that deadline.
package rediscanary

import (
	"context"
	"crypto/x509"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/multi-operator/multi-operator/pkg/objectmetrics"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// Bounds of a cluster's probes.
const (
	// MaxProbeTime bounds one probe of a cluster, whatever its interval.
	MaxProbeTime = 10 * time.Second
	// MaxCommandTime bounds each command of a probe; shorter intervals
	// get half of the interval.
	MaxCommandTime = time.Second
	// DefaultWorkers is how many clusters are probed at once.
	DefaultWorkers = 8
	// tick is how often the Runner looks for clusters that are due.
	tick = 200 * time.Millisecond
)

var (
	// WritesLost counts acknowledged writes the canary found lost.
	WritesLost = objectmetrics.CounterVec("rediscluster_canary_acknowledged_writes_lost_total",
		"Writes of the RedisCluster's canary that a replica had acknowledged (WAIT) and a later read found lost, by shard (0 to spec.size-1).", "shard")
	// OutageSeconds counts the time the canary's writes failed.
	OutageSeconds = objectmetrics.CounterVec("rediscluster_canary_write_outage_seconds_total",
		"Seconds in which the RedisCluster's canary could not write to a shard, or no replica acknowledged its write in time, by shard (0 to spec.size-1).", "shard")
)

func init() {
	metrics.Registry.MustRegister(WritesLost, OutageSeconds)
}

// Config is one cluster's canary, as its reconcile last saw it.
type Config struct {
	// Interval is the time between two probes.
	Interval time.Duration
	// Target is the cluster's shards and the replicas a write waits for.
	Target redisadmin.CanaryTarget
	// Password is the canary user's.
	Password string
	// TLSRootCAs, when set, makes the canary speak TLS.
	TLSRootCAs *x509.CertPool
	// Rollout names the rollout in progress and Step its current step;
	// empty when none. Their counts restart when they change.
	Rollout, Step string
}

// Totals are what the canary found in some span of time.
type Totals struct {
	// WritesLost is how many acknowledged writes were found lost.
	WritesLost uint64
	// OutageSeconds is the time writes failed, summed over the shards.
	OutageSeconds float64
}

func (t *Totals) add(lost uint64, outage time.Duration) {
	t.WritesLost += lost
	t.OutageSeconds += outage.Seconds()
}

// Snapshot is what the canary found since the cluster was registered with
// this manager, during the current rollout and during its current step.
type Snapshot struct {
	Total, Rollout, Step Totals
	// Since is when the cluster was registered: Total counts from then.
	Since time.Time
	// LastLoss is when a loss was last found, zero when never, and
	// LastLossShard on which shard.
	LastLoss      time.Time
	LastLossShard int
	// Probes counts the probes done.
	Probes int
}

// cluster is one registered cluster.
type cluster struct {
	key      types.NamespacedName
	cfg      Config
	canary   *redisadmin.Canary
	renew    bool // options changed: a new Canary after the probe in flight
	next     time.Time
	inFlight bool
	// slow says the last probe ran into a command's timeout: a stalled
	// or hostile node. Slow clusters share half of the workers.
	slow    bool
	removed bool
	snap    Snapshot
}

// Runner probes the registered clusters. It is a manager Runnable that
// runs on the leader only.
type Runner struct {
	mu       sync.Mutex
	clusters map[types.NamespacedName]*cluster
	workers  int
	// slowInFlight counts the probes in flight of slow clusters.
	slowInFlight int
	onLoss       func(types.NamespacedName)
	now          func() time.Time
}

// New returns a Runner with workers workers (DefaultWorkers when zero)
// that calls onLoss, which must not block, after a probe found a loss.
func New(workers int, onLoss func(types.NamespacedName)) *Runner {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	if onLoss == nil {
		onLoss = func(types.NamespacedName) {}
	}
	return &Runner{clusters: map[types.NamespacedName]*cluster{}, workers: workers, onLoss: onLoss, now: time.Now}
}

// NeedLeaderElection is true: one canary per cluster writes, the leader's.
func (r *Runner) NeedLeaderElection() bool { return true }

// Set registers key's canary, or updates it. A changed password, CA or
// interval (which sets the commands' timeout) starts a new Canary (a new epoch: what the old one wrote is not taken for
// a loss); fewer shards drop the series of the others.
func (r *Runner) Set(key types.NamespacedName, cfg Config) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.clusters[key]
	if !ok {
		c = &cluster{key: key, cfg: cfg, next: r.now()}
		c.snap.Since = c.next
		c.canary = newCanary(cfg)
		r.clusters[key] = c
		for i := range cfg.Target.Shards {
			// At zero from the start: increase() needs a sample before the
			// first increment.
			WritesLost.WithLabelValues(key.Namespace, key.Name, shardLabel(i))
			OutageSeconds.WithLabelValues(key.Namespace, key.Name, shardLabel(i))
		}
		return
	}
	old := c.cfg
	c.cfg = cfg
	if old.Password != cfg.Password || old.Interval != cfg.Interval || old.TLSRootCAs != cfg.TLSRootCAs && !old.TLSRootCAs.Equal(cfg.TLSRootCAs) {
		c.renew = true
		if !c.inFlight {
			c.renewCanary()
		}
	}
	if old.Rollout != cfg.Rollout {
		c.snap.Rollout = Totals{}
	}
	if old.Rollout != cfg.Rollout || old.Step != cfg.Step {
		c.snap.Step = Totals{}
	}
	for i := len(cfg.Target.Shards); i < len(old.Target.Shards); i++ {
		WritesLost.DeleteLabelValues(key.Namespace, key.Name, shardLabel(i))
		OutageSeconds.DeleteLabelValues(key.Namespace, key.Name, shardLabel(i))
	}
	for i := len(old.Target.Shards); i < len(cfg.Target.Shards); i++ {
		WritesLost.WithLabelValues(key.Namespace, key.Name, shardLabel(i))
		OutageSeconds.WithLabelValues(key.Namespace, key.Name, shardLabel(i))
	}
}

// Remove forgets key's canary and its series.
func (r *Runner) Remove(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.clusters[key]
	if !ok {
		return // every cluster without a canary comes here at each reconcile
	}
	c.removed = true
	if !c.inFlight {
		c.canary.Close()
	}
	delete(r.clusters, key)
	objectmetrics.Forget(key.Namespace, key.Name, WritesLost, OutageSeconds)
}

// Snapshot returns what key's canary found, and whether it is registered.
func (r *Runner) Snapshot(key types.NamespacedName) (Snapshot, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.clusters[key]
	if !ok {
		return Snapshot{}, false
	}
	return c.snap, true
}

func newCanary(cfg Config) *redisadmin.Canary {
	return redisadmin.NewCanary(redisadmin.CanaryOptions{
		Password: cfg.Password, TLSRootCAs: cfg.TLSRootCAs, Timeout: commandTime(cfg.Interval),
	})
}

// renewCanary replaces the Canary; no probe may be in flight.
func (c *cluster) renewCanary() {
	c.canary.Close()
	c.canary = newCanary(c.cfg)
	c.renew = false
}

// commandTime is the bound of each command of a probe every interval.
func commandTime(interval time.Duration) time.Duration {
	return min(max(interval/2, 10*time.Millisecond), MaxCommandTime)
}

// probeTime is the bound of a probe every interval.
func probeTime(interval time.Duration) time.Duration {
	return min(max(interval, time.Second), MaxProbeTime)
}

func shardLabel(i int) string { return strconv.Itoa(i) }

// Start probes the due clusters until ctx ends.
func (r *Runner) Start(ctx context.Context) error {
	work := make(chan *cluster)
	var wg sync.WaitGroup
	for range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				r.probe(ctx, c)
			}
		}()
	}
	ticker := time.NewTicker(tick)
	defer func() {
		ticker.Stop()
		close(work)
		wg.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, c := range r.clusters {
			c.canary.Close()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			r.dispatch(work)
		}
	}
}

// dispatch hands the due clusters without a probe in flight to idle
// workers, the longest due first; those left wait for the next tick.
func (r *Runner) dispatch(work chan<- *cluster) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	var due []*cluster
	for _, c := range r.clusters {
		if !c.inFlight && !now.Before(c.next) {
			due = append(due, c)
		}
	}
	slices.SortFunc(due, func(a, b *cluster) int { return a.next.Compare(b.next) })
	for _, c := range due {
		if c.slow && r.slowInFlight >= max(r.workers/2, 1) {
			continue
		}
		select {
		case work <- c:
			c.inFlight = true
			if c.slow {
				r.slowInFlight++
			}
		default:
			return // every worker is busy
		}
	}
}

// probe runs one probe of c and records what it found.
func (r *Runner) probe(ctx context.Context, c *cluster) {
	r.mu.Lock()
	cfg, canary, start, wasSlow := c.cfg, c.canary, r.now(), c.slow
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, probeTime(cfg.Interval))
	res := canary.Probe(ctx, start, cfg.Target)
	cancel()

	r.mu.Lock()
	c.inFlight = false
	if wasSlow {
		r.slowInFlight--
	}
	end := r.now()
	c.slow = end.Sub(start) >= commandTime(cfg.Interval)
	// A probe that outlasted its interval (a stalled node) waits a whole
	// interval after it ends, leaving the workers to the others meanwhile.
	c.next = start.Add(cfg.Interval)
	if end.After(c.next) {
		c.next = end.Add(cfg.Interval)
	}
	if c.removed {
		r.mu.Unlock()
		canary.Close()
		return
	}
	var lost uint64
	ns, name := c.key.Namespace, c.key.Name
	for i, p := range res {
		if i >= len(c.cfg.Target.Shards) {
			break // the cluster shrank meanwhile
		}
		for _, t := range []*Totals{&c.snap.Total, &c.snap.Rollout, &c.snap.Step} {
			t.add(p.Lost, p.Outage)
		}
		if p.Lost > 0 {
			lost += p.Lost
			c.snap.LastLoss, c.snap.LastLossShard = start, i
			WritesLost.WithLabelValues(ns, name, shardLabel(i)).Add(float64(p.Lost))
		}
		if p.Outage > 0 {
			OutageSeconds.WithLabelValues(ns, name, shardLabel(i)).Add(p.Outage.Seconds())
		}
	}
	c.snap.Probes++
	if c.renew {
		c.renewCanary()
	}
	r.mu.Unlock()
	if lost > 0 {
		r.onLoss(c.key)
	}
}
