package webhookcert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// markerRules parses the package's +kubebuilder:rbac markers into the rules
// of a Role (markers with namespace=) and of a ClusterRole, as
// controller-gen would, with the deployment's names replaced through
// rename.
func markerRules(t *testing.T, rename map[string]string) (namespaced, cluster []rbacv1.PolicyRule) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	to := func(v string) string {
		if r, ok := rename[v]; ok {
			return r
		}
		t.Fatalf("the test has no name for %q", v)
		return ""
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			marker, ok := strings.CutPrefix(strings.TrimSpace(line), "// +kubebuilder:rbac:")
			if !ok {
				continue
			}
			rule, ns := rbacv1.PolicyRule{}, ""
			for _, kv := range strings.Split(marker, ",") {
				key, value, _ := strings.Cut(kv, "=")
				values := strings.Split(strings.Trim(value, `"`), ";")
				switch key {
				case "groups":
					rule.APIGroups = values
				case "resources":
					rule.Resources = values
				case "verbs":
					rule.Verbs = values
				case "resourceNames":
					for _, v := range values {
						rule.ResourceNames = append(rule.ResourceNames, to(v))
					}
				case "namespace":
					ns = to(value)
				default:
					t.Fatalf("unknown key %q in marker %q", key, marker)
				}
			}
			if ns != "" {
				namespaced = append(namespaced, rule)
			} else {
				cluster = append(cluster, rule)
			}
		}
	}
	return namespaced, cluster
}

// TestLeastPrivilege runs the package as a ServiceAccount that holds only
// the rules of its RBAC markers: it creates, injects and adopts without a
// single Forbidden answer, while every rule but create names its objects.
func TestLeastPrivilege(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	crd := createConversionCRD(t, g, "Webhook")
	vwc := createVWC(t)
	namespaced, cluster := markerRules(t, map[string]string{
		"multi-operator-system":                           ns,
		"multi-operator-webhook-server-cert":              secretName,
		"tdsets.schedule.rs":                              crd,
		"multi-operator-validating-webhook-configuration": vwc,
	})
	for _, rule := range append(namespaced, cluster...) {
		if len(rule.ResourceNames) == 0 {
			g.Expect(rule.Verbs).To(Equal([]string{"create"}), "only create cannot be restricted by name: %v", rule)
		}
	}

	const sa = "webhookcert"
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}
	clusterName := "webhookcert-" + suffix()
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}, Rules: namespaced},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName}, Rules: cluster},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterName}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterName}},
	}
	for _, obj := range objs {
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
		if obj.GetNamespace() == "" {
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
		}
	}
	asSA := rest.CopyConfig(env.Config)
	asSA.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa}
	saClient, err := client.New(asSA, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	// The authorizer learns new bindings from its own watch: wait, so that
	// the manager's first requests do not count as forbidden.
	g.Eventually(func(g Gomega) {
		err := saClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		crds := &unstructured.UnstructuredList{}
		crds.SetGroupVersionKind(crdGVK.GroupVersion().WithKind("CustomResourceDefinitionList"))
		g.Expect(saClient.List(ctx, crds, client.MatchingFields{"metadata.name": crd})).To(Succeed())
		g.Expect(saClient.List(ctx, &admissionregistrationv1.ValidatingWebhookConfigurationList{}, client.MatchingFields{"metadata.name": vwc})).To(Succeed())
	}).Should(Succeed())

	cfg, forbidden := testenv.CountForbidden(asSA)
	opts := rotateOptions(ns, secretName)
	opts.ConversionCRDs = []string{crd}
	opts.ValidatingWebhookConfigurations = []string{vwc}
	var certs *Certificates
	env.StartManager(t, testenv.ManagerOptions{Config: cfg}, setup(&certs, opts))
	data := converged(g, env.Client, certs, ns, crd, vwc)

	// The path of a lost race, by hand: create, AlreadyExists, get.
	counted, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	loser := newReplica(g, rotateOptions(ns, secretName), counted, staleReader{})
	_, err = loser.sync(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(encodeCerts(serving(loser).Leaf)).To(Equal(data[keyTLSCert]))

	g.Expect(forbidden.Requests()).To(BeEmpty(), "no request was forbidden")

	// And no more than that: other Secrets stay out of reach.
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}}
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	g.Expect(apierrors.IsForbidden(saClient.Get(ctx, client.ObjectKeyFromObject(other), &corev1.Secret{}))).To(BeTrue())
	g.Expect(apierrors.IsForbidden(saClient.List(ctx, &corev1.SecretList{}, client.InNamespace(ns)))).To(BeTrue())
}
