package manager_test

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/multi-operator/multi-operator/pkg/manager"
)

// rateLimiter is the rate limiter of the client controller-runtime makes
// from cfg for objects of gvk.
func rateLimiter(g *WithT, cfg *rest.Config, gvk schema.GroupVersionKind) flowcontrol.RateLimiter {
	httpClient, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := apiutil.RESTClientForGVK(gvk, false, false, cfg, scheme.Codecs, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	return rc.GetRateLimiter()
}

func TestClientConfigSharesOneBucketAcrossKinds(t *testing.T) {
	g := NewWithT(t)
	base := &rest.Config{Host: "https://127.0.0.1:6443", QPS: 7, Burst: 9}
	cfg := manager.ClientConfig(base, 5, 3)

	pods := rateLimiter(g, cfg, corev1.SchemeGroupVersion.WithKind("Pod"))
	deployments := rateLimiter(g, cfg, appsv1.SchemeGroupVersion.WithKind("Deployment"))
	g.Expect(pods).NotTo(BeNil())
	g.Expect(deployments).To(BeIdenticalTo(pods), "one bucket for every kind")
	g.Expect(pods.QPS()).To(BeNumerically("==", 5))
	// The burst is spent by any kind's requests.
	for range 3 {
		g.Expect(pods.TryAccept()).To(BeTrue())
	}
	g.Expect(deployments.TryAccept()).To(BeFalse(), "the pods' requests spent the deployments' burst too")

	g.Expect(cfg.DisableCompression).To(BeTrue(), "events are not gzipped for us")
	g.Expect(base.DisableCompression).To(BeFalse(), "the caller's config is not changed")
	g.Expect(base.QPS).To(BeNumerically("==", 7))
}

func TestClientConfigWithoutQPSHasNoLimit(t *testing.T) {
	for name, cfg := range map[string]*rest.Config{
		"qps 0":           manager.ClientConfig(&rest.Config{Host: "https://127.0.0.1:6443", QPS: 20, Burst: 30}, 0, 30),
		"negative qps":    manager.ClientConfig(&rest.Config{Host: "https://127.0.0.1:6443"}, -1, 0),
		"leader election": manager.LeaderElectionConfig(&rest.Config{Host: "https://127.0.0.1:6443", QPS: 5, Burst: 10}),
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(rateLimiter(g, cfg, corev1.SchemeGroupVersion.WithKind("Pod"))).To(BeNil())
			g.Expect(cfg.DisableCompression).To(BeTrue())
		})
	}
}
