//go:build tools

// Package tools pins golangci-lint, which `make lint` builds into bin/ from
// the Go module proxy. It is a module of its own so that the linter's many
// dependencies stay out of the project's and the control plane's go.mod.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
