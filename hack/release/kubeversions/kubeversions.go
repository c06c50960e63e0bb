// Package kubeversions reads the Kubernetes releases the project supports
// from the modules that pin the control planes the tests run against:
// hack/tools/oldest/go.mod (the oldest, make test-oldest) and
// hack/tools/go.mod (the newest, make test and the e2e suite). The chart's
// kubeVersion, the CSV's minKubeVersion and the README follow them.
package kubeversions

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Range is the supported releases, as "1.35" and "1.37".
type Range struct {
	// Oldest is the oldest supported minor release.
	Oldest string
	// Newest is the newest supported minor release.
	Newest string
}

// kubernetesRequire finds k8s.io/kubernetes's version in a go.mod, on a
// require line of its own or in a require block.
var kubernetesRequire = regexp.MustCompile(`(?m)^\s*(?:require\s+)?k8s\.io/kubernetes v(1\.\d+)\.\d+\s*$`)

// Read returns the supported range of the repository at root.
func Read(root string) (Range, error) {
	oldest, err := minor(filepath.Join(root, "hack", "tools", "oldest", "go.mod"))
	if err != nil {
		return Range{}, err
	}
	newest, err := minor(filepath.Join(root, "hack", "tools", "go.mod"))
	if err != nil {
		return Range{}, err
	}
	return Range{Oldest: oldest, Newest: newest}, nil
}

// minor is the minor release of k8s.io/kubernetes that the go.mod at path
// requires.
func minor(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	m := kubernetesRequire.FindSubmatch(raw)
	if m == nil {
		return "", fmt.Errorf("%s requires no k8s.io/kubernetes", path)
	}
	return string(m[1]), nil
}

// HelmConstraint is the chart's kubeVersion: the oldest release and later
// (-0 admits the pre-release suffixes of managed clusters' versions).
func (r Range) HelmConstraint() string { return fmt.Sprintf(">= %s.0-0", r.Oldest) }

// MinKubeVersion is the CSV's minKubeVersion.
func (r Range) MinKubeVersion() string { return r.Oldest + ".0" }

// Older reports whether minor release a ("1.35") comes before b ("1.36").
// A malformed release counts as 0.
func Older(a, b string) bool { return Minor(a) < Minor(b) }

// Minor is the minor number of a release such as "1.35"; 0 when malformed.
func Minor(release string) int {
	_, m, _ := strings.Cut(release, ".")
	n, _ := strconv.Atoi(m)
	return n
}
