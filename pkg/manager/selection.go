package manager

import (
	"github.com/multi-operator/multi-operator/pkg/reconciler"

	"fmt"
	"strings"
)

// Select splits descriptors into enabled and disabled ones by the values of
// --controllers, with kube-controller-manager's semantics: "name" enables a
// controller, "-name" disables it, "*" enables every controller, and the
// first explicit mention of a name wins over "*". An unknown name is an
// error that lists the valid ones.
func Select(all []reconciler.Descriptor, flags []string) (enabled, disabled []reconciler.Descriptor, err error) {
	known := make(map[string]bool, len(all))
	for _, d := range all {
		known[d.Name] = true
	}
	for _, f := range flags {
		name := strings.TrimPrefix(strings.TrimSpace(f), "-")
		if name != "*" && !known[name] {
			return nil, nil, fmt.Errorf("unknown controller %q in --controllers; valid controllers: %s (or * for all, -name to disable)", f, strings.Join(Names(all), ", "))
		}
	}
	for _, d := range all {
		if isEnabled(d.Name, flags) {
			enabled = append(enabled, d)
		} else {
			disabled = append(disabled, d)
		}
	}
	return enabled, disabled, nil
}

func isEnabled(name string, flags []string) bool {
	star := false
	for _, f := range flags {
		switch strings.TrimSpace(f) {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	return star
}

// Names returns the descriptors' names, in order.
func Names(ds []reconciler.Descriptor) []string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name
	}
	return names
}
