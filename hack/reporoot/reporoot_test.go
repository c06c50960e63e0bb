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
