package tdset_test

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// A manager with the TDSet controller starts on an API server that serves
// the TDSet CRD but neither calendar CRD (installed before the calendars
// came, or by hand): a TDSet without calendars is scheduled and Ready; one
// that names a calendar, of either kind, is not Ready with
// CalendarsNotInstalled and one Warning, and its Deployment keeps its count.
func TestWithoutTheCalendarCRDsOnlyTDSetsWithCalendarsWait(t *testing.T) {
	g := NewWithT(t)
	cfg := testenv.StartControlPlane(t, nil)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases", "schedule.rs_tdsets")}, ErrorIfPathMissing: true,
	})
	g.Expect(err).NotTo(HaveOccurred())
	scheme := testenv.Get(t).Scheme
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	env := &testenv.Env{Config: cfg, Scheme: scheme, Client: c}
	d := tdset.Descriptor()
	opts := reconciler.Options{Clock: clocktesting.NewFakeClock(office)}
	env.StartManager(t, testenv.ManagerOptions{Controllers: []reconciler.Descriptor{d}}, func(mgr ctrl.Manager) error { return d.Setup(mgr, opts) })
	ns := env.Namespace(t)

	plain := builders.TDSet(ns, "plain").Obj()
	g.Expect(c.Create(bg, plain)).To(Succeed())
	g.Eventually(func(g Gomega) int32 { return replicasOf(g, c, ns, "plain") }).Should(Equal(int32(5)))
	testenv.MakeDeploymentAvailable(g, c, client.ObjectKeyFromObject(plain))
	g.Eventually(func(g Gomega) {
		ready := readyOf(g, c, plain)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonAvailable))
	}).Should(Succeed())

	// The exception would set 2 replicas today (office is 2026-03-10) were
	// the schedule applied; the calendar cannot be read, so it is not.
	patch(g, c, plain, `{"spec":{"calendars":[{"name":"holidays"}],"exceptions":[{"date":"2026-03-10","replicas":2}]}}`)
	g.Eventually(func(g Gomega) {
		ready := readyOf(g, c, plain)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonCalendarsNotInstalled))
		g.Expect(ready.Message).To(ContainSubstring("Calendar holidays cannot be read"))
		g.Expect(ready.Message).To(ContainSubstring("calendars.schedule.rs"))
		g.Expect(testenv.Warnings(g, c, ns, "plain", schedulev2.ReasonCalendarsNotInstalled)).To(HaveLen(1))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) int32 { return replicasOf(g, c, ns, "plain") }).Should(Equal(int32(5)), "the count stays")

	cluster := builders.TDSet(ns, "cluster").Calendar(schedulev2.CalendarKindCluster, "public-holidays").Obj()
	g.Expect(c.Create(bg, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := readyOf(g, c, cluster)
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonCalendarsNotInstalled))
		g.Expect(ready.Message).To(ContainSubstring("ClusterCalendar public-holidays cannot be read"))
		g.Expect(testenv.Warnings(g, c, ns, "cluster", schedulev2.ReasonCalendarsNotInstalled)).To(HaveLen(1))
	}).Should(Succeed())
}
