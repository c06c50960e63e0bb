package dashboards

import (
	"slices"
	"strings"

	"github.com/multi-operator/multi-operator/hack/metricsdoc"
)

// Catalog is the metric names that exist for the dashboards and the
// alerts to read: the manager's, as its registry has them, and those of
// the other sources, by source.
type Catalog struct {
	registered []string
	others     map[string]string
}

// NewCatalog is the manager's metrics, ExporterMetrics and more (source:
// names), such as kube-state-metrics' for the alerts.
func NewCatalog(more map[string][]string) (Catalog, error) {
	registered, err := metricsdoc.Names()
	if err != nil {
		return Catalog{}, err
	}
	c := Catalog{registered: registered, others: map[string]string{}}
	for _, sources := range []map[string][]string{ExporterMetrics, more} {
		for source, names := range sources {
			for _, n := range names {
				c.others[n] = source
			}
		}
	}
	return c, nil
}

// Registered says whether the manager registers name.
func (c Catalog) Registered(name string) bool { return slices.Contains(c.registered, name) }

// Source is where name comes from: "manager", another source's name, or
// "" when it exists nowhere. A histogram's _bucket, _sum and _count series
// are the manager's when the histogram is.
func (c Catalog) Source(name string) string {
	if c.Registered(name) {
		return "manager"
	}
	if s := c.others[name]; s != "" {
		return s
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && c.Registered(base) {
			return "manager"
		}
	}
	return ""
}
