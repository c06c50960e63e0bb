package kubescore

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Exception accepts the findings of one kube-score check, in the renders
// and objects it names.
type Exception struct {
	// Test is the check's ID, as kube-score list prints it.
	Test string `json:"test"`
	// Renders are patterns of the renders' names ("kustomize *"); none
	// means every render. A * matches any text.
	Renders []string `json:"renders,omitempty"`
	// Objects are patterns of the objects (Kind/namespace/name); none
	// means every object.
	Objects []string `json:"objects,omitempty"`
	// Reason is why the finding is accepted, on one line.
	Reason string `json:"reason"`
}

// LoadExceptions reads an exceptions file: a YAML list of Exception, each
// with its test and a one-line reason.
func LoadExceptions(file string) ([]Exception, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var list []Exception
	if err := yaml.UnmarshalStrict(raw, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for i, e := range list {
		if e.Test == "" || strings.TrimSpace(e.Reason) == "" || strings.Contains(strings.TrimSpace(e.Reason), "\n") {
			return nil, fmt.Errorf("%s: exception %d (%q) needs a test and a one-line reason", file, i+1, e.Test)
		}
	}
	return list, nil
}

// matches reports whether e accepts f.
func (e Exception) matches(f Finding) bool {
	return e.Test == f.Test && matchesAny(e.Renders, f.Render) && matchesAny(e.Objects, f.Object)
}

// String names the exception in a report.
func (e Exception) String() string {
	s := e.Test
	if len(e.Renders) > 0 {
		s += " in " + strings.Join(e.Renders, ", ")
	}
	if len(e.Objects) > 0 {
		s += " for " + strings.Join(e.Objects, ", ")
	}
	return s
}

// matchesAny reports whether one of patterns matches s; no pattern
// matches everything.
func matchesAny(patterns []string, s string) bool {
	if len(patterns) == 0 {
		return true
	}
	return slices.ContainsFunc(patterns, func(p string) bool {
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(p), `\*`, ".*") + "$"
		return regexp.MustCompile(re).MatchString(s)
	})
}

// Apply holds findings to exceptions: it returns the findings no exception
// accepts, and the exceptions that accept none, which are stale and should
// go so that the list stays as short as what is shipped needs.
func Apply(findings []Finding, exceptions []Exception) (open []Finding, unused []Exception) {
	used := make([]bool, len(exceptions))
	for _, f := range findings {
		accepted := false
		for i, e := range exceptions {
			if e.matches(f) {
				used[i], accepted = true, true
			}
		}
		if !accepted {
			open = append(open, f)
		}
	}
	for i, e := range exceptions {
		if !used[i] {
			unused = append(unused, e)
		}
	}
	return open, unused
}
