package testenv

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An event series PATCH whose event was last recorded before the window
// is a late delivery and not counted; one recorded within it, and every
// other write, are.
func TestRequestsSinceLeavesOutLateSeriesPatches(t *testing.T) {
	since := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	patch := func(name string, observed time.Time) *http.Request {
		body := `{"series":{"count":2,"lastObservedTime":"` + observed.Format("2006-01-02T15:04:05.000000Z07:00") + `"}}`
		req, err := http.NewRequest(http.MethodPatch, "https://api/apis/events.k8s.io/v1/namespaces/ns/events/"+name, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	c := &RequestCounter{}
	late := patch("late", since.Add(-10*time.Second))
	c.add(late)
	c.add(patch("recorded-again", since.Add(time.Second)))
	status, err := http.NewRequest(http.MethodPatch, "https://api/apis/cache.example.com/v1/namespaces/ns/redisclusters/rc/status", strings.NewReader(`{"status":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	c.add(status)

	got := c.requestsSince(since, "/namespaces/ns/")
	want := []string{"PATCH /apis/events.k8s.io/v1/namespaces/ns/events/recorded-again", "PATCH /apis/cache.example.com/v1/namespaces/ns/redisclusters/rc/status"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requestsSince: %q, want %q", got, want)
	}
	if n := len(c.Requests()); n != 3 {
		t.Fatalf("Requests counts every request: %d, want 3", n)
	}
	// The body still reaches the API server.
	body, err := io.ReadAll(late.Body)
	if err != nil || !strings.Contains(string(body), `"count":2`) {
		t.Fatalf("the PATCH's body after counting: %q, %v", body, err)
	}
}
