package olm

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// repoRoot is the repository root.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// makeVars are the release variables of hack/make/release.mk (VERSION,
// RELEASE_IMAGE_REPO, BUNDLE_IMG) with $(VERSION) expanded, so that the
// tests generate exactly what `make bundle catalog` does.
func makeVars(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "hack", "make", "release.mk"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(VERSION|RELEASE_IMAGE_REPO|BUNDLE_IMG|BUNDLE_NAMESPACED_IMG)\s*\?=\s*(\S+)\s*$`).FindAllStringSubmatch(string(raw), -1) {
		vars[m[1]] = m[2]
	}
	for k, v := range vars {
		vars[k] = strings.ReplaceAll(v, "$(VERSION)", vars["VERSION"])
	}
	for _, k := range []string{"VERSION", "RELEASE_IMAGE_REPO", "BUNDLE_IMG", "BUNDLE_NAMESPACED_IMG"} {
		if vars[k] == "" {
			t.Fatalf("hack/make/release.mk sets no %s ?=", k)
		}
	}
	return vars
}
