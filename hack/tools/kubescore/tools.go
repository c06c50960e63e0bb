//go:build tools

// Package tools pins kube-score, the manifest linter that make
// lint-manifests runs over everything the project ships. It is a module of
// its own, like helm's, so that kube-score's dependencies stay out of the
// project's go.mod.
package tools

import (
	_ "github.com/zegl/kube-score/cmd/kube-score"
)
