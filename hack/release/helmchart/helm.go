package helmchart

import (
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// Binary is the helm CLI: $HELM (the Makefile exports it), else the newest
// bin/helm-*/helm under root. It is empty when neither exists.
func Binary(root string) string { return reporoot.Tool(root, BinaryEnv, BinaryName) }

// BinaryEnv and BinaryName are where Binary looks: the environment variable,
// and the name under bin/<name>-<version>/.
const (
	BinaryEnv  = "HELM"
	BinaryName = "helm"
)

// SetArgs are helm's --set flags for values, in a stable order.
func SetArgs(values map[string]string) []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		args = append(args, "--set", k+"="+values[k])
	}
	return args
}

// Template runs `helm template` of the chart in dir as release
// ChartName in namespace, with more flags of helm's such as
// --kube-version, and decodes what it renders.
func Template(helm, dir, namespace string, values map[string]string, flags ...string) ([]*unstructured.Unstructured, error) {
	args := append(append([]string{"template", ChartName, dir, "--namespace", namespace}, SetArgs(values)...), flags...)
	cmd := exec.Command(helm, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return overlay.Decode(out)
}
