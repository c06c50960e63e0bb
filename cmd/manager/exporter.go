package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/multi-operator/multi-operator/pkg/memcachedexporter"
)

// memcachedExporterCommand is the subcommand that runs the Memcached
// exporter sidecar from the manager's own image, so that the sidecar needs
// no image of its own.
const memcachedExporterCommand = "memcached-exporter"

// runMemcachedExporter serves the exporter until ctx ends: `manager
// memcached-exporter --listen :9150 --address 127.0.0.1:11211`.
func runMemcachedExporter(ctx context.Context, args []string, stderr io.Writer) int {
	fs := pflag.NewFlagSet(memcachedExporterCommand, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", memcachedexporter.DefaultListen, "Address serving /metrics.")
	address := fs.String("address", memcachedexporter.DefaultAddress, "The memcached server to scrape, host:port.")
	timeout := fs.Duration("timeout", memcachedexporter.DefaultTimeout, "How long one scrape of memcached may take.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *timeout <= 0 || *timeout > time.Minute {
		_, _ = fmt.Fprintln(stderr, "--timeout must be above 0 and at most 1m")
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("cannot listen", "address", *listen, "error", err)
		return 1
	}
	logger.Info("serving memcached metrics", "listen", ln.Addr().String(), "memcached", *address)
	if err := memcachedexporter.Serve(ctx, ln, *address, *timeout, logger); err != nil {
		logger.Error("serving metrics", "error", err)
		return 1
	}
	return 0
}
