// Command localcluster manages what `make dev-cluster` adds to the cluster
// kwokctl starts: the simulated nodes, with loopback addresses, and the
// check that every address of the cluster stays on this machine.
//
//	localcluster -kubeconfig K nodes N   # exactly N simulated nodes
//	localcluster -kubeconfig K check     # every Node and Pod address routes to lo
//	localcluster unroute                 # remove the pod ranges' route to lo
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/multi-operator/multi-operator/hack/localcluster"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the local cluster")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: localcluster -kubeconfig FILE nodes N | check; localcluster unroute")
	}
	flag.Parse()
	if err := run(*kubeconfig, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, args []string) error {
	if len(args) == 0 {
		flag.Usage()
		return fmt.Errorf("no command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if args[0] == "unroute" {
		return localcluster.UnrouteFromLoopback(ctx, localcluster.RoutedPodRanges)
	}
	c, err := localcluster.NewClient(kubeconfig)
	if err != nil {
		return err
	}
	switch args[0] {
	case "nodes":
		if len(args) != 2 {
			return fmt.Errorf("nodes takes the number of nodes")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return fmt.Errorf("nodes %q: %w", args[1], err)
		}
		ranges, err := localcluster.ChoosePodRanges(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: simulated pods get addresses from %s, which Services' endpoints reject: %v\n", ranges, err)
		}
		return localcluster.ScaleSimulatedNodes(ctx, c, ranges, n)
	case "check":
		return localcluster.CheckAddresses(ctx, c)
	}
	flag.Usage()
	return fmt.Errorf("unknown command %q", args[0])
}
