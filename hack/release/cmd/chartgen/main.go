// Command chartgen writes the Helm chart (dist/chart) from config/, as
// `make helm` runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func main() {
	var opts helmchart.Options
	out := flag.String("out", "dist/chart", "the chart's directory (replaced)")
	flag.StringVar(&opts.Version, "version", "", "the chart's version and appVersion (x.y.z)")
	flag.StringVar(&opts.ImageRepository, "image-repository", "", "the manager image's repository; its tag is v<version>")
	flag.StringVar(&opts.ImageDigest, "image-digest", "", "the manager image's digest (sha256:...), which pins it; empty: the tag alone")
	flag.Parse()
	if err := run(*out, opts); err != nil {
		fmt.Fprintln(os.Stderr, "chartgen:", err)
		os.Exit(1)
	}
}

func run(out string, opts helmchart.Options) error {
	if opts.Version == "" || opts.ImageRepository == "" {
		return fmt.Errorf("-version and -image-repository are required")
	}
	root, err := reporoot.Find()
	if err != nil {
		return err
	}
	chart, err := helmchart.Generate(root, opts)
	if err != nil {
		return err
	}
	return chart.Write(out)
}
