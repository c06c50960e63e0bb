// Package metricsauth guards the manager's metrics endpoint: a request is
// served only when its bearer token authenticates (a TokenReview) and the
// user it names may GET the path (a SubjectAccessReview), which is what a
// ClusterRole with nonResourceURLs grants.
//
// controller-runtime's own filter does the same through k8s.io/apiserver,
// which brings CEL, gRPC and OpenTelemetry with it and nearly doubled the
// manager's binary; the pages of it that start-up touches were most of the
// manager's resident memory at rest. The two reviews are two typed client
// calls, so the manager makes them itself.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long a decision is remembered: a scraper sends the same token every
// few seconds, and each review is an API request. A denial is remembered
// briefly, so that a binding just granted takes effect soon.
const (
	allowedTTL = time.Minute
	deniedTTL  = 10 * time.Second
	// maxAllowed and maxDenied bound the two caches apart, so that
	// anyone's junk tokens, which fill the denials, never push out the
	// scrapers' approvals. Tokens are hashed, never kept.
	maxAllowed = 256
	maxDenied  = 1024
)

// maxTokenBytes is the longest bearer token reviewed: a ServiceAccount
// token or an OIDC ID token is a few KiB at most, so a longer one is
// refused without asking the API server.
const maxTokenBytes = 8 << 10

// maxWait is the longest a request waits for the reviews' budget; past it
// the endpoint answers 429 at once, so that a flood of new tokens neither
// queues without end nor holds the server's goroutines.
const maxWait = time.Second

// DefaultQPS and DefaultBurst are the reviews' own budget, apart from the
// manager's: each new token costs a TokenReview and, when it
// authenticates, a SubjectAccessReview, and a scraper keeps its token for
// many scrapes, so a few requests a second serve every honest scraper.
const (
	DefaultQPS   = 5
	DefaultBurst = 10
)

// Provider returns a metricsserver.Options.FilterProvider whose reviews
// take their requests from a token bucket of their own, qps per second and
// burst at once, never from the manager's: anyone can send the endpoint a
// bearer token, and new tokens must not spend the reconcilers' budget. The
// reviews go out on a copy of base, the manager's configuration before
// its client-side budgets (pkg/manager.ClientConfig, which the filter is
// handed and ignores), without a rate limiter, over an HTTP client of
// their own. A request that would wait more than a second for the budget
// gets 429 Too Many Requests.
func Provider(base *rest.Config, qps float32, burst int) func(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	return func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
		own := rest.CopyConfig(base)
		// Every request made on own has already taken its token from the
		// guard's budget.
		own.QPS, own.Burst, own.RateLimiter = -1, 0, nil
		httpClient, err := rest.HTTPClientFor(own)
		if err != nil {
			return nil, err
		}
		authn, err := authenticationclient.NewForConfigAndClient(own, httpClient)
		if err != nil {
			return nil, err
		}
		authz, err := authorizationclient.NewForConfigAndClient(own, httpClient)
		if err != nil {
			return nil, err
		}
		g := newGuard(authn.TokenReviews(), authz.SubjectAccessReviews(), qps, burst)
		return g.filter, nil
	}
}

// filter is the guard as a metricsserver.Filter.
func (g *guard) filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := g.check(r)
		if code != http.StatusOK {
			switch code {
			case http.StatusInternalServerError:
				log.Info("metrics request not served: the API server could not review it", "path", r.URL.Path)
			case http.StatusTooManyRequests:
				w.Header().Set("Retry-After", "1")
			}
			http.Error(w, http.StatusText(code), code)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// guard decides requests and remembers its decisions.
type guard struct {
	tokens authenticationclient.TokenReviewInterface
	access authorizationclient.SubjectAccessReviewInterface
	now    func() time.Time
	// budget is the reviews' own token bucket.
	budget *rate.Limiter

	mu              sync.Mutex
	allowed, denied map[decisionKey]decision
}

func newGuard(tokens authenticationclient.TokenReviewInterface, access authorizationclient.SubjectAccessReviewInterface, qps float32, burst int) *guard {
	if burst < 1 {
		burst = 1
	}
	return &guard{
		tokens: tokens, access: access, now: time.Now,
		budget:  rate.NewLimiter(rate.Limit(qps), burst),
		allowed: map[decisionKey]decision{}, denied: map[decisionKey]decision{},
	}
}

// decisionKey is what a decision depends on: the token (hashed), the path
// and the verb.
type decisionKey struct {
	token      [sha256.Size]byte
	path, verb string
}

// decision is a remembered answer.
type decision struct {
	code    int
	expires time.Time
}

// check returns the HTTP status for r: 200 to serve it, 401 without a
// valid token, 403 when its user may not read the path, 429 when the
// reviews' budget is spent, 500 when the API server could not answer.
func (g *guard) check(r *http.Request) int {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" || len(token) > maxTokenBytes {
		return http.StatusUnauthorized
	}
	key := decisionKey{token: sha256.Sum256([]byte(token)), path: r.URL.Path, verb: strings.ToLower(r.Method)}
	if code, ok := g.remembered(key); ok {
		return code
	}
	code := g.review(r.Context(), token, key)
	switch code {
	case http.StatusInternalServerError, http.StatusTooManyRequests:
	default:
		g.remember(key, code)
	}
	return code
}

// admit takes a token from the reviews' budget for one API request,
// waiting at most maxWait for it: the bucket refuses at once a wait
// longer than that, and takes no token then.
func (g *guard) admit(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	return g.budget.Wait(ctx) == nil
}

// review asks the API server who the token belongs to and whether that
// user may make the request.
func (g *guard) review(ctx context.Context, token string, key decisionKey) int {
	if !g.admit(ctx) {
		return http.StatusTooManyRequests
	}
	tr, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return http.StatusInternalServerError
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized
	}
	user := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	if !g.admit(ctx) {
		return http.StatusTooManyRequests
	}
	sar, err := g.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: key.path, Verb: key.verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return http.StatusInternalServerError
	}
	if !sar.Status.Allowed {
		return http.StatusForbidden
	}
	return http.StatusOK
}

func (g *guard) remembered(key decisionKey) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	for _, m := range []map[decisionKey]decision{g.allowed, g.denied} {
		if d, ok := m[key]; ok && now.Before(d.expires) {
			return d.code, true
		}
	}
	return 0, false
}

func (g *guard) remember(key decisionKey, code int) {
	m, ttl, limit := g.denied, deniedTTL, maxDenied
	if code == http.StatusOK {
		m, ttl, limit = g.allowed, allowedTTL, maxAllowed
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if _, ok := m[key]; !ok && len(m) >= limit {
		for k, d := range m {
			if !now.Before(d.expires) {
				delete(m, k)
			}
		}
		// Still full of live decisions: one goes, any one, so that the
		// rest stay.
		for k := range m {
			if len(m) < limit {
				break
			}
			delete(m, k)
		}
	}
	m[key] = decision{code: code, expires: now.Add(ttl)}
}
