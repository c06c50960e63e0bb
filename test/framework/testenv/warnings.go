package testenv

import (
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WarningRecorder records the warnings the API server sends a client.
type WarningRecorder struct {
	mu   sync.Mutex
	list []string
}

// HandleWarningHeader records one warning.
func (w *WarningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// Take returns the warnings so far and forgets them.
func (w *WarningRecorder) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// ClientWithWarnings is an admin client whose warnings the returned
// recorder keeps.
func (e *Env) ClientWithWarnings(t testing.TB) (client.Client, *WarningRecorder) {
	t.Helper()
	rec := &WarningRecorder{}
	cfg := rest.CopyConfig(e.Config)
	cfg.WarningHandler = rec
	c, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}
