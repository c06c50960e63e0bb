// Package webhookcerttest holds what the envtest tests of the webhook
// server's certificates share (pkg/webhookcert and cmd/manager): webhook
// configurations the API server never calls, their CA bundles, and free
// loopback ports.
package webhookcerttest

import (
	"context"
	"net"
	"testing"

	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateWebhookConfiguration creates the ValidatingWebhookConfiguration
// name with one webhook per name in webhooks, for a resource that does not
// exist, so that the API server never calls them; the test's end deletes
// it.
func CreateWebhookConfiguration(t testing.TB, c client.Client, name string, webhooks ...string) string {
	t.Helper()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, wh := range webhooks {
		vwc.Webhooks = append(vwc.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:         wh,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/validate")},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"webhookcert.test"}, APIVersions: []string{"v1"}, Resources: []string{"nothing"}},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	if err := c.Create(context.Background(), vwc); err != nil {
		t.Fatalf("creating ValidatingWebhookConfiguration %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), vwc) })
	return name
}

// CABundles are the caBundles of a configuration's webhooks, in order.
func CABundles(g gomega.Gomega, c client.Client, name string) [][]byte {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Name: name}, vwc)).To(gomega.Succeed())
	var out [][]byte
	for _, wh := range vwc.Webhooks {
		out = append(out, wh.ClientConfig.CABundle)
	}
	return out
}

// FreePort is a loopback port nothing listens on, for a test's webhook
// server.
func FreePort(g gomega.Gomega) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
