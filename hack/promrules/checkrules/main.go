// Command checkrules runs `promtool check rules` on the alerting rules of
// config/components/prometheus-rules, as `make check-rules` (part of make
// verify) runs it: promtool reads rule files, so the PrometheusRule's
// groups are written to one first.
package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/multi-operator/multi-operator/hack/promrules"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "checkrules:", err)
		os.Exit(1)
	}
}

func run() error {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		return fmt.Errorf("no promtool on PATH: make deps installs it (Debian package prometheus)")
	}
	root, err := reporoot.Find()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "checkrules")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir) //nolint:errcheck // a temporary folder
	path, err := promrules.WriteRuleFile(root, dir)
	if err != nil {
		return err
	}
	out, err := promrules.Promtool(promtool, "check", "rules", path)
	if err != nil {
		return err // with promtool's output
	}
	_, err = os.Stdout.Write(out)
	return err
}
