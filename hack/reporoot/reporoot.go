// Package reporoot finds the repository's top folder, for the generators
// under hack/ and for tests, which run from their own package's folder.
package reporoot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

// Find returns the nearest folder at or above the working directory that
// holds both go.mod and the Makefile: the repository root, not one of the
// tool modules under hack/tools, which have a go.mod of their own.
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) && isFile(filepath.Join(dir, "Makefile")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no repository root (a folder with go.mod and Makefile) at or above the working directory")
		}
		dir = parent
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Tool is a pinned tool's binary: the file $envVar names when it exists
// (the Makefile exports it), else the newest bin/<name>-*/<name> under
// root, the versioned folders make builds tools into. It is empty when
// neither exists.
func Tool(root, envVar, name string) string {
	if p := os.Getenv(envVar); p != "" && isFile(p) {
		return p
	}
	found, _ := filepath.Glob(filepath.Join(root, "bin", name+"-*", name))
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	return found[len(found)-1]
}

// RequireTool is Tool for a test: the path of the tool, or, when there is
// none, the test fails where the tools must be there (CI=true or
// REQUIRE_TEST_DEPS=1) and is skipped elsewhere, saying that `make tools`
// builds it.
func RequireTool(t testing.TB, root, envVar, name string) string {
	t.Helper()
	if p := Tool(root, envVar, name); p != "" {
		return p
	}
	missing(t, fmt.Sprintf("no %s under bin/: make tools builds it", name))
	return ""
}

// RequireCommand is RequireTool for a command from PATH, such as one of the
// Debian packages make deps installs: its path, or, when there is none,
// the test fails or is skipped by the same rule, saying that installs names
// what provides it.
func RequireCommand(t testing.TB, name, installs string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	missing(t, fmt.Sprintf("no %s on PATH: %s installs it", name, installs))
	return ""
}

// missing fails the test where the test dependencies must be there
// (CI=true or REQUIRE_TEST_DEPS=1, which make test sets once make deps has
// installed everything) and skips it elsewhere.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" || os.Getenv("REQUIRE_TEST_DEPS") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}
