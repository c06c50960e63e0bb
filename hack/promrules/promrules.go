// Package promrules reads the alerting rules of the prometheus-rules
// component as a Prometheus rule file, the form promtool checks and
// unit-tests: a PrometheusRule is the Prometheus Operator's wrapping of one.
package promrules

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// Component is the kustomize component that holds the PrometheusRule,
// relative to the repository root.
const Component = "config/components/prometheus-rules"

// RunbookBase is where each alert's runbook_url points: the runbook of
// alert A is RunbookBase + A + ".md", docs/runbooks/A.md in the repository.
const RunbookBase = "https://github.com/multi-operator/multi-operator/blob/main/docs/runbooks/"

// Rule is one alerting rule of a group; the fields the checks read.
type Rule struct {
	// Alert is the alert's name; empty for a recording rule.
	Alert string `json:"alert,omitempty"`
	// Expr is the rule's PromQL expression.
	Expr string `json:"expr"`
	// Labels are the labels the alert adds, such as severity.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are the alert's annotations, such as runbook_url.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Group is one rule group.
type Group struct {
	// Name is the group's name.
	Name string `json:"name"`
	// Rules are the group's rules.
	Rules []Rule `json:"rules"`
}

// RuleFile builds the component onto config/manager, as an overlay does,
// and returns the groups of its PrometheusRule as the YAML of a rule file
// (groups: ...), so that what is checked is what kustomize ships.
func RuleFile(root string) ([]byte, error) {
	objs, err := overlay.Kustomization{
		Resources:  []string{"config/manager"},
		Components: []string{Component},
	}.Build(root)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if obj.GetKind() != "PrometheusRule" {
			continue
		}
		groups, ok := obj.Object["spec"].(map[string]any)["groups"]
		if !ok {
			return nil, fmt.Errorf("PrometheusRule %s has no spec.groups", obj.GetName())
		}
		return yaml.Marshal(map[string]any{"groups": groups})
	}
	return nil, fmt.Errorf("%s renders no PrometheusRule", Component)
}

// Groups parses a rule file.
func Groups(ruleFile []byte) ([]Group, error) {
	var f struct {
		Groups []Group `json:"groups"`
	}
	if err := yaml.Unmarshal(ruleFile, &f); err != nil {
		return nil, err
	}
	return f.Groups, nil
}

// Alerts are the names of the alerts of groups, each once (an alert may
// have several rules, one per severity), in their order.
func Alerts(groups []Group) []string {
	var names []string
	seen := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert != "" && !seen[r.Alert] {
				seen[r.Alert] = true
				names = append(names, r.Alert)
			}
		}
	}
	return names
}

// WriteRuleFile writes the component's rule file into dir as rules.yaml,
// the name the unit tests' rule_files give, and returns its path.
func WriteRuleFile(root, dir string) (string, error) {
	rules, err := RuleFile(root)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "rules.yaml")
	return path, os.WriteFile(path, rules, 0o644)
}

// Promtool runs promtool with args and returns its combined output, with
// the error naming the command when it fails.
func Promtool(promtool string, args ...string) ([]byte, error) {
	out, err := exec.Command(promtool, args...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("promtool %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return out, nil
}
