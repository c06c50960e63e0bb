// Package podmonitor keeps the Prometheus Operator's PodMonitor for a
// custom resource whose pods run an exporter: Desired builds it (as
// unstructured, so that the operator needs no Prometheus Operator module),
// Served says whether the cluster serves the kind, refreshed in the
// background so that installing the Prometheus Operator later is picked up
// without a restart, and Reconcile creates, corrects or deletes it.
package podmonitor

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// GVK is the Prometheus Operator's PodMonitor kind.
var GVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// PortName is the exporter containers' port that the PodMonitor scrapes.
const PortName = "metrics"

// TargetLabels are the pod labels the PodMonitor copies onto every series
// it scrapes (podTargetLabels): the kind's app and the custom resource's
// name, so that dashboards and alerts pick a resource's exporters by
// label rather than by the names its controller gives the pods.
var TargetLabels = []string{ownership.LabelName, ownership.LabelInstance}

// The names Prometheus gives TargetLabels on the series: every character
// a label name may not hold becomes an underscore.
const (
	// KindSeriesLabel holds ownership.LabelName: rediscluster, memcached.
	KindSeriesLabel = "app_kubernetes_io_name"
	// NameSeriesLabel holds ownership.LabelInstance: the custom resource's name.
	NameSeriesLabel = "app_kubernetes_io_instance"
)

// Target is what a PodMonitor is built for.
type Target struct {
	// Name and Namespace name the PodMonitor, usually the custom resource's.
	Name, Namespace string
	// Labels are the PodMonitor's own labels (the operator's ownership
	// labels); the spec's labels are added to them.
	Labels map[string]string
	// Selector selects the custom resource's pods.
	Selector map[string]string
	// Spec is the custom resource's monitoring.podMonitor; nil for none.
	Spec *shared.PodMonitor
}

// TargetFor is the Target of the custom resource namespace/name whose
// pods the operator runs as app: the PodMonitor carries the operator's
// ownership labels and selects the pods by its selector labels, with the
// custom resource's spec.monitoring.podMonitor (m may be nil).
func TargetFor(app, namespace, name string, m *shared.Monitoring) Target {
	t := Target{
		Name:      name,
		Namespace: namespace,
		Labels:    ownership.Labels(app, name),
		Selector:  ownership.SelectorLabels(app, name),
	}
	if m != nil {
		t.Spec = m.PodMonitor
	}
	return t
}

// Wanted says whether m asks for a PodMonitor: the exporter runs (absent
// means on) and the PodMonitor is not disabled.
func Wanted(m *shared.Monitoring) bool {
	if m == nil {
		return true
	}
	if m.Exporter != nil && m.Exporter.Disabled {
		return false
	}
	return m.PodMonitor == nil || !m.PodMonitor.Disabled
}

// ExporterEnabled says whether m runs the exporter: absent means on.
func ExporterEnabled(m *shared.Monitoring) bool {
	return m == nil || m.Exporter == nil || !m.Exporter.Disabled
}

// Desired is the PodMonitor of t: it scrapes the pods t.Selector selects
// on their "metrics" port, at the spec's interval when it has one, and
// labels their series with TargetLabels. The owner reference is set when
// it is applied.
func Desired(t Target) *unstructured.Unstructured {
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	endpoint := map[string]any{"port": PortName, "path": "/metrics"}
	if t.Spec != nil {
		// The operator's own labels win: they are how it finds its children.
		for k, v := range t.Spec.Labels {
			if _, own := t.Labels[k]; !own {
				labels[k] = v
			}
		}
		if t.Spec.Interval != "" {
			endpoint["interval"] = t.Spec.Interval
		}
	}
	selector := map[string]any{}
	for k, v := range t.Selector {
		selector[k] = v
	}
	targetLabels := make([]any, len(TargetLabels))
	for i, l := range TargetLabels {
		targetLabels[i] = l
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"podTargetLabels":     targetLabels,
			"selector":            map[string]any{"matchLabels": selector},
			"namespaceSelector":   map[string]any{"matchNames": []any{t.Namespace}},
			"podMetricsEndpoints": []any{endpoint},
		},
	}}
	u.SetGroupVersionKind(GVK)
	u.SetName(t.Name)
	u.SetNamespace(t.Namespace)
	u.SetLabels(labels)
	return u
}

// Delete deletes the PodMonitor name of namespace when owner controls it,
// and says whether it did. A PodMonitor that is not there, or that someone
// else controls, is left alone.
func Delete(ctx context.Context, c client.Client, owner client.Object, namespace, name string) (bool, error) {
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(GVK)
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, existing)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading PodMonitor %s/%s: %w", namespace, name, err)
	}
	ref := metav1.GetControllerOf(existing)
	if ref == nil || ref.UID != owner.GetUID() || !existing.GetDeletionTimestamp().IsZero() {
		return false, nil
	}
	uid := existing.GetUID()
	err = c.Delete(ctx, existing, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting PodMonitor %s/%s: %w", namespace, name, err)
	}
	return true, nil
}
