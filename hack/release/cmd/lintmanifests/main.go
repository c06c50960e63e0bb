// Command lintmanifests runs kube-score over everything the project ships
// (the kustomize overlays, the Helm chart and the OLM bundle) and fails on a
// finding that hack/kube-score-exceptions.yaml does not accept, as `make
// lint-manifests` runs it.
package main

import (
	"fmt"
	"os"

	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/kubescore"
	"github.com/multi-operator/multi-operator/hack/release/kubeversions"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func main() {
	failed, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lintmanifests:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func run() (failed bool, err error) {
	root, err := reporoot.Find()
	if err != nil {
		return false, err
	}
	bin, helm := kubescore.Binary(root), helmchart.Binary(root)
	if bin == "" || helm == "" {
		return false, fmt.Errorf("kube-score or helm missing under bin/: make tools builds them")
	}
	// The oldest supported release: kube-score's checks of deprecated
	// API versions then hold for every supported one.
	versions, err := kubeversions.Read(root)
	if err != nil {
		return false, err
	}
	report, err := kubescore.Lint(root, bin, helm, "v"+versions.Oldest)
	if err != nil {
		return false, err
	}
	fmt.Print(report)
	return report.Failed(), nil
}
