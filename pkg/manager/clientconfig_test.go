package manager_test

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// TestClientConfigBudgets: every kind's requests share the controllers'
// bucket, and events take theirs from a bucket of their own, so that
// neither waits for the other.
func TestClientConfigBudgets(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	base := rest.CopyConfig(env.Config)
	base.QPS, base.Burst = 7, 9
	// A token a quarter of an hour: the burst is all there is.
	cfg, requests, events := manager.ClientConfigWithBudgets(base, 0.001, 1)
	g.Expect(requests).NotTo(BeNil())
	g.Expect(events.QPS()).To(BeNumerically("==", manager.EventsQPS))
	// Discovery goes through the admin's config: only the requests under
	// test take tokens.
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme, Mapper: env.Client.RESTMapper()})
	g.Expect(err).NotTo(HaveOccurred())
	within := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		return ctx
	}

	g.Expect(c.List(within(5*time.Second), &corev1.PodList{}, client.InNamespace(ns))).To(Succeed())
	err = c.List(within(time.Second), &appsv1.DeploymentList{}, client.InNamespace(ns))
	g.Expect(err).To(MatchError(ContainSubstring("client-side limit")), "the pods' request spent the deployments' burst too")

	event := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "budget", Namespace: ns},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "multi-operator.devsectim.io/test",
		ReportingInstance:   "test",
		Action:              "Test",
		Reason:              "Test",
		Type:                corev1.EventTypeNormal,
		Regarding:           corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "budget", APIVersion: "v1"},
	}
	g.Expect(c.Create(within(5*time.Second), event)).To(Succeed(), "events do not wait for the controllers' bucket")

	g.Expect(cfg.DisableCompression).To(BeTrue(), "lists are not gzipped for us")
	g.Expect(base.DisableCompression).To(BeFalse(), "the caller's config is not changed")
	g.Expect(base.QPS).To(BeNumerically("==", 7))
	g.Expect(cfg.RateLimiter).To(BeNil(), "client-go's per-client limiter is off: the budgets apply")
}

func TestClientConfigWithoutQPSHasNoLimit(t *testing.T) {
	for name, qps := range map[string]float32{"qps 0": 0, "negative qps": -1} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			env := testenv.Get(t)
			cfg, requests, events := manager.ClientConfigWithBudgets(env.Config, qps, 30)
			g.Expect(requests).To(BeNil())
			g.Expect(events).NotTo(BeNil(), "events keep their budget")
			c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
			g.Expect(err).NotTo(HaveOccurred())
			// With a limit, the requests past its burst would wait longer
			// than their deadline and fail.
			for range 50 {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				g.Expect(c.List(ctx, &corev1.PodList{}, client.InNamespace("default"))).To(Succeed())
				cancel()
			}
		})
	}
	g := NewWithT(t)
	lease := manager.LeaderElectionConfig(&rest.Config{Host: "https://127.0.0.1:6443", QPS: 5, Burst: 10})
	g.Expect(lease.RateLimiter).To(BeNil())
	g.Expect(lease.QPS).To(BeNumerically("<", 0), "no client-go limiter either")
}

// Leader election talks to the API server over a connection of its own:
// the controllers' config, however many clients use it, shares one HTTP/2
// connection, and the lease's config opens another.
func TestLeaderElectionHasAConnectionOfItsOwn(t *testing.T) {
	g := NewWithT(t)
	var connections atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			connections.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	base := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	get := func(c *http.Client) {
		resp, err := c.Get(srv.URL + "/version")
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
	}
	clientOf := func(cfg *rest.Config) *http.Client {
		c, err := rest.HTTPClientFor(cfg)
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	get(clientOf(manager.ClientConfig(base, 0, 0)))
	get(clientOf(manager.ClientConfig(base, 0, 0)))
	g.Expect(connections.Load()).To(BeEquivalentTo(1), "the controllers' clients share one connection")
	// The lease's one client, as leader election makes it.
	lease := clientOf(manager.LeaderElectionConfig(base))
	get(lease)
	get(lease)
	g.Expect(connections.Load()).To(BeEquivalentTo(2), "the lease opens one connection of its own")
}

func TestIsEvent(t *testing.T) {
	for path, want := range map[string]bool{
		"/apis/events.k8s.io/v1/namespaces/team-a/events":        true,
		"/apis/events.k8s.io/v1/namespaces/team-a/events/x.1a2b": true,
		"/k8s/clusters/c-1/apis/events.k8s.io/v1/events":         true,
		"/api/v1/namespaces/team-a/events":                       true,
		"/api/v1/namespaces/team-a/events/x.1a2b":                true,
		"/api/v1/events":                                          true,
		"/api/v1/namespaces/events":                               false,
		"/api/v1/namespaces/events/pods":                          false,
		"/api/v1/namespaces/team-a/pods/events":                   false,
		"/apis/apps/v1/namespaces/team-a/deployments":             false,
		"/apis/coordination.k8s.io/v1/namespaces/system/leases/x": false,
		"/version": false,
	} {
		if got := manager.IsEvent(path); got != want {
			t.Errorf("IsEvent(%q) = %v, want %v", path, got, want)
		}
	}
}
