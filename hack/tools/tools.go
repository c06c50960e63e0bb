//go:build tools

// Package tools pins the versions of the binaries the project builds for its
// tests and its local cluster: the control plane (kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler), kwok's simulated nodes, the real
// node's kubelet and kube-proxy (hack/realnode), kubectl and controller-gen.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
