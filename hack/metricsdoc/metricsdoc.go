// Package metricsdoc builds the metrics reference, docs/metrics.md, from
// the metrics the project's packages register on controller-runtime's
// registry, so that the page cannot drift from the code: make generate
// writes it, make verify fails when the committed page is stale, and a
// test checks that no metric has a label whose values are unbounded.
package metricsdoc

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	// The packages whose metrics the page lists: importing them registers
	// their metrics (each metrics.go's init).
	_ "github.com/multi-operator/multi-operator/controllers"
	_ "github.com/multi-operator/multi-operator/pkg/webhookcert"
)

// Path is the page, relative to the repository root.
const Path = "docs/metrics.md"

// Prefixes are the names the project's metrics start with, one per
// package that has metrics; controller-runtime's and Go's own metrics
// share the registry and are left to their own documentation.
var Prefixes = []string{"memcached_", "rediscluster_", "tdset_", "whalesay_", "webhook_certificate_"}

// Metric is one metric as the page lists it.
type Metric struct {
	// Name is the metric's name, as scraped.
	Name string
	// Type is counter, gauge, histogram or summary.
	Type string
	// Labels are the label names, in the order the metric declares them.
	Labels []string
	// Help is the metric's help text.
	Help string
	// Buckets are a histogram's upper bounds, without +Inf.
	Buckets []float64
}

// descPattern reads what prometheus.Desc.String prints, the only way the
// client library shows a registered metric's name, help and labels; the
// fields between help and variableLabels vary with its version.
var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), .*variableLabels: \{([^}]*)\}\}$`)

// Gather lists the project's metrics registered on controller-runtime's
// registry, sorted by name.
func Gather() ([]Metric, error) {
	reg, all, err := registered()
	if err != nil {
		return nil, err
	}
	var list []Metric
	var errs []error
	for _, r := range all {
		m := r.metric
		if !slices.ContainsFunc(Prefixes, func(p string) bool { return strings.HasPrefix(m.Name, p) }) {
			continue
		}
		if err := describeCollector(reg, r.desc, &m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
			continue
		}
		list = append(list, m)
	}
	slices.SortFunc(list, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	return list, errors.Join(errs...)
}

// Names lists the name of every metric registered on controller-runtime's
// registry, the project's and controller-runtime's, Go's and the
// process's alike: every name the manager's metrics endpoint can serve,
// but for the _bucket, _sum and _count series of a histogram or summary,
// which are named after it.
func Names() ([]string, error) {
	_, all, err := registered()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for _, r := range all {
		names = append(names, r.metric.Name)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// registration is one metric registered, as its descriptor and as read
// from it (name, help and labels).
type registration struct {
	desc   *prometheus.Desc
	metric Metric
}

// registered is controller-runtime's registry and every metric registered
// on it; a descriptor it cannot read is an error.
func registered() (*prometheus.Registry, []registration, error) {
	reg, ok := metrics.Registry.(*prometheus.Registry)
	if !ok {
		return nil, nil, fmt.Errorf("controller-runtime's registry is a %T, not a *prometheus.Registry", metrics.Registry)
	}
	// Every Desc is read before anything registers again (Gather does):
	// Describe holds the registry's lock until it has sent the last one.
	ch := make(chan *prometheus.Desc)
	go func() {
		reg.Describe(ch)
		close(ch)
	}()
	var descs []*prometheus.Desc
	for d := range ch {
		descs = append(descs, d)
	}
	var out []registration
	var errs []error
	for _, d := range descs {
		m, err := parseDesc(d.String())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, registration{desc: d, metric: m})
	}
	return reg, out, errors.Join(errs...)
}

// parseDesc reads a Desc's name, help and variable labels.
func parseDesc(s string) (Metric, error) {
	match := descPattern.FindStringSubmatch(s)
	if match == nil {
		return Metric{}, fmt.Errorf("cannot read the metric descriptor %s: has prometheus.Desc.String changed its format?", s)
	}
	name, err := strconv.Unquote(match[1])
	if err != nil {
		return Metric{}, fmt.Errorf("%s: %w", s, err)
	}
	help, err := strconv.Unquote(match[2])
	if err != nil {
		return Metric{}, fmt.Errorf("%s: %w", s, err)
	}
	m := Metric{Name: name, Help: help}
	if match[3] != "" {
		for _, l := range strings.Split(match[3], ",") {
			// A constrained label prints as c(name).
			m.Labels = append(m.Labels, strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"))
		}
	}
	return m, nil
}

// describeCollector finds the collector that registered d and sets m's
// type, and a histogram's buckets, from it. The registry gives its
// collectors away in one way only: registering a collector that describes
// the same metrics fails with the one already registered.
func describeCollector(reg *prometheus.Registry, d *prometheus.Desc, m *Metric) error {
	err := reg.Register(descCollector{d})
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		if err == nil {
			reg.Unregister(descCollector{d})
			return errors.New("no collector of its own on the registry")
		}
		return fmt.Errorf("no collector of its own on the registry: %w", err)
	}
	switch c := already.ExistingCollector.(type) {
	case *prometheus.CounterVec:
		m.Type = "counter"
	case *prometheus.GaugeVec:
		m.Type = "gauge"
	case *prometheus.SummaryVec:
		m.Type = "summary"
	case *prometheus.HistogramVec:
		m.Type = "histogram"
		return histogramBuckets(c, m)
	case prometheus.Gauge:
		m.Type = "gauge"
	case prometheus.Counter:
		m.Type = "counter"
	case prometheus.Histogram:
		m.Type = "histogram"
	default:
		return fmt.Errorf("a collector of type %T, which the page cannot describe", c)
	}
	return nil
}

// histogramBuckets reads a histogram vector's buckets from a series made
// for the purpose, gathered through a registry of its own and dropped at
// once.
func histogramBuckets(h *prometheus.HistogramVec, m *Metric) error {
	values := make([]string, len(m.Labels))
	for i := range values {
		values[i] = "metricsdoc"
	}
	if _, err := h.GetMetricWithLabelValues(values...); err != nil {
		return err
	}
	defer h.DeleteLabelValues(values...)
	own := prometheus.NewRegistry()
	if err := own.Register(h); err != nil {
		return err
	}
	families, err := own.Gather()
	if err != nil {
		return err
	}
	if len(families) != 1 || len(families[0].GetMetric()) == 0 {
		return errors.New("the histogram collected no series")
	}
	for _, b := range families[0].GetMetric()[0].GetHistogram().GetBucket() {
		m.Buckets = append(m.Buckets, b.GetUpperBound())
	}
	return nil
}

// descCollector describes one metric and collects nothing.
type descCollector struct{ desc *prometheus.Desc }

// Describe sends the one Desc.
func (c descCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect sends nothing: the collector is never registered.
func (descCollector) Collect(chan<- prometheus.Metric) {}
