// Package kubescore runs kube-score (github.com/zegl/kube-score), the
// manifest linter platform teams use, over everything the project ships:
// the kustomize overlays, the Helm chart and the OLM bundle (Shipped), and
// holds its findings to the accepted exceptions of one file
// (hack/kube-score-exceptions.yaml). make lint-manifests runs it.
package kubescore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// Binary is the kube-score CLI: $KUBE_SCORE (the Makefile exports it), else
// the newest bin/kube-score-*/kube-score under root. It is empty when
// neither exists.
func Binary(root string) string { return reporoot.Tool(root, BinaryEnv, BinaryName) }

// BinaryEnv and BinaryName are where Binary looks: the environment variable,
// and the name under bin/<name>-<version>/.
const (
	BinaryEnv  = "KUBE_SCORE"
	BinaryName = "kube-score"
)

// Render is one set of manifests that is installed together, such as one
// overlay's kustomize output: kube-score matches Services, PodDisruption
// Budgets and NetworkPolicies to pods within a render only.
type Render struct {
	// Name says what was rendered, such as "kustomize config/default";
	// exceptions select renders by it.
	Name    string
	Objects []*unstructured.Unstructured
}

// kube-score's grades (scorecard.Grade): a finding is a check that is
// neither skipped nor better than a warning, as kube-score's own
// --exit-one-on-warning counts them.
const (
	gradeCritical = 1
	gradeWarning  = 5
)

// Finding is one check that an object of a render fails.
type Finding struct {
	Render string
	// Object is Kind/name, with the namespace when it has one:
	// Deployment/multi-operator-system/multi-operator-controller-manager.
	Object string
	// Test is the check's ID, as kube-score list prints it and
	// --ignore-test takes it.
	Test     string
	Critical bool
	// Comments are kube-score's explanations, one per container or item.
	Comments []string
}

// String is the finding on one line and its comments indented below.
func (f Finding) String() string {
	grade := "WARNING"
	if f.Critical {
		grade = "CRITICAL"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s: %s: %s", grade, f.Render, f.Object, f.Test)
	for _, c := range f.Comments {
		b.WriteString("\n    " + c)
	}
	return b.String()
}

// scoredObject is what kube-score's JSON output (version v2) says of
// one object.
type scoredObject struct {
	TypeMeta struct {
		Kind string `json:"kind"`
	} `json:"type_meta"`
	ObjectMeta struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"object_meta"`
	Checks []struct {
		Check struct {
			ID string `json:"id"`
		} `json:"check"`
		Grade    int  `json:"grade"`
		Skipped  bool `json:"skipped"`
		Comments []struct {
			Path        string `json:"path"`
			Summary     string `json:"summary"`
			Description string `json:"description"`
		} `json:"comments"`
	} `json:"checks"`
}

// Score runs kube-score (the binary at bin) once per render, for the
// Kubernetes release kubeVersion ("v1.35"), and returns every finding in a
// stable order. kube-score's optional checks stay off.
func Score(bin, kubeVersion string, renders []Render) ([]Finding, error) {
	tmp, err := os.MkdirTemp("", "kube-score-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	var findings []Finding
	for i, r := range renders {
		if len(r.Objects) == 0 {
			return nil, fmt.Errorf("%s: rendered no object", r.Name)
		}
		file := filepath.Join(tmp, fmt.Sprintf("%02d.yaml", i))
		if err := writeStream(file, r.Objects); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		fs, err := scoreFile(bin, kubeVersion, r.Name, file)
		if err != nil {
			return nil, err
		}
		findings = append(findings, fs...)
	}
	return findings, nil
}

// writeStream writes objs as one multi-document YAML file.
func writeStream(file string, objs []*unstructured.Unstructured) error {
	var b bytes.Buffer
	for _, o := range objs {
		raw, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(raw)
	}
	return os.WriteFile(file, b.Bytes(), 0o600)
}

// scoreFile runs kube-score on one file of render name.
func scoreFile(bin, kubeVersion, name, file string) ([]Finding, error) {
	cmd := exec.Command(bin, "score", "--output-format", "json", "--output-version", "v2",
		"--kubernetes-version", kubeVersion, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// kube-score exits 1 when it finds something critical, and prints its
	// findings all the same: only output that does not decode is an error.
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("%s: %s: %w", name, bin, err)
	}
	var objs []scoredObject
	if jerr := json.Unmarshal(out, &objs); jerr != nil {
		return nil, fmt.Errorf("%s: kube-score: %v: %s%s", name, err, stderr.String(), out)
	}
	var findings []Finding
	for _, o := range objs {
		object := path.Join(o.TypeMeta.Kind, o.ObjectMeta.Namespace, o.ObjectMeta.Name)
		for _, c := range o.Checks {
			if c.Skipped || c.Grade > gradeWarning {
				continue
			}
			f := Finding{Render: name, Object: object, Test: c.Check.ID, Critical: c.Grade <= gradeCritical}
			for _, cm := range c.Comments {
				text := cm.Summary
				if cm.Path != "" {
					text = "(" + cm.Path + ") " + text
				}
				if cm.Description != "" {
					text += ": " + cm.Description
				}
				f.Comments = append(f.Comments, text)
			}
			findings = append(findings, f)
		}
	}
	sort.SliceStable(findings, func(i, j int) bool {
		if findings[i].Object != findings[j].Object {
			return findings[i].Object < findings[j].Object
		}
		return findings[i].Test < findings[j].Test
	})
	return findings, nil
}

// ExceptionsFile holds the accepted findings, relative to the repository
// root.
const ExceptionsFile = "hack/kube-score-exceptions.yaml"

// Report is what a lint of the shipped manifests found.
type Report struct {
	// Renders are the names of what was rendered and scored.
	Renders []string
	// Accepted counts the findings an exception accepts.
	Accepted int
	// Open are the findings no exception accepts.
	Open []Finding
	// Unused are the exceptions that accept no finding.
	Unused []Exception
}

// Failed reports whether the lint fails: a finding is open or an
// exception is stale.
func (r Report) Failed() bool { return len(r.Open) > 0 || len(r.Unused) > 0 }

// String is the report for a terminal: each open finding, each stale
// exception, and what to do about them.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kube-score over %d renders (%s): %d findings accepted by %s, %d open, %d exceptions unused\n",
		len(r.Renders), strings.Join(r.Renders, ", "), r.Accepted, ExceptionsFile, len(r.Open), len(r.Unused))
	for _, f := range r.Open {
		b.WriteString(f.String() + "\n")
	}
	if len(r.Open) > 0 {
		b.WriteString("Fix the manifests under config/ (then make manifests release-packages), or accept a finding in " + ExceptionsFile + " with its reason.\n")
	}
	for _, e := range r.Unused {
		fmt.Fprintf(&b, "[UNUSED] exception %s accepts no finding: remove it from %s\n", e, ExceptionsFile)
	}
	return b.String()
}

// Lint renders everything shipped from the repository at root (Shipped),
// scores it with kube-score at bin for the oldest supported Kubernetes
// release kubeVersion, and holds the findings to the exceptions file.
func Lint(root, bin, helm, kubeVersion string) (Report, error) {
	exceptions, err := LoadExceptions(filepath.Join(root, ExceptionsFile))
	if err != nil {
		return Report{}, err
	}
	renders, err := Shipped(root, helm)
	if err != nil {
		return Report{}, err
	}
	findings, err := Score(bin, kubeVersion, renders)
	if err != nil {
		return Report{}, err
	}
	r := Report{Accepted: len(findings)}
	for _, rd := range renders {
		r.Renders = append(r.Renders, rd.Name)
	}
	r.Open, r.Unused = Apply(findings, exceptions)
	r.Accepted -= len(r.Open)
	return r, nil
}
