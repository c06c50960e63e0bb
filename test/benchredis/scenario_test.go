package benchredis

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// ExpectSound expects a step to have lost no key, to have been read while
// it ran, to have moved keys and to have left the slots balanced within
// tolerance slots of an even share.
func ExpectSound(g Gomega, r Result, masters, tolerance int) {
	g.Expect(r.Reader.Missing).To(BeZero(), "%s, %s: the reader found keys missing: %v", r.Tool, r.Step, r.Reader.Failed)
	g.Expect(r.Reader.Wrong).To(BeZero(), "%s, %s: the reader found wrong values: %v", r.Tool, r.Step, r.Reader.Failed)
	g.Expect(r.Lost).To(BeZero(), "%s, %s: keys missing or wrong after the step", r.Tool, r.Step)
	g.Expect(r.Reader.Reads).To(BeNumerically(">", 0), "%s, %s: the reader read nothing", r.Tool, r.Step)
	g.Expect(r.Keys).To(BeNumerically(">", 0), "%s, %s: no key moved", r.Tool, r.Step)
	g.Expect(r.SlotsMin).To(BeNumerically(">=", redisadmin.NumSlots/masters-tolerance), "%s, %s", r.Tool, r.Step)
	g.Expect(r.SlotsMax).To(BeNumerically("<=", redisadmin.NumSlots/masters+1+tolerance), "%s, %s", r.Tool, r.Step)
}

// TestGrowAndShrinkWhileReading is the benchmark's scenario on a few
// thousand keys, for pkg/redisadmin alone: 3 masters grow to 5 and shrink
// back while a client reads all the time, and no read may find a key
// missing.
func TestGrowAndShrinkWhileReading(t *testing.T) {
	redistest.Require(t)
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ks := redistest.Keyspace{Prefix: "k", N: 5000, Size: 100}
	s := Scenario{
		Keys: ks,
		// Small batches and runs, so that the reader meets many slots
		// half moved, and runs end and resume between batches.
		Admin:       redisadmin.Options{MaxSlotsPerRun: 1000, SlotsPerBatch: 16, KeysPerMigrate: 2},
		StartReader: InProcessReader(t, 20000),
		Logf:        t.Logf,
	}
	results, err := s.Run(ctx, t, Ours{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(results).To(HaveLen(2))
	ExpectSound(g, results[0], After, 0)
	ExpectSound(g, results[1], Before, 0)
	for _, r := range results {
		// The reader's map of the slots goes out of date as they move.
		g.Expect(r.Redirects.Moved).To(BeNumerically(">", 0), "%s: MOVED replies", r.Step)
	}
	// Growing moves 2/5 of the keys, and shrinking moves them back.
	for _, r := range results {
		g.Expect(r.Keys).To(BeNumerically("~", ks.N*2/5, ks.N/10))
	}
	t.Log("\n" + Table(results, "redis-cli"))
}

func TestTable(t *testing.T) {
	g := NewWithT(t)
	results := []Result{
		{Tool: "ours", Step: "grow", Keys: 3000, Elapsed: time.Second, SlotsMin: 3276, SlotsMax: 3277,
			Reader: redistest.ReaderStats{Reads: 10, Errors: map[string]int{"a": 2, "b": 1}, MaxUnavailable: 1500 * time.Microsecond,
				MeanLatency: 2 * time.Millisecond, P50Latency: time.Millisecond, P99Latency: 3 * time.Millisecond, MaxLatency: 4 * time.Millisecond}},
		{Tool: "cli", Step: "grow", Keys: 2000, Elapsed: 2 * time.Second,
			Reader: redistest.ReaderStats{MeanLatency: time.Millisecond, P99Latency: 2 * time.Millisecond}},
		{Tool: "ours", Step: "shrink", Keys: 100, Elapsed: time.Second, Lost: 1, Reader: redistest.ReaderStats{Missing: 2},
			Redirects: Redirects{Moved: 7, Ask: 2}},
		{Tool: "ours", Step: "again", Keys: 1500, Elapsed: time.Second,
			Reader: redistest.ReaderStats{MeanLatency: time.Millisecond, P99Latency: time.Millisecond}},
		{Tool: "cli", Step: "again", Keys: 1000, Elapsed: time.Second,
			Reader: redistest.ReaderStats{MeanLatency: time.Millisecond, P99Latency: time.Millisecond}},
	}
	lines := strings.Split(strings.TrimSpace(Table(results, "cli")), "\n")
	g.Expect(lines).To(HaveLen(7))
	g.Expect(lines[0]).To(ContainSubstring("÷ cli"))
	g.Expect(lines[2]).To(HavePrefix("| grow | ours | 3000 | 1.00s | 3000 | 3.00 |"))
	g.Expect(lines[2]).To(ContainSubstring("| 1.5ms | 2.0ms / 1.0ms / 3.0ms / 4.0ms | 2.00 / 1.50 | missed: mean | 10 (3) | 0 / 0 | 0 |"),
		"a p99 of 1.5 times the reference's meets its goal, a mean of twice misses it")
	g.Expect(lines[2]).To(HaveSuffix("| 3276–3277 |"))
	g.Expect(lines[3]).To(HavePrefix("| grow | cli | 2000 | 2.00s | 1000 | - |"), "no ratio to itself")
	g.Expect(lines[3]).To(ContainSubstring("| - | - |"), "no goals for itself")
	g.Expect(lines[4]).To(ContainSubstring("| shrink | ours | 100 | 1.00s | 100 | - |"), "no reference for this step")
	g.Expect(lines[4]).To(ContainSubstring("| 0 (0) | 7 / 2 | 3 |"), "missing, wrong and lost keys add up")
	g.Expect(lines[5]).To(ContainSubstring("| 1.50 | "))
	g.Expect(lines[5]).To(ContainSubstring("| 1.00 / 1.00 | met |"), "1.5 times as fast meets the goal")
}

func TestParseRedirects(t *testing.T) {
	for _, tc := range []struct {
		name       string
		info       string
		moved, ask int64
		fails      bool
	}{
		{"none", "# Errorstats\r\n", 0, 0, false},
		{"both among others", "# Errorstats\r\nerrorstat_ASK:count=3\r\nerrorstat_ERR:count=9\r\nerrorstat_MOVED:count=12\r\n", 12, 3, false},
		{"a count that is no number", "errorstat_MOVED:count=x\r\n", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			moved, ask, err := parseRedirects(tc.info)
			if tc.fails {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect([]int64{moved, ask}).To(Equal([]int64{tc.moved, tc.ask}))
		})
	}
}
