package benchredis

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// ReaderHandle is a running reader of the keys.
type ReaderHandle interface {
	// Stop stops reading and returns what the reader saw.
	Stop() (redistest.ReaderStats, error)
}

// StartReaderFunc starts a reader of ks through a cluster client seeded
// with addrs.
type StartReaderFunc func(addrs []string, ks redistest.Keyspace) (ReaderHandle, error)

// InProcessReader starts readers in this process, reading about rate keys
// a second. Their CPU time then counts as the process's: use it where
// pkg/redisadmin's CPU time does not matter.
func InProcessReader(t testing.TB, rate int) StartReaderFunc {
	return func(addrs []string, ks redistest.Keyspace) (ReaderHandle, error) {
		c := redistest.ClusterClient(t, seeds(t, addrs)...)
		return inProcess{redistest.StartReader(c, ks, rate)}, nil
	}
}

type inProcess struct{ r *redistest.Reader }

func (p inProcess) Stop() (redistest.ReaderStats, error) { return p.r.Stop(), nil }

// seeds are servers that stand for addresses, to seed a cluster client.
func seeds(t testing.TB, addrs []string) []*redistest.Server {
	out := make([]*redistest.Server, len(addrs))
	for i, a := range addrs {
		host, port, err := splitAddr(a)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = &redistest.Server{Host: host, Port: port}
	}
	return out
}

// Scenario is the benchmark's run of one tool: a fresh cluster of Before
// masters, Keys loaded, grown to After masters and shrunk back, each step
// timed while a reader reads.
type Scenario struct {
	// Keys are the keys loaded before growing.
	Keys redistest.Keyspace
	// Admin are the options of the Admin that bootstraps the cluster and,
	// for Ours, scales it.
	Admin redisadmin.Options
	// ServerArgs are more redis-server arguments for every node.
	ServerArgs []string
	// StartReader starts the reader of each step.
	StartReader StartReaderFunc
	// Logf logs progress.
	Logf func(format string, args ...any)
}

// Result is one step of one tool.
type Result struct {
	// Tool and Step name what ran.
	Tool, Step string
	// Keys is how many keys changed node.
	Keys int64
	// Elapsed is the time from the tool's start until it was done: slots
	// balanced and, shrinking, the departing nodes out of the cluster.
	Elapsed time.Duration
	// Usage is what the tool used.
	Usage Usage
	// Reader is what the reader saw during the step.
	Reader redistest.ReaderStats
	// Lost counts the keys that a full read after the step found missing
	// or wrong.
	Lost int
	// SourcePeakRSS and TargetPeakRSS are the largest peak resident set
	// size of a node that gave keys away, and of one that took keys.
	SourcePeakRSS, TargetPeakRSS int64
	// SlotsMin and SlotsMax are the fewest and most slots a master serves
	// afterwards.
	SlotsMin, SlotsMax int
	// Redirects are the MOVED and ASK replies of every node during the
	// step, the reader's and the tool's.
	Redirects Redirects
}

// KeysPerSecond is the rate at which the step moved keys.
func (r Result) KeysPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Keys) / r.Elapsed.Seconds()
}

// step is one scaling of the scenario.
type step struct {
	name string
	// op runs the step with a tool.
	op func(Tool, context.Context, *Cluster) (Usage, error)
	// sources and targets are the nodes (by index) that give keys away
	// and that take them; masters is how many masters there are after.
	sources, targets []int
	masters          int
}

// Steps are the scenario's steps, in order.
var steps = []step{
	{name: fmt.Sprintf("grow %d → %d", Before, After), op: Tool.Grow, sources: span(0, Before), targets: span(Before, After), masters: After},
	{name: fmt.Sprintf("shrink %d → %d", After, Before), op: Tool.Shrink, sources: span(Before, After), targets: span(0, Before), masters: Before},
}

func span(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// Run runs the scenario with tool on a cluster of its own, stopped at the
// end, and returns a Result per step.
func (s Scenario) Run(ctx context.Context, t testing.TB, tool Tool) ([]Result, error) {
	c, err := StartCluster(ctx, t, s.Admin, s.ServerArgs...)
	defer c.Stop()
	if err != nil {
		return nil, fmt.Errorf("bootstrapping: %w", err)
	}
	start := time.Now()
	if err := s.Keys.Fill(ctx, c.Client(Before)); err != nil {
		return nil, fmt.Errorf("loading keys: %w", err)
	}
	s.Logf("%s: loaded %d keys in %s", tool.Name(), s.Keys.N, time.Since(start).Round(time.Millisecond))
	var out []Result
	for _, st := range steps {
		r, err := s.measure(ctx, c, tool, st)
		if err != nil {
			return out, fmt.Errorf("%s, %s: %w", tool.Name(), st.name, err)
		}
		s.Logf("%s, %s: %d keys in %s, %.0f keys/s", r.Tool, r.Step, r.Keys, r.Elapsed.Round(time.Millisecond), r.KeysPerSecond())
		out = append(out, r)
	}
	return out, nil
}

// measure runs one step and measures it.
func (s Scenario) measure(ctx context.Context, c *Cluster, tool Tool, st step) (Result, error) {
	r := Result{Tool: tool.Name(), Step: st.name}
	before, err := c.keyCounts(ctx)
	if err != nil {
		return r, err
	}
	for _, srv := range c.Servers {
		if err := srv.ResetPeakRSS(); err != nil {
			return r, err
		}
	}
	if err := c.resetStats(ctx); err != nil {
		return r, err
	}
	reader, err := s.StartReader(c.Addrs(Before), s.Keys)
	if err != nil {
		return r, err
	}
	start := time.Now()
	r.Usage, err = st.op(tool, ctx, c)
	r.Elapsed = time.Since(start)
	stats, rerr := reader.Stop()
	r.Reader = stats
	if len(stats.Errors) > 0 {
		s.Logf("%s, %s: the reader's errors: %v", r.Tool, r.Step, stats.Errors)
	}
	if err != nil || rerr != nil {
		return r, fmt.Errorf("scaling: %w (reader: %v)", err, rerr)
	}
	return r, s.after(ctx, c, st, before, &r)
}

// after fills in what a step left: keys moved and lost, peak memory and
// the slots' spread.
func (s Scenario) after(ctx context.Context, c *Cluster, st step, before []int64, r *Result) error {
	after, err := c.keyCounts(ctx)
	if err != nil {
		return err
	}
	for i := range after {
		r.Keys += max(0, after[i]-before[i])
	}
	if r.SourcePeakRSS, err = peakRSS(c, st.sources); err != nil {
		return err
	}
	if r.TargetPeakRSS, err = peakRSS(c, st.targets); err != nil {
		return err
	}
	if r.SlotsMin, r.SlotsMax, err = c.slotSpread(ctx, st.masters); err != nil {
		return err
	}
	// Before the sweep below, whose own redirects are not the step's.
	if r.Redirects, err = c.redirects(ctx); err != nil {
		return err
	}
	// A fresh client: the reader's may have missed the last changes.
	_, r.Lost, err = s.Keys.Sweep(ctx, c.Client(Before), 0)
	return err
}

// peakRSS is the largest peak RSS of the nodes.
func peakRSS(c *Cluster, nodes []int) (int64, error) {
	var peak int64
	for _, i := range nodes {
		p, err := c.Servers[i].PeakRSS()
		if err != nil {
			return 0, err
		}
		peak = max(peak, p)
	}
	return peak, nil
}

// cpuTime is user plus system time of a rusage.
func cpuTime(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapMetric is the Go heap's live and not yet collected objects.
const heapMetric = "/memory/classes/heap/objects:bytes"

// selfUsage runs op and returns the CPU time this process used meanwhile
// and how far its heap grew above where it was, sampled every 10ms: what
// pkg/redisadmin took, when no reader runs in this process.
func selfUsage(op func() error) (Usage, error) {
	runtime.GC()
	base := heapBytes()
	var u Usage
	peak, err := peakWhile(10*time.Millisecond, func() (int64, bool) { return heapBytes() - base, true }, func() error {
		cpu0 := selfCPU()
		err := op()
		u.CPU = selfCPU() - cpu0
		return err
	})
	u.Memory = peak
	return u, err
}

// peakWhile runs op and returns the largest value sample gave meanwhile,
// sampled once at the start and then every interval until op returned;
// a sample that reports false does not count.
func peakWhile(interval time.Duration, sample func() (int64, bool), op func() error) (int64, error) {
	var peak int64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if v, ok := sample(); ok {
				peak = max(peak, v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := op()
	close(stop)
	<-sampled
	return peak, err
}

func heapBytes() int64 {
	sample := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}

// selfCPU is the CPU time this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return cpuTime(&ru)
}
