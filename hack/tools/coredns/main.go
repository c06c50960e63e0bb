// Command coredns is the local cluster's DNS server (hack/realnode): CoreDNS
// with only the plugins that serving cluster.local needs. The forward plugin
// is not built in, so this server can never send a query off the machine:
// names outside the cluster get SERVFAIL.
//
// It is a module of its own because CoreDNS's dependencies (etcd, gRPC) are
// newer than those of the control plane in hack/tools/go.mod. The version is
// the one go.mod pins; `make realnode-bins` builds it into bin/coredns-<version>/.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The plugins, in no particular order: the order they run in is
	// CoreDNS's own (core/dnsserver/zdirectives.go).
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() {
	coremain.Run()
}
