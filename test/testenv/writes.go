package testenv

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// WriteCounter records requests that a client sends to the API server, as
// "METHOD path": its writes (POST, PUT, PATCH, DELETE) when made by
// CountWrites, its reads by CountReads, its forbidden requests by
// CountForbidden.
type WriteCounter struct {
	mu     sync.Mutex
	writes []string
}

// CountWrites returns a copy of cfg whose requests pass through a new counter.
func CountWrites(cfg *rest.Config) (*rest.Config, *WriteCounter) {
	counter := &WriteCounter{}
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
				counter.mu.Lock()
				counter.writes = append(counter.writes, req.Method+" "+req.URL.Path)
				counter.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return counted, counter
}

// Writes returns the writes counted so far, optionally only those whose
// path contains one of the given fragments.
func (c *WriteCounter) Writes(pathContains ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, w := range c.writes {
		if len(pathContains) == 0 {
			out = append(out, w)
			continue
		}
		for _, frag := range pathContains {
			if strings.Contains(w, frag) {
				out = append(out, w)
				break
			}
		}
	}
	return out
}

// Reset forgets what was counted.
func (c *WriteCounter) Reset() {
	c.mu.Lock()
	c.writes = nil
	c.mu.Unlock()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// CountReads returns a copy of cfg that records every GET but watches, as
// "GET path": reads past the cache, and lists.
func CountReads(cfg *rest.Config) (*rest.Config, *WriteCounter) {
	counter := &WriteCounter{}
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && !req.URL.Query().Has("watch") {
				counter.mu.Lock()
				counter.writes = append(counter.writes, req.Method+" "+req.URL.Path)
				counter.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return counted, counter
}

// CountForbidden returns a copy of cfg that records every request the API
// server answered with 403 Forbidden, as "METHOD path".
func CountForbidden(cfg *rest.Config) (*rest.Config, *WriteCounter) {
	counter := &WriteCounter{}
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusForbidden {
				counter.mu.Lock()
				counter.writes = append(counter.writes, req.Method+" "+req.URL.Path)
				counter.mu.Unlock()
			}
			return resp, err
		})
	})
	return counted, counter
}
