//go:build tools

// Package tools pins the kube-apiserver of the oldest Kubernetes release
// the project supports, which `make test-oldest` runs the envtest suites
// against (the newest is hack/tools' own). It is a module of its own so
// that an older Kubernetes' dependencies stay out of the other tools'.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
