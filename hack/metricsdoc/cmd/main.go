// Command metricsdoc writes docs/metrics.md, the metrics reference, from
// the metrics the project registers on controller-runtime's registry;
// make generate runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/multi-operator/multi-operator/hack/metricsdoc"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "metricsdoc:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := reporoot.Find()
	if err != nil {
		return err
	}
	list, err := metricsdoc.Gather()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, metricsdoc.Path), metricsdoc.Markdown(list), 0o644)
}
