package overlay

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/multi-operator/multi-operator/controllers/memcached"
)

// SelfImageEnvs are the manager's environment variables that name its own
// image: the Memcached exporter sidecar is `manager memcached-exporter`.
// Every install path sets them to exactly the manager container's image
// (config/manager/kustomizeconfig.yaml, the chart's default, the bundle).
var SelfImageEnvs = []string{memcached.ExporterImageEnv}

// SelfImageMismatches checks the SelfImageEnvs of every container of pod:
// checked counts the variables found, and mismatches says which name an
// image other than their container's, or the tag latest.
func SelfImageMismatches(pod *corev1.PodTemplateSpec) (checked int, mismatches []string) {
	for _, c := range pod.Spec.Containers {
		for _, e := range c.Env {
			if !isSelfImageEnv(e.Name) {
				continue
			}
			checked++
			switch {
			case e.ValueFrom != nil || e.Value != c.Image:
				mismatches = append(mismatches, fmt.Sprintf("container %s: %s is %q, not the container's image %q", c.Name, e.Name, e.Value, c.Image))
			case strings.HasSuffix(strings.SplitN(e.Value, "@", 2)[0], ":latest"):
				mismatches = append(mismatches, fmt.Sprintf("container %s: %s names the tag latest (%q)", c.Name, e.Name, e.Value))
			}
		}
	}
	return checked, mismatches
}

func isSelfImageEnv(name string) bool {
	for _, s := range SelfImageEnvs {
		if s == name {
			return true
		}
	}
	return false
}
