package testenv

import (
	"time"

	"github.com/onsi/gomega"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// SteadyWindow is how long ExpectSteadyState watches for writes.
const SteadyWindow = 3 * time.Second

// Reconciles is how many reconciles the named controller has finished in
// this process, from controller-runtime's controller_runtime_reconcile_total.
func Reconciles(g gomega.Gomega, controller string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// ExpectSteadyState proves that a controller at steady state writes
// nothing to the objects of namespace ns, the test's own. Call it once the
// object is converged, with writes counting the controller's client. It
// lets the last writes settle, then runs poke (a change that alters nothing
// the controller reports, such as touching a child), waits until the
// controller has reconciled since, so that the assertion cannot pass
// because nothing ran, and expects no write for SteadyWindow. Writes
// elsewhere are another test's: the manager sees every namespace, and an
// earlier test's objects may still be finalized while this one runs. The
// PATCH of an event series recorded before the poke is not counted: the
// event broadcaster retries it several seconds after a recording (see
// seriesObserved); an event recorded again at steady state is.
func ExpectSteadyState(g gomega.Gomega, writes *RequestCounter, controller, ns string, poke func()) {
	var since time.Time
	inNamespace := func() []string { return writes.requestsSince(since, "/namespaces/"+ns+"/") }
	// The last status write and event of convergence may still be on their way.
	g.Eventually(func() []string {
		writes.Reset()
		time.Sleep(time.Second)
		return inNamespace()
	}).Should(gomega.BeEmpty(), "the controller settles")
	since = time.Now()
	before := Reconciles(g, controller)
	poke()
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(Reconciles(g, controller)).To(gomega.BeNumerically(">", before))
	}).Should(gomega.Succeed(), "the controller reconciled after the poke")
	g.Consistently(inNamespace, SteadyWindow).Should(gomega.BeEmpty(), "no write at steady state")
}
