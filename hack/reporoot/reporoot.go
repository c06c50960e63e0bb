// Package reporoot finds the repository's top folder, for the generators
// under hack/ and for tests, which run from their own package's folder.
package reporoot

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	return ToolBinary(root, envVar, name, name)
}

// ToolBinary is Tool for a tool whose binary is named otherwise than its
// folder: bin/<folder>-*/<name>, such as SeaweedFS's weed.
func ToolBinary(root, envVar, folder, name string) string {
	if p := os.Getenv(envVar); p != "" && isFile(p) {
		return p
	}
	found, _ := filepath.Glob(filepath.Join(root, "bin", folder+"-*", name))
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	return found[len(found)-1]
}
