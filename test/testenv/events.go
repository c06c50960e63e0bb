package testenv

import (
	"context"

	"github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Events lists the events about the object called name in namespace ns, as
// "Type Reason: note", which is how `kubectl describe` shows them.
func Events(g gomega.Gomega, c client.Reader, ns, name string) []string {
	list := &eventsv1.EventList{}
	g.Expect(c.List(context.Background(), list, client.InNamespace(ns))).To(gomega.Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return out
}
