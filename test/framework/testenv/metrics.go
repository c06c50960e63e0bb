package testenv

import (
	"sort"
	"strings"

	"github.com/onsi/gomega"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// SeriesOf returns the series, on controller-runtime's registry, of the
// object ns/name among the metrics whose names start with prefix: the
// metric's name with its other labels, such as
// `tdset_active_rule_source{source="window"}`, to its value (a histogram's
// sample count, under the name with _count). Other objects' series are
// left out, so that a test is not disturbed by another's objects, which
// the manager's controllers reconcile in the same process.
func SeriesOf(g gomega.Gomega, prefix, ns, name string) map[string]float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	series := map[string]float64{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), prefix) {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			mine := 0
			for _, l := range m.GetLabel() {
				switch {
				case l.GetName() == "namespace" && l.GetValue() == ns, l.GetName() == "name" && l.GetValue() == name:
					mine++
				default:
					labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
				}
			}
			if mine != 2 {
				continue
			}
			sort.Strings(labels)
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Gauge != nil:
				series[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				series[key] = m.GetCounter().GetValue()
			case m.Histogram != nil:
				series[strings.Replace(key, "{", "_count{", 1)] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return series
}
