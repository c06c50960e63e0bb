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
	// maxEntries bounds the cache; tokens are hashed, never kept.
	maxEntries = 1024
)

// Filter is a metricsserver.Options.FilterProvider: it makes the reviews
// with the manager's own configuration and HTTP client.
func Filter(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	g := &guard{tokens: authn.TokenReviews(), access: authz.SubjectAccessReviews(), now: time.Now, decisions: map[decisionKey]decision{}}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			code := g.check(r)
			if code != http.StatusOK {
				if code == http.StatusInternalServerError {
					log.Info("metrics request not served: the API server could not review it", "path", r.URL.Path)
				}
				http.Error(w, http.StatusText(code), code)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}

// guard decides requests and remembers its decisions.
type guard struct {
	tokens authenticationclient.TokenReviewInterface
	access authorizationclient.SubjectAccessReviewInterface
	now    func() time.Time

	mu        sync.Mutex
	decisions map[decisionKey]decision
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
// valid token, 403 when its user may not read the path, 500 when the API
// server could not answer.
func (g *guard) check(r *http.Request) int {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return http.StatusUnauthorized
	}
	key := decisionKey{token: sha256.Sum256([]byte(token)), path: r.URL.Path, verb: strings.ToLower(r.Method)}
	if code, ok := g.remembered(key); ok {
		return code
	}
	code := g.review(r.Context(), token, key)
	if code != http.StatusInternalServerError {
		g.remember(key, code)
	}
	return code
}

// review asks the API server who the token belongs to and whether that
// user may make the request.
func (g *guard) review(ctx context.Context, token string, key decisionKey) int {
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
	d, ok := g.decisions[key]
	if !ok || !g.now().Before(d.expires) {
		return 0, false
	}
	return d.code, true
}

func (g *guard) remember(key decisionKey, code int) {
	ttl := deniedTTL
	if code == http.StatusOK {
		ttl = allowedTTL
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if len(g.decisions) >= maxEntries {
		for k, d := range g.decisions {
			if !now.Before(d.expires) {
				delete(g.decisions, k)
			}
		}
		if len(g.decisions) >= maxEntries {
			clear(g.decisions)
		}
	}
	g.decisions[key] = decision{code: code, expires: now.Add(ttl)}
}
