// Package objectmetrics is what the controllers' metrics share: their
// series are labelled with the reconciled object's namespace and name, and
// go when the object does, so that the series do not outgrow the objects.
package objectmetrics

import "github.com/prometheus/client_golang/prometheus"

// objectLabels come first on every series of an object's metric.
var objectLabels = []string{"namespace", "name"}

// GaugeVec is a gauge of one object, labelled namespace, name and labels.
func GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append(objectLabels[:2:2], labels...))
}

// CounterVec is a counter of one object, labelled namespace, name and
// labels.
func CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(objectLabels[:2:2], labels...))
}

// HistogramVec is a histogram of one object with buckets, labelled
// namespace, name and labels.
func HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, append(objectLabels[:2:2], labels...))
}

// Vec is a metric vector: a GaugeVec, CounterVec, HistogramVec or
// SummaryVec.
type Vec interface {
	DeletePartialMatch(labels prometheus.Labels) int
}

// Forget drops every series of the object namespace/name from vecs,
// whatever their other labels.
func Forget(namespace, name string, vecs ...Vec) {
	labels := prometheus.Labels{"namespace": namespace, "name": name}
	for _, v := range vecs {
		v.DeletePartialMatch(labels)
	}
}

// SetOneOf sets the object's series of g for each of values, the label
// after namespace and name: 1 for active, 0 for the others. Every value
// keeps a series, so that a change shows as one series falling and
// another rising rather than a series appearing.
func SetOneOf(g *prometheus.GaugeVec, namespace, name string, values []string, active string) {
	for _, v := range values {
		x := 0.0
		if v == active {
			x = 1
		}
		g.WithLabelValues(namespace, name, v).Set(x)
	}
}
