package testenv

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/events"
)

// Events lists the events about the object called name in namespace ns, as
// "Type Reason: note", which is how `kubectl describe` shows them.
func Events(g gomega.Gomega, c client.Reader, ns, name string) []string {
	var out []string
	for _, e := range EventObjects(g, c, ns, name) {
		out = append(out, e.Type+" "+e.Reason+": "+e.Note)
	}
	return out
}

// Warnings lists, as Events does, the Warning events of reason about the
// object called name in namespace ns.
func Warnings(g gomega.Gomega, c client.Reader, ns, name, reason string) []string {
	var out []string
	for _, e := range EventObjects(g, c, ns, name) {
		if e.Type == "Warning" && e.Reason == reason {
			out = append(out, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return out
}

// EventObjects lists the events about the object called name in namespace
// ns, whole, for tests that need more than their text, such as when each
// was recorded.
func EventObjects(g gomega.Gomega, c client.Reader, ns, name string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(c.List(context.Background(), list, client.InNamespace(ns))).To(gomega.Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// EventRecorder is a recorder of events on the test API server under the
// source name, for a test that drives a reconciler's Reconcile itself
// (with a fake clock, say) rather than through a manager: a manager with
// no controller, stopped when the test ends, makes it.
func EventRecorder(t *testing.T, name string) events.Recorder {
	var rec events.Recorder
	Get(t).StartManager(t, ManagerOptions{}, func(mgr ctrl.Manager) error {
		rec = events.NewRecorder(mgr.GetEventRecorder(name))
		return nil
	})
	return rec
}
