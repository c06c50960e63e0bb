//go:build tools

// Package tools pins redis_exporter, the Prometheus exporter the RedisCluster
// operator runs as a sidecar beside every redis-server. It is a module of its
// own, like helm's, so that the exporter's dependencies stay out of the
// project's go.mod; the tests run the built binary and the operand image
// packs it.
package tools

import (
	_ "github.com/oliver006/redis_exporter"
)
