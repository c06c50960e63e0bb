package metricsauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// token creates a ServiceAccount in ns and returns a token of it.
func token(g Gomega, env *testenv.Env, ns, name string) string {
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	g.Expect(env.Client.Create(ctx, sa)).To(Succeed())
	tr := &authenticationv1.TokenRequest{}
	g.Expect(env.Client.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	return tr.Status.Token
}

// Only a token whose user may GET the path is served; the decisions are
// remembered, so a scraper's repeated requests cost no further reviews
// until they expire.
func TestFilterServesOnlyAllowedTokens(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	allowed, denied := token(g, env, ns, "reader"), token(g, env, ns, "stranger")
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}},
	}
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	g.Expect(env.Client.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, binding)
		_ = env.Client.Delete(ctx, role)
	})

	cfg, reviews := testenv.CountWrites(env.Config)
	httpClient, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	filter, err := Filter(cfg, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	handler, err := filter(log.Log, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	g.Expect(err).NotTo(HaveOccurred())
	get := func(path, bearer string) int {
		req := httptest.NewRequest(http.MethodGet, path, http.NoBody)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}

	g.Eventually(func() int { return get("/metrics", allowed) }, "10s", "200ms").Should(Equal(http.StatusOK), "RBAC has the binding")
	reviews.Reset()
	g.Expect(get("/metrics", allowed)).To(Equal(http.StatusOK))
	g.Expect(reviews.Requests()).To(BeEmpty(), "an allowed token is remembered")

	g.Expect(get("/metrics", denied)).To(Equal(http.StatusForbidden))
	g.Expect(get("/other", allowed)).To(Equal(http.StatusForbidden), "the binding grants /metrics only")
	g.Expect(get("/metrics", "not-a-token")).To(Equal(http.StatusUnauthorized))
	g.Expect(get("/metrics", "")).To(Equal(http.StatusUnauthorized))
	g.Expect(reviews.Requests("tokenreviews")).To(HaveLen(3), "one review for each token not seen before, none without one")
}

// Decisions expire, a denial sooner than an approval, and the cache stays
// bounded.
func TestGuardRemembersForALimitedTime(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(1000, 0)
	guard := &guard{now: func() time.Time { return now }, decisions: map[decisionKey]decision{}}
	allowed, denied := decisionKey{path: "/metrics", verb: "get"}, decisionKey{path: "/other", verb: "get"}
	guard.remember(allowed, http.StatusOK)
	guard.remember(denied, http.StatusForbidden)

	now = now.Add(deniedTTL)
	code, ok := guard.remembered(allowed)
	g.Expect(ok).To(BeTrue())
	g.Expect(code).To(Equal(http.StatusOK))
	_, ok = guard.remembered(denied)
	g.Expect(ok).To(BeFalse(), "a denial is asked again after %s", deniedTTL)

	now = now.Add(allowedTTL)
	_, ok = guard.remembered(allowed)
	g.Expect(ok).To(BeFalse(), "an approval is asked again after %s", allowedTTL)

	for i := range 2 * maxEntries {
		guard.remember(decisionKey{path: "/" + string(rune('a'+i%26)) + time.Duration(i).String(), verb: "get"}, http.StatusOK)
	}
	g.Expect(len(guard.decisions)).To(BeNumerically("<=", maxEntries))
}
