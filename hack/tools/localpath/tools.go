//go:build tools

// Package tools pins rancher's local-path-provisioner, the real node's
// PersistentVolume provisioner (hack/realnode), which `make realnode-bins`
// builds into bin/ from the Go module proxy. It is a module of its own
// because its Kubernetes libraries are older than the control plane's.
package tools

import (
	_ "github.com/rancher/local-path-provisioner"
)
