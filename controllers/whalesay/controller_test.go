package whalesay_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	whalesayv1alpha1 "github.com/multi-operator/multi-operator/apis/whalesay/v1alpha1"
	"github.com/multi-operator/multi-operator/controllers/whalesay"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/samples"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, whalesayv1alpha1.AddToScheme)) }

const testImage = "registry.example/whalesay:test"

// options are the controller's options in every test.
var options = reconciler.Options{Image: testImage}

func jobsOf(g Gomega, c client.Client, ns string) []batchv1.Job {
	jobs := &batchv1.JobList{}
	g.Expect(c.List(context.Background(), jobs, client.InNamespace(ns))).To(Succeed())
	var live []batchv1.Job
	for _, j := range jobs.Items {
		if j.DeletionTimestamp.IsZero() {
			live = append(live, j)
		}
	}
	return live
}

func TestSampleCreatesJobWithExactArguments(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{})
	ws := &whalesayv1alpha1.WhaleSay{}
	samples.Load(t, "whalesay.yaml", ws)
	ws.Namespace = ns
	g.Expect(c.Create(context.Background(), ws)).To(Succeed())

	var job batchv1.Job
	g.Eventually(func(g Gomega) {
		jobs := jobsOf(g, c, ns)
		g.Expect(jobs).To(HaveLen(1))
		job = jobs[0]
	}).Should(Succeed())
	g.Expect(job.Name).To(HavePrefix("example-whalesay-"))
	g.Expect(metav1.IsControlledBy(&job, ws)).To(BeTrue())
	g.Expect(job.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
	g.Expect(*job.Spec.BackoffLimit).To(BeNumerically("<=", 3))
	pod := job.Spec.Template.Spec
	g.Expect(pod.Containers).To(HaveLen(1))
	ctr := pod.Containers[0]
	g.Expect(ctr.Image).To(Equal(testImage))
	g.Expect(ctr.Command).To(Equal([]string{"cowsay"}))
	g.Expect(ctr.Args).To(Equal([]string{"--", "Hello from Kubernetes Operator!"}))
	g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(*ctr.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
	g.Expect(ctr.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	g.Expect(ctr.Resources.Limits).To(HaveKey(corev1.ResourceMemory))
	g.Expect(ctr.Resources.Requests).To(HaveKey(corev1.ResourceCPU))

	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
		g.Expect(ws.Status.JobName).To(Equal(job.Name))
		g.Expect(ws.Status.Phase).To(Equal(whalesayv1alpha1.PhasePending))
		g.Expect(ws.Status.MessagePreview).To(Equal("Hello from Kubernetes Operator!"))
		g.Expect(ws.Status.ObservedGeneration).To(Equal(ws.Generation))
		g.Expect(conditions.Get(ws, conditions.Ready)).NotTo(BeNil())
	}).Should(Succeed())
}

func TestShellMetacharactersArePassedLiterally(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{})
	for i, msg := range []string{"$(rm -rf /)", `"; echo pwned`, "`id` && $HOME | cat > /tmp/x", "-h is not an option"} {
		ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: "meta-" + string(rune('a'+i)), Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: msg}}
		g.Expect(c.Create(context.Background(), ws)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
			g.Expect(ws.Status.JobName).NotTo(BeEmpty())
			job := &batchv1.Job{}
			g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ws.Status.JobName}, job)).To(Succeed())
			ctr := job.Spec.Template.Spec.Containers[0]
			g.Expect(ctr.Command).To(Equal([]string{"cowsay"}), "no shell in between")
			g.Expect(ctr.Args).To(Equal([]string{"--", msg}), "the message, never an option")
		}).Should(Succeed())
	}
}

// A changed message or podTemplate runs a new Job (a Job's pod template
// is immutable), which replaces the one of the earlier spec.
func TestSpecChangeReplacesJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*whalesayv1alpha1.WhaleSaySpec)
		check  func(g Gomega, job batchv1.Job)
	}{
		{
			name:   "message",
			change: func(s *whalesayv1alpha1.WhaleSaySpec) { s.Message = "second" },
			check: func(g Gomega, job batchv1.Job) {
				g.Expect(job.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"--", "second"}))
			},
		},
		{
			name:   "podTemplate",
			change: func(s *whalesayv1alpha1.WhaleSaySpec) { s.PodTemplate = builders.PodTemplate() },
			check: func(g Gomega, job batchv1.Job) {
				builders.ExpectPodTemplate(g, job.Spec.Template, ownership.SelectorLabels("whalesay", "change"))
				g.Expect(job.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"--", "first"}))
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{})
			ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: "change", Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: "first"}}
			g.Expect(c.Create(context.Background(), ws)).To(Succeed())
			var first string
			g.Eventually(func(g Gomega) {
				jobs := jobsOf(g, c, ns)
				g.Expect(jobs).To(HaveLen(1))
				first = jobs[0].Name
			}).Should(Succeed())

			// The controller writes status meanwhile; a conflict means read again.
			g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws); err != nil {
					return err
				}
				tc.change(&ws.Spec)
				return c.Update(context.Background(), ws)
			})).To(Succeed())
			g.Eventually(func(g Gomega) {
				jobs := jobsOf(g, c, ns)
				g.Expect(jobs).To(HaveLen(1))
				g.Expect(jobs[0].Name).NotTo(Equal(first))
				tc.check(g, jobs[0])
				g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
				g.Expect(ws.Status.JobName).To(Equal(jobs[0].Name))
			}).Should(Succeed())
		})
	}
}

// finishJob writes the status the Job controller would write; envtest runs
// no controller-manager.
func finishJob(g Gomega, c client.Client, ns, name string, succeeded bool) {
	testenv.FinishJob(g, c, client.ObjectKey{Namespace: ns, Name: name}, succeeded)
}

// createAndWaitForJob creates ws and waits until its status names its Job.
func createAndWaitForJob(g Gomega, c client.Client, ws *whalesayv1alpha1.WhaleSay) {
	g.Expect(c.Create(context.Background(), ws)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
		g.Expect(ws.Status.JobName).NotTo(BeEmpty())
	}).Should(Succeed())
}

func TestJobOutcomeIsReflectedInStatus(t *testing.T) {
	for _, tc := range []struct {
		name      string
		succeeded bool
		phase     whalesayv1alpha1.Phase
		ready     metav1.ConditionStatus
		failed    metav1.ConditionStatus
		reason    string
	}{
		{name: "succeeded", succeeded: true, phase: whalesayv1alpha1.PhaseSucceeded, ready: metav1.ConditionTrue, failed: metav1.ConditionFalse, reason: whalesayv1alpha1.ReasonJobSucceeded},
		{name: "failed", succeeded: false, phase: whalesayv1alpha1.PhaseFailed, ready: metav1.ConditionFalse, failed: metav1.ConditionTrue, reason: "BackoffLimitExceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{})
			ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: "outcome", Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: "moo"}}
			createAndWaitForJob(g, c, ws)
			finishJob(g, c, ns, ws.Status.JobName, tc.succeeded)
			g.Eventually(func(g Gomega) {
				g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
				g.Expect(ws.Status.Phase).To(Equal(tc.phase))
				g.Expect(ws.Status.StartTime).NotTo(BeNil())
				g.Expect(ws.Status.CompletionTime).NotTo(BeNil())
				g.Expect(conditions.Get(ws, conditions.Ready).Status).To(Equal(tc.ready))
				failed := conditions.Get(ws, whalesayv1alpha1.ConditionFailed)
				g.Expect(failed.Status).To(Equal(tc.failed))
				g.Expect(failed.Reason).To(Equal(tc.reason))
			}).Should(Succeed())
		})
	}
}

// A finished Job is counted, and its duration observed, once, however often
// the WhaleSay is reconciled after; the series go with the WhaleSay.
func TestMetricsCountTheJobOnceAndGoWithTheWhaleSay(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{})
	ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: "measured", Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: "count me"}}
	createAndWaitForJob(g, c, ws)
	g.Expect(testenv.SeriesOf(g, "whalesay_", ns, "measured")).To(BeEmpty(), "nothing finished yet")

	finishJob(g, c, ns, ws.Status.JobName, true)
	want := map[string]float64{
		`whalesay_jobs_total{outcome="succeeded"}`:                 1,
		`whalesay_job_duration_seconds_count{outcome="succeeded"}`: 1,
	}
	g.Eventually(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "whalesay_", ns, "measured") }).Should(Equal(want))
	// Reconciles after the outcome is recorded count nothing more.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"poke":"1"}}}`))
	g.Expect(c.Patch(context.Background(), ws, patch)).To(Succeed())
	g.Consistently(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "whalesay_", ns, "measured") }, 2*time.Second).Should(Equal(want))

	g.Expect(c.Delete(context.Background(), ws)).To(Succeed())
	g.Eventually(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "whalesay_", ns, "measured") }).Should(BeEmpty())
}

func TestFinishedJobIsNotRunAgain(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{})
	ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: "only once"}}
	createAndWaitForJob(g, c, ws)
	finishJob(g, c, ns, ws.Status.JobName, true)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
		g.Expect(ws.Status.Phase).To(Equal(whalesayv1alpha1.PhaseSucceeded))
	}).Should(Succeed())

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: ws.Status.JobName, Namespace: ns}}
	g.Expect(c.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(job), job))
	}).Should(BeTrue())
	g.Consistently(func(g Gomega) {
		g.Expect(jobsOf(g, c, ns)).To(BeEmpty())
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
		g.Expect(ws.Status.Phase).To(Equal(whalesayv1alpha1.PhaseSucceeded))
	}, 3*time.Second).Should(Succeed())
}

func TestAdmissionRejectsBadMessages(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	for name, msg := range map[string]string{"empty": "", "too-long": strings.Repeat("m", 1025)} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: msg}}
			err := env.Client.Create(context.Background(), ws)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("spec.message"))
		})
	}
	g := NewWithT(t)
	ok := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: "longest", Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: strings.Repeat("m", 1024)}}
	g.Expect(env.Client.Create(context.Background(), ok)).To(Succeed())
}

func TestLongNameYieldsValidJob(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{})
	ws := &whalesayv1alpha1.WhaleSay{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("w", 250), Namespace: ns}, Spec: whalesayv1alpha1.WhaleSaySpec{Message: "long"}}
	g.Expect(c.Create(context.Background(), ws)).To(Succeed())
	g.Eventually(func(g Gomega) {
		jobs := jobsOf(g, c, ns)
		g.Expect(jobs).To(HaveLen(1))
		g.Expect(len(jobs[0].Name)).To(BeNumerically("<=", 63))
		g.Expect(len(jobs[0].Labels["app.kubernetes.io/instance"])).To(BeNumerically("<=", 63))
	}).Should(Succeed())
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	counted, writes := testenv.CountWrites(testenv.Get(t).Config)
	g, c, ns := testenv.StartController(t, whalesay.Descriptor(), options, testenv.ManagerOptions{Config: counted})
	ws := builders.WhaleSay(ns, "steady").Obj()
	g.Expect(c.Create(context.Background(), ws)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
		g.Expect(ws.Status.JobName).NotTo(BeEmpty())
		g.Expect(jobsOf(g, c, ns)).To(HaveLen(1))
	}).Should(Succeed())
	finishJob(g, c, ns, ws.Status.JobName, true)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
		g.Expect(conditions.IsTrue(ws, conditions.Ready)).To(BeTrue())
	}).Should(Succeed())

	// Touch the finished Job without changing its outcome: the WhaleSay
	// reconciles and must write nothing.
	testenv.ExpectSteadyState(g, writes, whalesay.Name, ns, func() {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ws.Status.JobName}}
		g.Expect(c.Patch(context.Background(), job, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"test-touch":"1"}}}`)))).To(Succeed())
	})
}

// A Job that finishes within the startup grace gives a new WhaleSay one
// status write, Succeeded; one still running when the grace ends is shown
// then, without another report of the Job.
func TestStartupGraceSavesAStatusWrite(t *testing.T) {
	const grace = 4 * time.Second
	cfg, writes := testenv.CountWrites(testenv.Get(t).Config)
	opts := options
	opts.StartupGrace = grace
	g, c, ns := testenv.StartController(t, whalesay.Descriptor(), opts, testenv.ManagerOptions{Config: cfg})
	jobOf := func(ws *whalesayv1alpha1.WhaleSay) batchv1.Job {
		var job batchv1.Job
		g.Eventually(func(g Gomega) {
			jobs := &batchv1.JobList{}
			g.Expect(c.List(context.Background(), jobs, client.InNamespace(ns), client.MatchingLabels{ownership.LabelInstance: ws.Name})).To(Succeed())
			g.Expect(jobs.Items).To(HaveLen(1))
			job = jobs.Items[0]
		}).Should(Succeed())
		return job
	}
	expectNoStatus := func(ws *whalesayv1alpha1.WhaleSay, d time.Duration) {
		g.Consistently(func(g Gomega) {
			g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ws), ws)).To(Succeed())
			g.Expect(ws.Status.Phase).To(BeEmpty())
		}, d).Should(Succeed())
	}

	quick := builders.WhaleSay(ns, "quick").Obj()
	g.Expect(c.Create(context.Background(), quick)).To(Succeed())
	job := jobOf(quick)
	expectNoStatus(quick, time.Second)
	finishJob(g, c, ns, job.Name, true)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(quick), quick)).To(Succeed())
		g.Expect(quick.Status.Phase).To(Equal(whalesayv1alpha1.PhaseSucceeded))
	}).Should(Succeed())
	g.Expect(writes.Requests("/namespaces/" + ns + "/whalesays/quick/status")).To(HaveLen(1))

	slow := builders.WhaleSay(ns, "slow").Obj()
	g.Expect(c.Create(context.Background(), slow)).To(Succeed())
	job = jobOf(slow)
	if rest := grace - time.Since(job.CreationTimestamp.Time) - time.Second; rest > 0 {
		expectNoStatus(slow, rest)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(slow), slow)).To(Succeed())
		g.Expect(slow.Status.Phase).To(Equal(whalesayv1alpha1.PhasePending))
		g.Expect(slow.Status.JobName).To(Equal(job.Name))
	}, 2*grace).Should(Succeed())
}
