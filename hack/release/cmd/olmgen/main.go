// Command olmgen writes the project's OLM package (hack/release/olm): `make bundle`
// runs `olmgen bundle`, `make catalog` runs `olmgen catalog`.
//
//	olmgen bundle -version 0.2.0 -image ghcr.io/multi-operator/multi-operator:v0.2.0 -out dist/bundle
//	olmgen bundle -namespaced -version 0.2.0 -image ghcr.io/multi-operator/multi-operator:v0.2.0 -out dist/bundle-namespaced
//	olmgen catalog -bundle dist/bundle -bundle-image ghcr.io/multi-operator/multi-operator-bundle:v0.2.0 -out dist/catalog
//
// Run it from the repository root: relative paths are relative to it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/multi-operator/multi-operator/hack/release/olm"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run runs a subcommand and returns the exit code.
func run(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		_, _ = fmt.Fprintln(stderr, "usage: olmgen bundle|catalog [flags]")
		return 2
	}
	var err error
	switch args[0] {
	case "bundle":
		err = bundle(args[1:], stderr)
	case "catalog":
		err = catalog(args[1:])
	default:
		err = fmt.Errorf("unknown subcommand %q: bundle or catalog", args[0])
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "olmgen:", err)
		return 1
	}
	return 0
}

// bundle writes the bundle of a version.
func bundle(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("bundle", flag.ContinueOnError)
	root, err := reporoot.Find()
	if err != nil {
		return err
	}
	// -namespaced picks the other package's sources; it must come first,
	// so that the flags after it override them.
	src := olm.DefaultSources(root)
	if len(args) > 0 && (args[0] == "-namespaced" || args[0] == "--namespaced") {
		src, args = olm.NamespacedSources(root), args[1:]
	}
	version := fs.String("version", "", "Release version, listed in config/manifests/releases.yaml.")
	image := fs.String("image", "", "The manager image the CSV's Deployment runs.")
	out := fs.String("out", "dist/bundle", "Bundle directory; its Dockerfile goes beside it.")
	replaces := fs.String("replaces", olm.AutoReplaces, "CSV this one replaces: "+olm.AutoReplaces+" takes the release before -version in releases.yaml, empty none.")
	fs.StringVar(&src.Overlay, "config", src.Overlay, "Kustomization to package.")
	fs.StringVar(&src.Manifests, "manifests", src.Manifests, "Directory of the base CSV, releases.yaml and icon.svg.")
	fs.StringVar(&src.Samples, "samples", src.Samples, "Directory of the samples for alm-examples.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || *image == "" {
		return fmt.Errorf("bundle needs -version and -image")
	}
	b, files, err := src.Build(*version, *image, *replaces)
	if err != nil {
		return err
	}
	for _, p := range b.Placements {
		if p.Fate == olm.Omitted {
			_, _ = fmt.Fprintf(stderr, "olmgen: left out %s: %s\n", p.Key, p.Why)
		}
	}
	return olm.WriteBundle(*out, b.Package, files)
}

// catalog adds a bundle to the file-based catalog.
func catalog(args []string) error {
	fs := flag.NewFlagSet("catalog", flag.ContinueOnError)
	dir := fs.String("bundle", "dist/bundle", "Bundle directory to add.")
	image := fs.String("bundle-image", "", "The bundle's image.")
	out := fs.String("out", "dist/catalog", "Catalog directory; its Dockerfile goes beside it.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *image == "" {
		return fmt.Errorf("catalog needs -bundle-image")
	}
	return olm.AddToCatalog(*out, *dir, *image)
}
