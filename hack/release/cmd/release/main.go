// Command release writes a release into one folder (hack/release/publish),
// as `make release` runs it:
//
//	release -version 0.2.0 -out bin/release-v0.2.0 \
//	  -manager-repository ghcr.io/multi-operator/multi-operator -manager-layout bin/images/multi-operator-<commit>-index \
//	  -operand ghcr.io/multi-operator/whalesay:v0.2.0=bin/images/whalesay-<version>.tar \
//	  -bundle-image ghcr.io/multi-operator/multi-operator-bundle:v0.2.0 \
//	  -namespaced-bundle-image ghcr.io/multi-operator/multi-operator-namespaced-bundle:v0.2.0 -catalog dist/catalog
//
// Run it from the repository root: relative paths are relative to it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/multi-operator/multi-operator/hack/images"
	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/publish"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// operands collects the repeated -operand NAME=TARBALL flags.
type operands []publish.Operand

func (o *operands) String() string { return fmt.Sprint(*o) }

func (o *operands) Set(s string) error {
	name, tarball, ok := strings.Cut(s, "=")
	if !ok || name == "" || tarball == "" {
		return errors.New("want NAME=TARBALL, such as ghcr.io/multi-operator/whalesay:v0.2.0=bin/images/whalesay-3.03.tar")
	}
	*o = append(*o, publish.Operand{Name: name, Tarball: tarball})
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	root, err := reporoot.Find()
	if err != nil {
		return err
	}
	o := publish.Options{Root: root, Helm: helmchart.Binary(root)}
	var ops operands
	epoch := ""
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.StringVar(&o.Version, "version", "", "the release's version (x.y.z)")
	fs.StringVar(&o.Out, "out", "", "the release folder (replaced), such as bin/release-v<version>")
	fs.StringVar(&o.ManagerRepository, "manager-repository", "", "the manager image's repository")
	fs.StringVar(&o.ManagerLayout, "manager-layout", "", "the manager's index, an OCI image layout (make image)")
	fs.Var(&ops, "operand", "an operand image of ours, NAME=TARBALL (make images' docker-archive); repeatable")
	fs.StringVar(&o.BundleImage, "bundle-image", "", "the OLM bundle image's name:tag")
	fs.StringVar(&o.NamespacedBundleImage, "namespaced-bundle-image", "", "the name:tag of the OLM bundle image of the namespaced package")
	fs.StringVar(&o.Catalog, "catalog", "dist/catalog", "the file-based catalog the bundle is added to (in a copy)")
	fs.StringVar(&epoch, "epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the bundle image's time, seconds since 1970 (default $SOURCE_DATE_EPOCH, else 0)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if slices.Contains([]string{o.Version, o.Out, o.ManagerRepository, o.ManagerLayout, o.BundleImage, o.NamespacedBundleImage}, "") {
		return errors.New("-version, -out, -manager-repository, -manager-layout, -bundle-image and -namespaced-bundle-image are required")
	}
	if o.Helm == "" {
		return errors.New("no helm under bin/helm-*/ (make tools builds it), nor HELM")
	}
	if o.Created, err = images.ParseEpoch(epoch); err != nil {
		return err
	}
	o.Operands = ops
	if _, err := publish.Write(o); err != nil {
		return err
	}
	list, err := os.ReadFile(filepath.Join(o.Out, publish.ImagesFile))
	if err != nil {
		return err
	}
	fmt.Print(string(list))
	fmt.Printf("%s: install-*.yaml, %s, %s, %s, %s\n", o.Out, publish.ChartFile(o.Version), publish.BundleDir, publish.CatalogDir, publish.SumsFile)
	return nil
}
