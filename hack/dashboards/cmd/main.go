// Command dashboards writes the Grafana dashboards and their kustomize
// component, config/components/grafana-dashboards, from hack/dashboards;
// make generate runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/multi-operator/multi-operator/hack/dashboards"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dashboards:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := reporoot.Find()
	if err != nil {
		return err
	}
	files, err := dashboards.Files(dashboards.All())
	if err != nil {
		return err
	}
	// Files of dashboards since removed go too.
	if err := os.RemoveAll(filepath.Join(root, dashboards.Dir)); err != nil {
		return err
	}
	for path, data := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil { //nolint:gosec // dashboards are public
			return err
		}
	}
	return nil
}
