// Package samples loads the YAML files in samples/ so that tests use exactly
// what users apply.
package samples

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// Load decodes samples/<file> into obj.
func Load(t testing.TB, file string, obj any) {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		t.Fatalf("samples/%s: %v", file, err)
	}
}
