package manager

import (
	"github.com/multi-operator/multi-operator/pkg/reconciler"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// WithWebhooks returns the enabled controllers that serve webhooks.
func WithWebhooks(enabled []reconciler.Descriptor) []reconciler.Descriptor {
	var out []reconciler.Descriptor
	for _, d := range enabled {
		if d.Webhooks != nil {
			out = append(out, d)
		}
	}
	return out
}

// ConversionCRDs names the CRDs of the enabled controllers whose kinds the
// manager's /convert webhook converts.
func ConversionCRDs(scheme *runtime.Scheme, enabled []reconciler.Descriptor) ([]string, error) {
	var names []string
	for _, d := range enabled {
		if !d.Conversion {
			continue
		}
		name, err := CRDName(d.For, scheme)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// MaxWebhookRequestBytes caps the body of every request to the webhook
// server. controller-runtime's /convert decodes a body of any size, and
// anyone who reaches the port may send one. The API server keeps an object
// below 3 MiB, and a ConversionReview carries several (a list read in the
// other version), so the cap leaves room for a few of the largest and
// stays above controller-runtime's own admission cap, whose answer an
// admission request keeps.
const MaxWebhookRequestBytes = 8 << 20

// NewWebhookServer is controller-runtime's webhook server, but every
// handler registered with it reads at most MaxWebhookRequestBytes, and it
// can bind its port with SO_REUSEPORT. Two managers on one host (a local
// `make run` and its standby) then serve the same local webhook URL, and
// conversion goes on when one of them stops.
func NewWebhookServer(opts webhook.Options, reusePort bool) webhook.Server {
	def := limitedServer{Server: webhook.NewServer(opts), maxBytes: MaxWebhookRequestBytes}
	if !reusePort {
		return def
	}
	return &reusePortServer{Server: def, opts: opts}
}

// limitedServer caps the request bodies of the handlers registered with
// it.
type limitedServer struct {
	webhook.Server
	maxBytes int64
}

// Register registers hook at path, behind the cap.
func (s limitedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, limitBody(hook, s.maxBytes))
}

// limitBody answers 413 to a request whose declared length is above
// maxBytes, without reading it, and ends the body of any other at
// maxBytes, so that a chunked one fails in next's decoding instead of
// growing without bound.
func limitBody(next http.Handler, maxBytes int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBytes {
			http.Error(w, fmt.Sprintf("request body larger than %d bytes", maxBytes), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
		next.ServeHTTP(w, r)
	})
}

// reusePortServer serves the handlers registered with the embedded default
// server on a listener bound with SO_REUSEPORT.
type reusePortServer struct {
	webhook.Server
	opts    webhook.Options
	started atomic.Bool
}

// Start serves until ctx ends.
func (s *reusePortServer) Start(ctx context.Context) error {
	cfg := &tls.Config{NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}
	for _, op := range s.opts.TLSOpts {
		op(cfg)
	}
	if cfg.GetCertificate == nil {
		return errors.New("the webhook server needs TLSOpts that set GetCertificate")
	}
	port := s.opts.Port
	if port == 0 {
		port = webhook.DefaultPort
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(s.opts.Host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listening for webhooks: %w", err)
	}
	srv := &http.Server{Handler: s.WebhookMux(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		close(done)
	}()
	ctrl.Log.WithName("webhook").Info("Serving webhooks with SO_REUSEPORT", "address", ln.Addr().String())
	s.started.Store(true)
	if err := srv.Serve(tls.NewListener(ln, cfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}

// StartedChecker is healthy once the server listens.
func (s *reusePortServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		if !s.started.Load() {
			return errors.New("the webhook server has not started yet")
		}
		return nil
	}
}
