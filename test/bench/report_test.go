//go:build bench

package bench

import (
	"testing"
	"time"
)

// TestReportStatsOf checks that a client's creates are summed up over the
// window they began in, and that an empty window gives nothing.
func TestReportStatsOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cs := []created{
		{at: t0, took: 10 * time.Millisecond},
		{at: t0.Add(time.Second), took: 20 * time.Millisecond},
		{at: t0.Add(2 * time.Second), took: 60 * time.Millisecond},
	}
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     createStats
	}{
		{"all", t0, t0.Add(3 * time.Second), createStats{count: 3, mean: 30 * time.Millisecond, p99: 60 * time.Millisecond}},
		{"the end is open", t0, t0.Add(2 * time.Second), createStats{count: 2, mean: 15 * time.Millisecond, p99: 20 * time.Millisecond}},
		{"the start is closed", t0.Add(time.Second), t0.Add(time.Hour), createStats{count: 2, mean: 40 * time.Millisecond, p99: 60 * time.Millisecond}},
		{"none", t0.Add(time.Hour), t0.Add(2 * time.Hour), createStats{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statsOf(cs, tc.from, tc.to); got != tc.want {
				t.Errorf("statsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestReportSideBySideSlope checks the verdict of the RSS slope beside the
// tutorial's: a slope of ours that failed is a miss, whatever the
// tutorial's, and one left out on either side is not applicable.
func TestReportSideBySideSlope(t *testing.T) {
	var m efficiencyMeasure
	for _, c := range efficiencyMeasures() {
		if c.peerOnly && c.vsPeer != nil {
			m = c
		}
	}
	if m.vsPeer == nil {
		t.Fatal("no measure of the slope beside the tutorial's")
	}
	measured := slope{low: 50, high: 51, from: 100, to: 200}
	for _, tc := range []struct {
		name         string
		ours, theirs slope
		wantVerdict  string
	}{
		{"ours failed, theirs measured", slope{why: "the further CRs did not converge", failed: true}, measured, "MISSED"},
		{"ours failed, theirs left out", slope{why: "the further CRs did not converge", failed: true}, slope{why: "-slope-n is -1"}, "MISSED"},
		{"both left out", slope{why: "-slope-n is -1"}, slope{why: "-slope-n is -1"}, "n/a"},
		{"ours no steeper", measured, slope{low: 50, high: 52, from: 100, to: 200}, "ok"},
		{"ours steeper", slope{low: 50, high: 53, from: 100, to: 200}, measured, "MISSED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := efficiency{converged: true, slope: tc.ours}
			theirs := efficiency{converged: true, slope: tc.theirs}
			if _, _, got := m.sideBySideCell(ours, theirs); got != tc.wantVerdict {
				t.Errorf("verdict = %q, want %q", got, tc.wantVerdict)
			}
		})
	}
}
