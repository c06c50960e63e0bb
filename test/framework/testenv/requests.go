package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RequestCounter records requests that a client sends to the API server, as
// "METHOD path": its writes when made by CountWrites, its reads by
// CountReads, its forbidden requests by CountForbidden.
type RequestCounter struct {
	mu       sync.Mutex
	requests []request
}

// request is one counted request.
type request struct {
	// line is "METHOD path".
	line string
	// observed, for the PATCH of an event series, is the series' last
	// observation: when the event was last recorded, which may be long
	// before the PATCH is sent.
	observed time.Time
}

// add records req.
func (c *RequestCounter) add(req *http.Request) {
	r := request{line: req.Method + " " + req.URL.Path, observed: seriesObserved(req)}
	c.mu.Lock()
	c.requests = append(c.requests, r)
	c.mu.Unlock()
}

// seriesObserved is the last observation time that the PATCH of an event
// series carries, or zero for any other request. The event broadcaster
// sends that PATCH when an event is recorded again; when the event was
// recorded twice in a very short time, the PATCH meets the event not yet
// created and is retried after a pause of several seconds, so that it can
// reach the API server long after the recording.
func seriesObserved(req *http.Request) time.Time {
	if req.Method != http.MethodPatch || !strings.Contains(req.URL.Path, "/apis/events.k8s.io/") || req.Body == nil {
		return time.Time{}
	}
	body, err := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return time.Time{}
	}
	var patch struct {
		Series *struct {
			LastObservedTime metav1.MicroTime `json:"lastObservedTime"`
		} `json:"series"`
	}
	if json.Unmarshal(body, &patch) != nil || patch.Series == nil {
		return time.Time{}
	}
	return patch.Series.LastObservedTime.Time
}

// Requests returns the requests counted so far, optionally only those whose
// path contains one of the given fragments.
func (c *RequestCounter) Requests(pathContains ...string) []string {
	return c.requestsSince(time.Time{}, pathContains...)
}

// requestsSince is Requests without the event series PATCHes whose event
// was last recorded before since: the late delivery of a recording made
// earlier, not a write made since.
func (c *RequestCounter) requestsSince(since time.Time, pathContains ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.requests {
		if !r.observed.IsZero() && r.observed.Before(since) {
			continue
		}
		if len(pathContains) == 0 {
			out = append(out, r.line)
			continue
		}
		for _, frag := range pathContains {
			if strings.Contains(r.line, frag) {
				out = append(out, r.line)
				break
			}
		}
	}
	return out
}

// Reset forgets what was counted.
func (c *RequestCounter) Reset() {
	c.mu.Lock()
	c.requests = nil
	c.mu.Unlock()
}

// CountWrites returns a copy of cfg that records every write (POST, PUT,
// PATCH, DELETE) before sending it, so that a write is counted even when
// its answer never comes.
func CountWrites(cfg *rest.Config) (*rest.Config, *RequestCounter) {
	return count(cfg, func(c *RequestCounter, next http.RoundTripper, req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			c.add(req)
		}
		return next.RoundTrip(req)
	})
}

// CountReads returns a copy of cfg that records every GET but watches:
// reads past the cache, and lists.
func CountReads(cfg *rest.Config) (*rest.Config, *RequestCounter) {
	return count(cfg, func(c *RequestCounter, next http.RoundTripper, req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && !req.URL.Query().Has("watch") {
			c.add(req)
		}
		return next.RoundTrip(req)
	})
}

// CountForbidden returns a copy of cfg that records every request the API
// server answered with 403 Forbidden.
func CountForbidden(cfg *rest.Config) (*rest.Config, *RequestCounter) {
	return count(cfg, func(c *RequestCounter, next http.RoundTripper, req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			c.add(req)
		}
		return resp, err
	})
}

// BeforeEachCreate returns a copy of e's admin config that calls before
// with the object of each create it sends, before sending the create on: a
// test makes another writer's object appear just ahead of a create, as a
// writer racing the controller would.
func (e *Env) BeforeEachCreate(before func(obj client.Object)) *rest.Config {
	decoder := serializer.NewCodecFactory(e.Scheme).UniversalDeserializer()
	wrapped := rest.CopyConfig(e.Config)
	wrapped.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodPost || req.Body == nil {
				return next.RoundTrip(req)
			}
			body, err := io.ReadAll(req.Body)
			_ = req.Body.Close()
			if err != nil {
				return nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			// Kinds the scheme does not know are not shown.
			if decoded, _, err := decoder.Decode(body, nil, nil); err == nil {
				if obj, ok := decoded.(client.Object); ok {
					before(obj)
				}
			}
			return next.RoundTrip(req)
		})
	})
	return wrapped
}

// count returns a copy of cfg whose requests go through roundTrip with a
// new counter, which roundTrip decides when to add to.
func count(cfg *rest.Config, roundTrip func(c *RequestCounter, next http.RoundTripper, req *http.Request) (*http.Response, error)) (*rest.Config, *RequestCounter) {
	counter := &RequestCounter{}
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) { return roundTrip(counter, next, req) })
	})
	return counted, counter
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
