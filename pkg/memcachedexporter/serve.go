package memcachedexporter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Defaults of the sidecar's command line.
const (
	// DefaultListen is prometheus/memcached_exporter's port, so that
	// scrape configurations written for it find this one.
	DefaultListen = ":9150"
	// DefaultAddress is memcached in the same pod.
	DefaultAddress = "127.0.0.1:11211"
	// DefaultTimeout bounds one scrape of memcached, well below
	// Prometheus's default scrape timeout.
	DefaultTimeout = 3 * time.Second
)

// Registry is a registry of the exporter's metrics alone: the sidecar
// reports memcached, not itself.
func Registry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return reg
}

// Handler serves /metrics from reg and a liveness answer on /healthz. At
// most two scrapes run at once (a pair of Prometheus replicas), so that a
// flood of requests cannot open a flood of connections to memcached.
func Handler(reg *prometheus.Registry, timeout time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		MaxRequestsInFlight: 2,
		Timeout:             timeout + time.Second,
		ErrorHandling:       promhttp.ContinueOnError,
	}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}

// Serve serves the exporter of memcached at address on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener, address string, timeout time.Duration, logger *slog.Logger) error {
	srv := &http.Server{
		Handler:           Handler(Registry(NewCollector(address, timeout, logger)), timeout),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      timeout + 10*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}
