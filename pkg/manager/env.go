package manager

import (
	"os"
	"strings"

	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// OptionsFromEnv is the one place where the manager's environment becomes a
// controller's options: the operand image comes from the variable the
// descriptor names (MEMCACHED_IMAGE, ...), which the deploy components set
// on the manager's container, or else the descriptor's default, and so
// does the exporter sidecar's image (ExporterImageEnv), and who may scrape
// it (ExporterScrapersEnv). A new
// custom resource's first status waits reconciler.DefaultStartupGrace for
// its child to settle.
func OptionsFromEnv(d reconciler.Descriptor) reconciler.Options {
	opts := reconciler.Options{Image: d.DefaultImage, ExporterImage: d.DefaultExporterImage, StartupGrace: reconciler.DefaultStartupGrace}
	if d.ImageEnv != "" {
		if img := os.Getenv(d.ImageEnv); img != "" {
			opts.Image = img
		}
	}
	if d.ExporterImageEnv != "" {
		if img := os.Getenv(d.ExporterImageEnv); img != "" {
			opts.ExporterImage = img
		}
	}
	if d.ExporterScrapersEnv != "" {
		opts.ExporterScrapers = d.DefaultExporterScrapers
		if v := os.Getenv(d.ExporterScrapersEnv); v != "" {
			opts.ExporterScrapers = v
		}
	}
	return opts
}

// WatchNamespaceEnv names the variable that stands in for the manager's
// --watch-namespaces when the flag is not given: OLM's install modes pass
// the OperatorGroup's target namespaces through it (the Deployment sets it
// from the pod's olm.targetNamespaces annotation, empty for all
// namespaces).
const WatchNamespaceEnv = "WATCH_NAMESPACE"

// SplitNamespaces splits a comma-separated list of namespaces, as OLM
// writes olm.targetNamespaces, dropping blanks: an empty list means all
// namespaces.
func SplitNamespaces(list string) []string {
	var out []string
	for ns := range strings.SplitSeq(list, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}
