// Package reporoottest is reporoot for tests: the path of a tool or
// command a test needs, or a failure or skip when it is missing. It keeps
// the testing package out of the generators that use reporoot.
package reporoottest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// RequireTool is Tool for a test: the path of the tool, or, when there is
// none, the test fails where the tools must be there (CI=true or
// REQUIRE_TEST_DEPS=1) and is skipped elsewhere, saying that `make tools`
// builds it.
func RequireTool(t testing.TB, root, envVar, name string) string {
	t.Helper()
	if p := reporoot.Tool(root, envVar, name); p != "" {
		return p
	}
	missing(t, fmt.Sprintf("no %s under bin/: make tools builds it", name))
	return ""
}

// RequireToolBinary is RequireTool for a binary named otherwise than its
// folder: bin/<folder>-*/<name>.
func RequireToolBinary(t testing.TB, root, envVar, folder, name string) string {
	t.Helper()
	if p := reporoot.ToolBinary(root, envVar, folder, name); p != "" {
		return p
	}
	missing(t, fmt.Sprintf("no %s-*/%s under bin/: make tools builds it", folder, name))
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
