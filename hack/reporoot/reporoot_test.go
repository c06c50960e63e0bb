package reporoot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindSkipsToolModules(t *testing.T) {
	top := t.TempDir()
	tools := filepath.Join(top, "hack", "tools")
	for _, f := range []string{
		filepath.Join(top, "go.mod"),
		filepath.Join(top, "Makefile"),
		filepath.Join(tools, "go.mod"),
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(tools)
	got, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(top); got != want && got != top {
		t.Fatalf("Find() = %q, want %q", got, top)
	}
}

func TestFindFailsOutsideARepository(t *testing.T) {
	t.Chdir(t.TempDir())
	if got, err := Find(); err == nil {
		t.Fatalf("Find() = %q outside any repository, want an error", got)
	}
}

func TestToolTakesTheVariableThenTheNewestVersionedFolder(t *testing.T) {
	root := t.TempDir()
	write := func(p string) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("MO_TEST_TOOL", "")
	if got := Tool(root, "MO_TEST_TOOL", "tool"); got != "" {
		t.Errorf("no tool built: got %q", got)
	}
	write(filepath.Join(root, "bin", "tool-v1.2.0", "tool"))
	newest := write(filepath.Join(root, "bin", "tool-v1.3.0", "tool"))
	if got := Tool(root, "MO_TEST_TOOL", "tool"); got != newest {
		t.Errorf("got %q, want the newest folder's %q", got, newest)
	}
	t.Setenv("MO_TEST_TOOL", filepath.Join(root, "missing"))
	if got := Tool(root, "MO_TEST_TOOL", "tool"); got != newest {
		t.Errorf("a variable naming no file: got %q, want %q", got, newest)
	}
	named := write(filepath.Join(root, "elsewhere", "tool"))
	t.Setenv("MO_TEST_TOOL", named)
	if got := Tool(root, "MO_TEST_TOOL", "tool"); got != named {
		t.Errorf("got %q, want the variable's %q", got, named)
	}
}
