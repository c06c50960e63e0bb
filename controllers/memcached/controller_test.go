package memcached_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/samples"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, cachev1alpha1.AddToScheme)) }

const testImage = "registry.example/memcached:test"

// options are the controller's options in every test.
var options = reconciler.Options{Image: testImage}

// descriptorWith is the controller's descriptor whose Setup lets adjust
// change the Reconciler before it starts.
func descriptorWith(adjust func(r *memcached.Reconciler)) reconciler.Descriptor {
	d := memcached.Descriptor()
	d.Setup = func(mgr ctrl.Manager, opts reconciler.Options) error {
		r, err := memcached.NewReconciler(mgr, opts)
		if err != nil {
			return err
		}
		adjust(r)
		return r.SetupWithManager(mgr)
	}
	return d
}

// children waits for the Deployment and Service of m.
func children(g *WithT, c client.Client, m *cachev1alpha1.Memcached) (*appsv1.Deployment, *corev1.Service) {
	dep, svc := &appsv1.Deployment{}, &corev1.Service{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), dep)).To(Succeed())
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), svc)).To(Succeed())
	}).Should(Succeed())
	return dep, svc
}

// updateSpec changes m's spec, retrying when the controller wrote meanwhile.
func updateSpec(g *WithT, c client.Client, m *cachev1alpha1.Memcached, change func(*cachev1alpha1.MemcachedSpec)) {
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		change(&m.Spec)
		g.Expect(c.Update(context.Background(), m)).To(Succeed())
	}).Should(Succeed())
}

// expectCondition waits for the Memcached's condition, computed from its current generation.
func expectCondition(g *WithT, c client.Client, ns, name, conditionType string, status metav1.ConditionStatus, reason string) {
	g.Eventually(func(g Gomega) {
		m := &cachev1alpha1.Memcached{}
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, m)).To(Succeed())
		cond := conditions.Get(m, conditionType)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(status), "%s: %s", cond.Reason, cond.Message)
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.ObservedGeneration).To(Equal(m.Generation))
	}).Should(Succeed(), "%s=%s (%s)", conditionType, status, reason)
}

func TestSampleGivesExactChildren(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := &cachev1alpha1.Memcached{}
	samples.Load(t, "memcached.yaml", m)
	m.Namespace = ns
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	dep, svc := children(g, c, m)

	for _, child := range []metav1.Object{dep, svc} {
		g.Expect(metav1.IsControlledBy(child, m)).To(BeTrue())
		g.Expect(child.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "multi-operator"))
	}
	g.Expect(*dep.Spec.Replicas).To(Equal(int32(1)))
	pod := dep.Spec.Template.Spec
	g.Expect(*pod.SecurityContext.RunAsUser).To(Equal(int64(1001)))
	g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	g.Expect(pod.Containers).To(HaveLen(2), "memcached and its exporter, on by default")
	g.Expect(pod.Containers[1].Name).To(Equal(memcached.ExporterContainerName))
	g.Expect(pod.Containers[1].Image).To(Equal(memcached.DefaultExporterImage))
	ctr := pod.Containers[0]
	g.Expect(ctr.Image).To(Equal(testImage))
	g.Expect(ctr.Command).To(Equal([]string{"memcached"}))
	g.Expect(ctr.Args).To(Equal([]string{"-m", "64", "-o", "modern", "-v", "-p", "11211", "-U", "0"}))
	g.Expect(ctr.Ports).To(Equal([]corev1.ContainerPort{{Name: "memcached", ContainerPort: 11211, Protocol: corev1.ProtocolTCP}}))
	g.Expect(ctr.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromString("memcached")))
	g.Expect(ctr.LivenessProbe.TCPSocket.Port).To(Equal(intstr.FromString("memcached")))
	g.Expect(*ctr.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
	g.Expect(ctr.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	g.Expect(ctr.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	g.Expect(ctr.Resources.Limits.Memory().String()).To(Equal("128Mi"))
	g.Expect(ctr.Resources.Requests.Cpu().IsZero()).To(BeFalse())

	g.Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
	g.Expect(svc.Spec.Selector).To(Equal(dep.Spec.Selector.MatchLabels))
	g.Expect(svc.Spec.Ports).To(HaveLen(1))
	g.Expect(svc.Spec.Ports[0].Name).To(Equal("memcached"))
	g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(11211)))
	g.Expect(svc.Spec.Ports[0].TargetPort).To(Equal(intstr.FromString("memcached")))

	testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(m), 1)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(controllerutil.ContainsFinalizer(m, memcached.Finalizer)).To(BeTrue())
		g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
		g.Expect(m.Status.Selector).To(Equal(memcached.Selector(m)))
		g.Expect(conditions.Get(m, conditions.Ready)).NotTo(BeNil())
		g.Expect(testenv.Events(g, c, ns, m.Name)).To(ConsistOf(
			"Normal ChildrenCreated: Created Deployment memcached-sample (size 1) and headless Service memcached-sample",
		))
	}).Should(Succeed())
}

func TestAdmissionRejectsInvalidSpecs(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	for _, tc := range []struct {
		name, objectName string
		size, port       int32
		message          string
	}{
		{name: "size 0", objectName: "zero", size: 0, port: 11211, message: "spec.size in body should be greater than or equal to 1"},
		{name: "size 4", objectName: "four", size: 4, port: 11211, message: "spec.size in body should be less than or equal to 3"},
		{name: "port 65536", objectName: "port", size: 1, port: 65536, message: "spec.containerPort in body should be less than or equal to 65535"},
		{name: "name that is no DNS label", objectName: "1-memcached", size: 1, port: 11211, message: "metadata.name must be a DNS label"},
		{name: "name longer than a Service name", objectName: strings.Repeat("m", 64), size: 1, port: 11211, message: "metadata.name must be a DNS label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := builders.Memcached(ns, tc.objectName).Size(tc.size).Obj()
			m.Spec.ContainerPort = tc.port
			err := env.Client.Create(context.Background(), m)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.message))
		})
	}
	g := NewWithT(t)
	for _, size := range []int32{1, 3} {
		m := builders.Memcached(ns, "size-"+string(rune('0'+size))).Size(size).Obj()
		g.Expect(env.Client.Create(context.Background(), m)).To(Succeed())
		g.Expect(m.Spec.ContainerPort).To(Equal(int32(11211)), "defaulted")
	}
}

// What `kubectl get memcached` prints comes from the server's table view.
func TestPrinterColumns(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := builders.Memcached(ns, "printed").Size(2).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	children(g, c, m)
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: "printed"}, 2)
	expectCondition(g, c, ns, "printed", cachev1alpha1.ConditionAvailable, metav1.ConditionTrue, cachev1alpha1.ReasonReplicasAvailable)

	cfg := testenv.Get(t).Config
	httpClient, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/apis/cache.example.com/v1alpha1/namespaces/"+ns+"/memcacheds/printed", nil)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), req.URL.String())
	table := &metav1.Table{}
	g.Expect(json.NewDecoder(resp.Body).Decode(table)).To(Succeed())

	var names []string
	for _, col := range table.ColumnDefinitions {
		names = append(names, col.Name)
	}
	g.Expect(names).To(Equal([]string{"Name", "Size", "Ready", "Available", "Age"}))
	g.Expect(table.Rows).To(HaveLen(1))
	cells := table.Rows[0].Cells
	g.Expect(cells[:4]).To(Equal([]any{"printed", float64(2), float64(2), "True"}))
}

// scaleTo sends what `kubectl scale memcached/x --replicas=n` sends: a merge
// patch of the scale subresource.
func scaleTo(c client.Client, m *cachev1alpha1.Memcached, n int32) error {
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)))
	return c.SubResource("scale").Patch(context.Background(), m, patch, client.WithSubResourceBody(&autoscalingv1.Scale{}))
}

func TestScaleSubresource(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := builders.Memcached(ns, "scaled").Size(1).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	children(g, c, m)
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: "scaled"}, 1)

	scale := &autoscalingv1.Scale{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.SubResource("scale").Get(context.Background(), m, scale)).To(Succeed())
		g.Expect(scale.Spec.Replicas).To(Equal(int32(1)))
		g.Expect(scale.Status.Selector).To(Equal(memcached.Selector(m)), "the scale subresource reports the pods' selector")
	}).Should(Succeed())

	g.Expect(scaleTo(c, m, 3)).To(Succeed())
	g.Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "scaled"}, dep)).To(Succeed())
		g.Expect(*dep.Spec.Replicas).To(Equal(int32(3)))
		g.Expect(testenv.Events(g, c, ns, "scaled")).To(ContainElement("Normal DeploymentScaled: Scaled Deployment scaled from 1 to 3"))
	}).Should(Succeed())
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: "scaled"}, 3)
	g.Eventually(func(g Gomega) {
		g.Expect(c.SubResource("scale").Get(context.Background(), m, scale)).To(Succeed())
		g.Expect(scale.Status.Replicas).To(Equal(int32(3)))
	}).Should(Succeed())

	// The scale subresource is validated against the schema too.
	err := scaleTo(c, m, 4)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("less than or equal to 3"))
}

func TestDriftIsCorrected(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := builders.Memcached(ns, "drift").Size(2).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	dep, svc := children(g, c, m)

	// Replicas and image changed by hand come back.
	patch := client.MergeFrom(dep.DeepCopy())
	dep.Spec.Replicas = new(int32(5))
	dep.Spec.Template.Spec.Containers[0].Image = "evil.example/memcached:latest"
	g.Expect(c.Patch(context.Background(), dep, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		g.Expect(*dep.Spec.Replicas).To(Equal(int32(2)))
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(testImage))
		g.Expect(testenv.Events(g, c, ns, "drift")).To(ContainElements(
			"Normal DeploymentScaled: Scaled Deployment drift from 5 to 2",
			"Normal DeploymentUpdated: Updated Deployment drift to match the Memcached",
		))
	}).Should(Succeed())

	// A changed Service port comes back.
	patch = client.MergeFrom(svc.DeepCopy())
	svc.Spec.Ports[0].Port = 2222
	g.Expect(c.Patch(context.Background(), svc, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(11211)))
		g.Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
	}).Should(Succeed())

	// A deleted Service comes back on its own event.
	oldSvc := svc.UID
	g.Expect(c.Delete(context.Background(), svc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		g.Expect(svc.UID).NotTo(Equal(oldSvc))
		g.Expect(testenv.Events(g, c, ns, "drift")).To(ContainElement("Normal ServiceCreated: Created headless Service drift"))
	}).Should(Succeed())

	// Deleted children come back.
	oldDep, oldSvc := dep.UID, svc.UID
	g.Expect(c.Delete(context.Background(), dep)).To(Succeed())
	g.Expect(c.Delete(context.Background(), svc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		g.Expect(dep.UID).NotTo(Equal(oldDep))
		g.Expect(svc.UID).NotTo(Equal(oldSvc))
		g.Expect(*dep.Spec.Replicas).To(Equal(int32(2)))
	}).Should(Succeed())
}

func TestSpecChangesReachTheChildren(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := builders.Memcached(ns, "changed").Size(1).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	children(g, c, m)
	updateSpec(g, c, m, func(spec *cachev1alpha1.MemcachedSpec) { spec.Size, spec.ContainerPort = 2, 12345 })
	g.Eventually(func(g Gomega) {
		dep, svc := &appsv1.Deployment{}, &corev1.Service{}
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), dep)).To(Succeed())
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), svc)).To(Succeed())
		g.Expect(*dep.Spec.Replicas).To(Equal(int32(2)))
		ctr := dep.Spec.Template.Spec.Containers[0]
		g.Expect(ctr.Ports[0].ContainerPort).To(Equal(int32(12345)))
		g.Expect(strings.Join(ctr.Args, " ")).To(ContainSubstring("-p 12345"))
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(12345)))
	}).Should(Succeed())
}

// A changed spec.podTemplate rolls the Deployment's pods; removing it
// brings the default placement back.
func TestPodTemplateChangesReachTheDeployment(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := builders.Memcached(ns, "placed").Size(1).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	children(g, c, m)
	updateSpec(g, c, m, func(spec *cachev1alpha1.MemcachedSpec) { spec.PodTemplate = builders.PodTemplate() })
	g.Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), dep)).To(Succeed())
		builders.ExpectPodTemplate(g, dep.Spec.Template, dep.Spec.Selector.MatchLabels)
	}).Should(Succeed())

	// A field removed alone reaches the Deployment too (nothing else of it
	// differs from what the Deployment has).
	updateSpec(g, c, m, func(spec *cachev1alpha1.MemcachedSpec) { spec.PodTemplate.NodeSelector = nil })
	g.Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.NodeSelector).To(BeEmpty())
		g.Expect(dep.Spec.Template.Labels).To(HaveKey("team"), "the rest stays")
	}).Should(Succeed())

	updateSpec(g, c, m, func(spec *cachev1alpha1.MemcachedSpec) { spec.PodTemplate = nil })
	g.Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.NodeSelector).To(BeEmpty())
		g.Expect(dep.Spec.Template.Labels).NotTo(HaveKey("team"))
		g.Expect(dep.Spec.Template.Spec.Affinity.PodAntiAffinity).NotTo(BeNil(), "the default anti-affinity")
	}).Should(Succeed())
}

// expectNoStatus checks that the Memcached has no conditions for the given
// time.
func expectNoStatus(g *WithT, c client.Client, m *cachev1alpha1.Memcached, d time.Duration) {
	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(m.Status.Conditions).To(BeEmpty())
	}, d).Should(Succeed())
}

func TestConditionsFollowTheDeployment(t *testing.T) {
	const grace = 4 * time.Second
	opts := options
	opts.StartupGrace = grace
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), opts, testenv.ManagerOptions{})
	const name = "conds"
	m := builders.Memcached(ns, name).Size(1).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	dep, _ := children(g, c, m)

	// Nothing observed by the Deployment controller yet: a new Memcached
	// waits for its first report rather than write a status that report
	// replaces a moment later.
	expectNoStatus(g, c, m, time.Second)

	// The Deployment controller has created the pod, which is not available
	// yet: the status waits for it until the startup grace ends, and then
	// shows the server starting without any further report.
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: name}, 0)
	if rest := grace - time.Since(dep.CreationTimestamp.Time) - time.Second; rest > 0 {
		expectNoStatus(g, c, m, rest)
	}
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionProgressing, metav1.ConditionTrue, cachev1alpha1.ReasonWaitingForAvailability)
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionAvailable, metav1.ConditionFalse, cachev1alpha1.ReasonReplicasUnavailable)
	expectCondition(g, c, ns, name, conditions.Ready, metav1.ConditionFalse, cachev1alpha1.ReasonWaitingForAvailability)

	// The one server is available.
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: name}, 1)
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionAvailable, metav1.ConditionTrue, cachev1alpha1.ReasonReplicasAvailable)
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionProgressing, metav1.ConditionFalse, cachev1alpha1.ReasonRolloutComplete)
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionDegraded, metav1.ConditionFalse, cachev1alpha1.ReasonHealthy)
	expectCondition(g, c, ns, name, conditions.Ready, metav1.ConditionTrue, cachev1alpha1.ReasonReady)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, m)).To(Succeed())
		g.Expect(m.Status.Replicas).To(Equal(int32(1)))
		g.Expect(m.Status.ReadyReplicas).To(Equal(int32(1)))
	}).Should(Succeed())

	// Scaled to 3: the Deployment controller first has to notice, then two
	// servers are not yet available.
	updateSpec(g, c, m, func(spec *cachev1alpha1.MemcachedSpec) { spec.Size = 3 })
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionProgressing, metav1.ConditionTrue, cachev1alpha1.ReasonSpecNotObserved)
	expectCondition(g, c, ns, name, conditions.Ready, metav1.ConditionFalse, cachev1alpha1.ReasonSpecNotObserved)
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: name}, 1)
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionProgressing, metav1.ConditionTrue, cachev1alpha1.ReasonWaitingForAvailability)
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionAvailable, metav1.ConditionFalse, cachev1alpha1.ReasonReplicasUnavailable)

	// The rollout gets stuck.
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: name}, 1, appsv1.DeploymentCondition{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
		Message: `ReplicaSet "conds-abc" has timed out progressing.`, LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	})
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionDegraded, metav1.ConditionTrue, cachev1alpha1.ReasonProgressDeadlineExceeded)
	expectCondition(g, c, ns, name, conditions.Ready, metav1.ConditionFalse, cachev1alpha1.ReasonProgressDeadlineExceeded)
	g.Eventually(func(g Gomega) {
		g.Expect(testenv.Events(g, c, ns, name)).To(ContainElement(HavePrefix("Warning ProgressDeadlineExceeded: Deployment conds is degraded")))
	}).Should(Succeed())

	// And recovers.
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: name}, 3)
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionDegraded, metav1.ConditionFalse, cachev1alpha1.ReasonHealthy)
	expectCondition(g, c, ns, name, conditions.Ready, metav1.ConditionTrue, cachev1alpha1.ReasonReady)
}

func TestDeletionRemovesTheChildren(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := builders.Memcached(ns, "deleted").Size(1).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	dep, svc := children(g, c, m)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(controllerutil.ContainsFinalizer(m, memcached.Finalizer)).To(BeTrue())
	}).Should(Succeed())

	g.Expect(c.Delete(context.Background(), m)).To(Succeed())
	// envtest runs no garbage collector: the children go because the
	// finalizer deletes them.
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(m), m))).To(BeTrue(), "the Memcached is gone")
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(dep), dep))).To(BeTrue(), "the Deployment is gone")
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(svc), svc))).To(BeTrue(), "the Service is gone")
		g.Expect(testenv.Events(g, c, ns, "deleted")).To(ContainElements(
			"Warning Deleting: Deleting Memcached deleted: removing its Deployment and Service",
			"Normal DeploymentDeleted: Deleted Deployment deleted",
			"Normal ServiceDeleted: Deleted Service deleted",
		))
	}).Should(Succeed())
}

// The server gauges follow the Deployment's report and go with the
// Memcached.
func TestMetricsFollowTheServersAndGoWithTheMemcached(t *testing.T) {
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{})
	m := builders.Memcached(ns, "measured").Size(2).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	children(g, c, m)

	testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(m), 1)
	g.Eventually(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "memcached_", ns, "measured") }).Should(Equal(map[string]float64{
		"memcached_servers_desired{}":   2,
		"memcached_servers_available{}": 1,
	}))
	testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(m), 2)
	g.Eventually(func(g Gomega) float64 {
		return testenv.SeriesOf(g, "memcached_", ns, "measured")["memcached_servers_available{}"]
	}).Should(Equal(2.0))

	g.Expect(c.Delete(context.Background(), m)).To(Succeed())
	g.Eventually(func(g Gomega) map[string]float64 { return testenv.SeriesOf(g, "memcached_", ns, "measured") }).Should(BeEmpty())
}

func TestFailingCleanupIsShownAndRetried(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	// The cleanup is made to fail first.
	d := descriptorWith(func(r *memcached.Reconciler) {
		memcached.WrapCleanup(r, func(real func(context.Context, *cachev1alpha1.Memcached) error) func(context.Context, *cachev1alpha1.Memcached) error {
			return func(ctx context.Context, m *cachev1alpha1.Memcached) error {
				if failing.Load() {
					return errors.New("injected cleanup failure")
				}
				return real(ctx, m)
			}
		})
	})
	g, c, ns := testenv.StartController(t, d, options, testenv.ManagerOptions{})
	const name = "stuck"
	m := builders.Memcached(ns, name).Size(1).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	dep, _ := children(g, c, m)
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(controllerutil.ContainsFinalizer(m, memcached.Finalizer)).To(BeTrue())
	}).Should(Succeed())

	g.Expect(c.Delete(context.Background(), m)).To(Succeed())
	expectCondition(g, c, ns, name, cachev1alpha1.ConditionDegraded, metav1.ConditionTrue, cachev1alpha1.ReasonFinalizing)
	expectCondition(g, c, ns, name, conditions.Ready, metav1.ConditionFalse, conditions.ReasonCleanupFailed)
	g.Eventually(func(g Gomega) {
		g.Expect(testenv.Events(g, c, ns, name)).To(ContainElements(
			"Warning Deleting: Deleting Memcached stuck: removing its Deployment and Service",
			ContainSubstring("injected cleanup failure"),
		))
	}).Should(Succeed())
	// Held by the finalizer, with its children, as long as the cleanup fails.
	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(controllerutil.ContainsFinalizer(m, memcached.Finalizer)).To(BeTrue())
		g.Expect(m.DeletionTimestamp.IsZero()).To(BeFalse())
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(dep), &appsv1.Deployment{})).To(Succeed())
		g.Expect(conditions.Get(m, conditions.Ready).Message).To(ContainSubstring("injected cleanup failure"))
	}).Should(Succeed())

	// Once the cleanup succeeds, the retry completes the deletion.
	failing.Store(false)
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(m), m))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(dep), dep))).To(BeTrue())
	}, 30*time.Second).Should(Succeed())
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	cfg, writes := testenv.CountWrites(testenv.Get(t).Config)
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{Config: cfg})
	const name = "steady"
	m := builders.Memcached(ns, name).Size(2).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	children(g, c, m)
	testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: name}, 2)
	expectCondition(g, c, ns, name, conditions.Ready, metav1.ConditionTrue, cachev1alpha1.ReasonReady)
	// Touch the Deployment's status in a way that changes nothing the
	// Memcached reports (no reconcile), and label it as another tool
	// would (a reconcile, which leaves the label alone): nothing is written.
	testenv.ExpectSteadyState(g, writes, memcached.Name, ns, func() {
		testenv.SetDeploymentStatus(g, c, client.ObjectKey{Namespace: ns, Name: name}, 2, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			Message: "Deployment has minimum availability.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		})
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		g.Expect(c.Patch(context.Background(), dep, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"test-touch":"1"}}}`)))).To(Succeed())
	})
}

// Servers that become available within the startup grace give a new
// Memcached one status write, Ready=True; a server failure ends the grace at
// once.
func TestStartupGraceSavesAStatusWrite(t *testing.T) {
	cfg, writes := testenv.CountWrites(testenv.Get(t).Config)
	opts := options
	opts.StartupGrace = reconciler.DefaultStartupGrace
	g, c, ns := testenv.StartController(t, memcached.Descriptor(), opts, testenv.ManagerOptions{Config: cfg})
	statusWrites := func(name string) []string {
		return writes.Requests("/namespaces/" + ns + "/memcacheds/" + name + "/status")
	}

	quick := builders.Memcached(ns, "quick").Size(2).Obj()
	g.Expect(c.Create(context.Background(), quick)).To(Succeed())
	children(g, c, quick)
	testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(quick), 1)
	expectNoStatus(g, c, quick, time.Second)
	testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(quick), 2)
	expectCondition(g, c, ns, quick.Name, conditions.Ready, metav1.ConditionTrue, cachev1alpha1.ReasonReady)
	g.Expect(statusWrites(quick.Name)).To(HaveLen(1))

	failing := builders.Memcached(ns, "failing").Size(1).Obj()
	g.Expect(c.Create(context.Background(), failing)).To(Succeed())
	children(g, c, failing)
	testenv.SetDeploymentStatus(g, c, client.ObjectKeyFromObject(failing), 0, appsv1.DeploymentCondition{
		Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
		Message: `pods "failing-abc" is forbidden: exceeded quota`, LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	})
	start := time.Now()
	expectCondition(g, c, ns, failing.Name, conditions.Ready, metav1.ConditionFalse, cachev1alpha1.ReasonReplicaFailure)
	g.Expect(time.Since(start)).To(BeNumerically("<", reconciler.DefaultStartupGrace), "a failure is shown before the grace ends")
}

// The generated ClusterRole is all the controller needs: it runs here as a
// user with nothing else, through a create, a scale and a deletion.
func TestGeneratedRoleSuffices(t *testing.T) {
	env := testenv.Get(t)
	cfg := generatedRoleConfig(t)

	g, c, ns := testenv.StartController(t, memcached.Descriptor(), options, testenv.ManagerOptions{Config: cfg})
	m := builders.Memcached(ns, "rbac").Size(1).Obj()
	g.Expect(c.Create(context.Background(), m)).To(Succeed())
	dep, svc := children(g, c, m)
	// As the Deployment controller would; the controller's role may not.
	testenv.SetDeploymentStatus(g, env.Client, client.ObjectKey{Namespace: ns, Name: "rbac"}, 1)
	// The first status, before the scale: a new Memcached's status waits for
	// the Deployment controller's report of the current generation, which
	// no Deployment controller sends here after the scale.
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(conditions.Get(m, conditions.Ready)).NotTo(BeNil())
	}).Should(Succeed())
	updateSpec(g, c, m, func(spec *cachev1alpha1.MemcachedSpec) { spec.Size = 2 })
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(controllerutil.ContainsFinalizer(m, memcached.Finalizer)).To(BeTrue())
		g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
		g.Expect(testenv.Events(g, c, ns, "rbac")).To(ContainElement("Normal DeploymentScaled: Scaled Deployment rbac from 1 to 2"))
	}).Should(Succeed())
	g.Expect(c.Delete(context.Background(), m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(m), m))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(dep), dep))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(svc), svc))).To(BeTrue())
	}).Should(Succeed())
}

// generatedRoleConfig is a config with the generated role of the
// Memcached controller.
func generatedRoleConfig(t *testing.T) *rest.Config {
	return testenv.GeneratedRoleConfig(t, "memcached")
}
