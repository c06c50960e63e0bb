package tdset_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// The generated ClusterRole is all the controller needs: it runs here as a
// user with nothing else, through creating, correcting and deleting every
// kind of child, and is never refused.
func TestGeneratedRoleSuffices(t *testing.T) {
	env := testenv.Get(t)
	role := generatedRole(t)
	// The scale subresource is read and patched, never updated: the role
	// grants no more than that.
	for _, rule := range role.Rules {
		for _, res := range rule.Resources {
			if strings.HasSuffix(res, "/scale") && slices.Contains(rule.Verbs, "update") {
				t.Errorf("the role grants update on %s, which the controller never does", res)
			}
		}
	}
	cfg, forbidden := testenv.CountForbidden(impersonate(t, env, "tdset-controller-under-test", role))

	g, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{Config: cfg})
	tds := builders.TDSet(ns, "rbac").ServicePort(80).Autoscaling(10).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	key := client.ObjectKeyFromObject(tds)
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "rbac")).To(Equal(int32(5)))
		g.Expect(c.Get(bg, key, &corev1.Service{})).To(Succeed())
		g.Expect(minReplicasOf(g, c, ns, "rbac")).To(Equal(int32(5)))
	}).Should(Succeed())
	// As the Deployment controller would; the controller's role may not.
	testenv.SetDeploymentStatus(g, env.Client, key, 5)
	g.Eventually(func(g Gomega) {
		fetch(g, c, tds)
		g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
		g.Expect(conditions.IsTrue(tds, conditions.Ready)).To(BeTrue())
	}).Should(Succeed())

	// Without autoscaling and service: the HPA and the Service are deleted
	// and the Deployment is scaled.
	patch(g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac"}}, `{"spec":{"replicas":7}}`)
	patch(g, c, tds, `{"spec":{"autoscaling":null,"service":null}}`)
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(c.Get(bg, key, &autoscalingv2.HorizontalPodAutoscaler{}))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(c.Get(bg, key, &corev1.Service{}))).To(BeTrue())
		g.Expect(replicasOf(g, c, ns, "rbac")).To(Equal(int32(5)))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "rbac") }).Should(ContainElements(
		"Normal AutoscalerDeleted: Deleted HorizontalPodAutoscaler rbac: spec.autoscaling is not set",
		"Normal ServiceDeleted: Deleted Service rbac: spec.service.port is not set",
		"Normal DeploymentScaled: Scaled Deployment rbac from 7 to 5 (window every day 09:00-17:00)"))

	// A scale target: read, scaled, watched and given back through the
	// scale subresource and the metadata watch the role grants.
	sts := builders.StatefulSet(ns, "rbac-db", 1)
	g.Expect(env.Client.Create(bg, sts)).To(Succeed())
	target := builders.TDSet(ns, "rbac-db").ScaleTarget("apps/v1", "StatefulSet", "rbac-db").OnDelete(schedulev2.OnDeleteRestore).Obj()
	g.Expect(c.Create(bg, target)).To(Succeed())
	stsReplicas := func(g Gomega) int32 {
		g.Expect(env.Client.Get(bg, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		return *sts.Spec.Replicas
	}
	g.Eventually(stsReplicas).Should(Equal(int32(5)))
	patch(g, env.Client, sts, `{"spec":{"replicas":2}}`)
	g.Eventually(stsReplicas).Should(Equal(int32(5)), "set back")
	g.Expect(c.Delete(bg, target)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(target), target)) }).Should(BeTrue())
	g.Expect(stsReplicas(g)).To(Equal(int32(1)), "restored")

	// A user's HPA, unlabelled, driven through hpaRef: cached, watched,
	// patched and given back under the role; and one that a TDSet without
	// hpaRef finds through the HPAs' index.
	g.Expect(env.Client.Create(bg, builders.Deployment(ns, "rbac-web", 1))).To(Succeed())
	g.Expect(env.Client.Create(bg, builders.HPA(ns, "rbac-web", "apps/v1", "Deployment", "rbac-web", 1, 6))).To(Succeed())
	driving := builders.TDSet(ns, "rbac-web").ScaleTarget("apps/v1", "Deployment", "rbac-web").HPARef("rbac-web", 0).Obj()
	g.Expect(c.Create(bg, driving)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(hpaBounds(g, env.Client, ns, "rbac-web")).To(Equal([2]int32{5, 6})) }).Should(Succeed())
	g.Expect(c.Delete(bg, driving)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(driving), driving)) }).Should(BeTrue())
	g.Expect(hpaBounds(g, env.Client, ns, "rbac-web")).To(Equal([2]int32{1, 6}), "given back")
	fighting := builders.TDSet(ns, "rbac-web-2").ScaleTarget("apps/v1", "Deployment", "rbac-web").Obj()
	g.Expect(c.Create(bg, fighting)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(readyOf(g, c, fighting).Reason).To(Equal(schedulev2.ReasonTargetAutoscaled)) }).Should(Succeed())

	// A Calendar whose dates come from a watched ConfigMap's .ics file,
	// and one whose ConfigMap lacks the watch label (read from the API
	// server to say so).
	g.Expect(env.Client.Create(bg, icsConfigMap(ns, "rbac-ics", ics("BEGIN:VEVENT", "SUMMARY:Closed", "DTSTART;VALUE=DATE:20260310", "END:VEVENT"), true))).To(Succeed())
	g.Expect(env.Client.Create(bg, icsConfigMap(ns, "rbac-unlabelled", ics(), false))).To(Succeed())
	for _, name := range []string{"rbac-ics", "rbac-unlabelled"} {
		g.Expect(env.Client.Create(bg, importingCalendar(ns, name, name, ptr.To[int32](1)))).To(Succeed())
	}
	imports := builders.TDSet(ns, "rbac-ics").Calendar(schedulev2.CalendarKindNamespaced, "rbac-ics").Obj()
	unlabelled := builders.TDSet(ns, "rbac-unlabelled").Calendar(schedulev2.CalendarKindNamespaced, "rbac-unlabelled").Obj()
	g.Expect(c.Create(bg, imports)).To(Succeed())
	g.Expect(c.Create(bg, unlabelled)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "rbac-ics")).To(Equal(int32(1)))
		g.Expect(readyOf(g, c, unlabelled).Message).To(ContainSubstring("lacks the label multi-operator.dev/watch=true"))
	}).Should(Succeed())
	g.Expect(forbidden.Requests()).To(BeEmpty(), "no request of the controller was refused")
}

// generatedRole is the controller's generated ClusterRole.
func generatedRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", "tdset", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(raw, role); err != nil {
		t.Fatal(err)
	}
	return role
}

// impersonate binds roles to user for the test and returns the admin
// config acting as user.
func impersonate(t *testing.T, env *testenv.Env, user string, roles ...*rbacv1.ClusterRole) *rest.Config {
	t.Helper()
	for _, role := range roles {
		bind := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-" + user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		for _, obj := range []client.Object{role, bind} {
			if err := env.Client.Create(bg, obj); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_ = env.Client.Delete(bg, bind)
			_ = env.Client.Delete(bg, role)
		})
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

// A kind added to --tdset-scalable-kinds whose scale subresource the
// manager's role does not cover: the TDSet reports TargetForbidden instead
// of retrying, and its deletion (onDelete Restore) is not held up.
func TestScaleTargetForbidden(t *testing.T) {
	env := testenv.Get(t)
	// ReplicaSets: get, list and watch for the watch, and, at first, their
	// scale subresource.
	extra := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tdset-forbidden-test-replicasets"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets/scale"}, Verbs: []string{"get", "patch"}},
		},
	}
	role := generatedRole(t)
	role.Name += "-forbidden-test"
	cfg := impersonate(t, env, "tdset-forbidden-under-test", role, extra)
	opts := reconciler.Options{Clock: clocktesting.NewFakeClock(office), ScalableKinds: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}}
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), opts, testenv.ManagerOptions{Config: cfg})

	rs := builders.ReplicaSet(ns, "bare", 1)
	g.Expect(env.Client.Create(bg, rs)).To(Succeed())
	rsReplicas := func(g Gomega) int32 {
		g.Expect(env.Client.Get(bg, client.ObjectKeyFromObject(rs), rs)).To(Succeed())
		return *rs.Spec.Replicas
	}
	tds := builders.TDSet(ns, "bare").ScaleTarget("apps/v1", "ReplicaSet", "bare").OnDelete(schedulev2.OnDeleteRestore).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(rsReplicas).Should(Equal(int32(5)))
	g.Eventually(func(g Gomega) {
		g.Expect(fetch(g, c, tds).Status.Target).NotTo(BeNil())
		g.Expect(tds.Status.Target.OriginalReplicas).To(HaveValue(Equal(int32(1))))
	}).Should(Succeed())

	// The scale subresource is taken away: refused, not retried.
	extra.Rules = extra.Rules[:1]
	g.Expect(env.Client.Update(bg, extra)).To(Succeed())
	poke(g, c, tds, "2h")
	msg := "the manager's role may not read or scale ReplicaSet bare (a kind added to --tdset-scalable-kinds needs get and patch on <resource>/scale and get, list and watch on the resource); nothing is written to it"
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(fetch(g, c, tds), conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonTargetForbidden))
		g.Expect(ready.Message).To(Equal(msg))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "bare") }).Should(ContainElement("Warning TargetForbidden: " + msg))

	// Deleted with onDelete Restore: a Warning, and the finalizer goes.
	g.Expect(c.Delete(bg, tds)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(bg, client.ObjectKeyFromObject(tds), tds)) }).Should(BeTrue())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "bare") }).Should(ContainElement(
		"Warning TargetForbidden: Left ReplicaSet bare as it is instead of restoring its 1 replicas: the manager's role may not read or scale ReplicaSet bare (a kind added to --tdset-scalable-kinds needs get and patch on <resource>/scale and get, list and watch on the resource)"))
	g.Expect(rsReplicas(g)).To(Equal(int32(5)))
}
