package manager

import (
	"os"

	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// OptionsFromEnv is the one place where the manager's environment becomes a
// controller's options: the operand image comes from the variable the
// descriptor names (MEMCACHED_IMAGE, ...), which the deploy components set
// on the manager's container, or else the descriptor's default. A new
// custom resource's first status waits reconciler.DefaultStartupGrace for
// its child to settle.
func OptionsFromEnv(d reconciler.Descriptor) reconciler.Options {
	opts := reconciler.Options{Image: d.DefaultImage, StartupGrace: reconciler.DefaultStartupGrace}
	if d.ImageEnv != "" {
		if img := os.Getenv(d.ImageEnv); img != "" {
			opts.Image = img
		}
	}
	return opts
}
