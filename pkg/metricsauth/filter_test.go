package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/multi-operator/multi-operator/pkg/manager"
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
	serve := newHandler(g, cfg, manager.ClientConfig(env.Config, 0, 0))
	get := func(path, bearer string) int { return serve(ctx, path, bearer) }

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

// newHandler returns the Filter made with cfg around a handler that
// serves "metrics", and a GET through it with a bearer token.
// newHandler is the metrics endpoint's filter as the manager sets it up:
// the reviews on base, and the manager's own configuration mgrCfg handed
// to the provider.
func newHandler(g Gomega, base, mgrCfg *rest.Config) func(ctx context.Context, path, bearer string) int {
	httpClient, err := rest.HTTPClientFor(mgrCfg)
	g.Expect(err).NotTo(HaveOccurred())
	filter, err := Provider(base, DefaultQPS, DefaultBurst)(mgrCfg, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	handler, err := filter(log.Log, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	g.Expect(err).NotTo(HaveOccurred())
	return func(ctx context.Context, path, bearer string) int {
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, http.NoBody)
		req.Header.Set("Authorization", "Bearer "+bearer)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}
}

// A flood of junk tokens spends the reviews' own budget, never the
// manager's, and is answered at once (401, or 429 past the budget)
// instead of queueing.
func TestJunkTokensSpendABudgetOfTheirOwn(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	// The manager's bucket holds one request and refills only after many
	// minutes, so that one request taken from it shows.
	mgrCfg := manager.ClientConfig(env.Config, 0.001, 1)
	cfg, reviews := testenv.CountWrites(env.Config)
	get := newHandler(g, cfg, mgrCfg)

	const n = 200
	codes := make(chan int, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			codes <- get(ctx, "/metrics", fmt.Sprintf("junk-%d", i))
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(codes)

	// The one request the bucket holds goes out at once (discovery goes
	// through the admin's config, so that only this request takes a token).
	mgr, err := client.New(mgrCfg, client.Options{Scheme: env.Scheme, Mapper: env.Client.RESTMapper()})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g.Expect(mgr.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("default"))).To(Succeed(), "the manager's bucket still holds its request")
	count := map[int]int{}
	for code := range codes {
		count[code]++
	}
	g.Expect(count).To(HaveKey(http.StatusUnauthorized), "junk within the budget is reviewed and refused")
	g.Expect(count).To(HaveKey(http.StatusTooManyRequests), "junk past the budget is refused unreviewed")
	g.Expect(count[http.StatusUnauthorized] + count[http.StatusTooManyRequests]).To(Equal(n))
	g.Expect(elapsed).To(BeNumerically("<", 2*maxWait+time.Second), "answered at once, not queued")
	g.Expect(len(reviews.Requests("tokenreviews"))).To(And(
		Equal(count[http.StatusUnauthorized]),
		BeNumerically("<=", DefaultBurst+DefaultQPS*elapsed.Seconds()+1),
	), "one review per refused token, within the budget")
}

// A token longer than any real one is refused without a review.
func TestOverLongTokenIsRefusedUnreviewed(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	cfg, reviews := testenv.CountWrites(env.Config)
	get := newHandler(g, cfg, manager.ClientConfig(env.Config, 0, 0))
	ctx := context.Background()

	g.Expect(get(ctx, "/metrics", strings.Repeat("a", maxTokenBytes+1))).To(Equal(http.StatusUnauthorized))
	g.Expect(reviews.Requests("tokenreviews")).To(BeEmpty())
	g.Expect(get(ctx, "/metrics", strings.Repeat("a", maxTokenBytes))).To(Equal(http.StatusUnauthorized))
	g.Expect(reviews.Requests("tokenreviews")).To(HaveLen(1), "a token of the limit's length is reviewed")
}

// Decisions expire, a denial sooner than an approval, and the caches stay
// bounded.
func TestGuardRemembersForALimitedTime(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(1000, 0)
	guard := newGuard(nil, nil, DefaultQPS, DefaultBurst)
	guard.now = func() time.Time { return now }
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
}

// Junk tokens fill the cache of denials up to its bound, and push out
// neither a scraper's approval nor every other denial.
func TestGuardCacheIsBoundedAndJunkKeepsApprovals(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(1000, 0)
	guard := newGuard(nil, nil, DefaultQPS, DefaultBurst)
	guard.now = func() time.Time { return now }
	scraper := decisionKey{path: "/metrics", verb: "get"}
	guard.remember(scraper, http.StatusOK)

	junk := func(i int) decisionKey {
		return decisionKey{token: sha256.Sum256(fmt.Appendf(nil, "junk-%d", i)), path: "/metrics", verb: "get"}
	}
	for i := range 3 * maxDenied {
		guard.remember(junk(i), http.StatusUnauthorized)
	}
	g.Expect(len(guard.denied)).To(Equal(maxDenied))
	code, ok := guard.remembered(scraper)
	g.Expect(ok).To(BeTrue(), "junk does not push out an approval")
	g.Expect(code).To(Equal(http.StatusOK))
	_, ok = guard.remembered(junk(3*maxDenied - 1))
	g.Expect(ok).To(BeTrue(), "the newest denial is remembered")

	for i := range 2 * maxAllowed {
		guard.remember(decisionKey{token: sha256.Sum256(fmt.Appendf(nil, "reader-%d", i)), path: "/metrics", verb: "get"}, http.StatusOK)
	}
	g.Expect(len(guard.allowed)).To(Equal(maxAllowed))
	g.Expect(len(guard.denied)).To(Equal(maxDenied))
}
