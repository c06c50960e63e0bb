package benchredis

import (
	"fmt"
	"strings"
	"time"
)

// Table renders results as a markdown table, a row per step and tool. The
// ratio column compares each tool's keys/s with reference's on the same
// step ("-" for reference itself or when it did not run that step).
func Table(results []Result, reference string) string {
	refRate := map[string]float64{}
	for _, r := range results {
		if r.Tool == reference {
			refRate[r.Step] = r.KeysPerSecond()
		}
	}
	var b strings.Builder
	b.WriteString("| step | tool | keys moved | time | keys/s | ÷ " + reference + " | tool CPU | tool memory | max key unavailable | read latency mean / max | reads (errors) | missing or wrong | source peak RSS | target peak RSS | slots per master |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range results {
		ratio := "-"
		if ref := refRate[r.Step]; ref > 0 && r.Tool != reference {
			ratio = fmt.Sprintf("%.2f", r.KeysPerSecond()/ref)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %.0f | %s | %s | %s | %s | %s / %s | %d (%d) | %d | %s | %s | %d–%d |\n",
			r.Step, r.Tool, r.Keys, seconds(r.Elapsed), r.KeysPerSecond(), ratio,
			seconds(r.Usage.CPU), mib(r.Usage.Memory), millis(r.Reader.MaxUnavailable), millis(r.Reader.MeanLatency), millis(r.Reader.MaxLatency),
			r.Reader.Reads, errorCount(r.Reader.Errors), r.Reader.Missing+r.Reader.Wrong+r.Lost,
			mib(r.SourcePeakRSS), mib(r.TargetPeakRSS), r.SlotsMin, r.SlotsMax)
	}
	return b.String()
}

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
