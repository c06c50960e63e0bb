//go:build tools

// Package tools pins the helm CLI, which the chart tests and the real-node
// e2e run from bin/ after `make` builds it from the Go module proxy. It is a
// module of its own so that helm's dependencies (and the Kubernetes libraries
// it pins) stay out of the project's go.mod.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
