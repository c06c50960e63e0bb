package benchredis

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The goals of issue 42 for each step, against the reference tool on the
// same step: move keys at least SpeedGoal times as fast, while the
// reader's mean and p99 latency stay within LatencyGoal times the
// reference's.
const (
	// SpeedGoal is the least keys/s ratio to the reference.
	SpeedGoal = 1.5
	// LatencyGoal is the largest ratio of the reader's mean, and of its
	// p99, latency to the reference's.
	LatencyGoal = 1.5
)

// Table renders results as a markdown table, a row per step and tool. The
// ratio columns compare each tool's keys/s and read latency (mean, p99)
// with reference's on the same step, and the goals column says whether
// they meet SpeedGoal and LatencyGoal ("-" for reference itself or when it
// did not run that step).
func Table(results []Result, reference string) string {
	ref := map[string]Result{}
	for _, r := range results {
		if r.Tool == reference {
			ref[r.Step] = r
		}
	}
	var b strings.Builder
	b.WriteString("| step | tool | keys moved | time | keys/s | ÷ " + reference + " | tool CPU | tool memory | max key unavailable | read latency mean / p50 / p99 / max | latency ÷ " + reference + " mean / p99 | goals | reads (errors) | redirects MOVED / ASK | missing or wrong | source peak RSS | target peak RSS | slots per master |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range results {
		speed, latency, goals := "-", "-", "-"
		if c, ok := ref[r.Step]; ok && r.Tool != reference {
			v := against(r, c)
			speed, latency, goals = ratio(v.speed), ratio(v.mean)+" / "+ratio(v.p99), v.goals()
		}
		l := r.Reader
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %.0f | %s | %s | %s | %s | %s / %s / %s / %s | %s | %s | %d (%d) | %d / %d | %d | %s | %s | %d–%d |\n",
			r.Step, r.Tool, r.Keys, seconds(r.Elapsed), r.KeysPerSecond(), speed,
			seconds(r.Usage.CPU), mib(r.Usage.Memory), millis(l.MaxUnavailable),
			millis(l.MeanLatency), millis(l.P50Latency), millis(l.P99Latency), millis(l.MaxLatency), latency, goals,
			l.Reads, errorCount(l.Errors), r.Redirects.Moved, r.Redirects.Ask, l.Missing+l.Wrong+r.Lost,
			mib(r.SourcePeakRSS), mib(r.TargetPeakRSS), r.SlotsMin, r.SlotsMax)
	}
	return b.String()
}

// versus is how a step of one tool compares with the reference's: its
// keys/s and its reader's mean and p99 latency, each divided by the
// reference's.
type versus struct {
	speed, mean, p99 float64
}

func against(r, ref Result) versus {
	return versus{
		speed: div(r.KeysPerSecond(), ref.KeysPerSecond()),
		mean:  div(float64(r.Reader.MeanLatency), float64(ref.Reader.MeanLatency)),
		p99:   div(float64(r.Reader.P99Latency), float64(ref.Reader.P99Latency)),
	}
}

// goals is "met", or "missed: " and the measures that miss their goal.
func (v versus) goals() string {
	var missed []string
	if v.speed < SpeedGoal {
		missed = append(missed, "keys/s")
	}
	if v.mean > LatencyGoal {
		missed = append(missed, "mean")
	}
	if v.p99 > LatencyGoal {
		missed = append(missed, "p99")
	}
	if len(missed) == 0 {
		return "met"
	}
	return "missed: " + strings.Join(missed, ", ")
}

// div is a/b, and when b is 0, 1 if a is too and infinity otherwise.
func div(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return a / b
}

func ratio(v float64) string { return fmt.Sprintf("%.2f", v) }

func errorCount(errs map[string]int) int {
	n := 0
	for _, c := range errs {
		n += c
	}
	return n
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
func millis(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
