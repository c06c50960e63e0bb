package metricsdoc

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/multi-operator/multi-operator/hack/reporoot"
)

// boundedLabels are the label names a project metric may have: the
// object's namespace and name, which go with the object, and labels whose
// values are a few fixed ones. A label outside it, such as a rule's
// description or a pod's name, would grow the series without bound; one
// that is bounded joins the list with the values it takes.
var boundedLabels = map[string]string{
	"namespace":   "the object's namespace",
	"name":        "the object's name",
	"cause":       "rollout, redis",
	"state":       "ok, fail, unknown",
	"source":      "default, window, exception, override",
	"outcome":     "succeeded, failed",
	"certificate": "serving, ca",
	"reason":      "refused, error",
	"shard":       "0 to spec.size-1 of a RedisCluster, at most 100 (the CRD's bound), gone with the cluster",
}

func TestEveryLabelIsBounded(t *testing.T) {
	list, err := Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no project metric found on controller-runtime's registry")
	}
	for _, m := range list {
		for _, l := range m.Labels {
			if _, ok := boundedLabels[l]; !ok {
				t.Errorf("%s has the label %q, which is not known to take a few fixed values; a label's values must be bounded (add it to boundedLabels with its values if they are)", m.Name, l)
			}
		}
		if m.Help == "" || m.Type == "" {
			t.Errorf("%s: no help or type: %+v", m.Name, m)
		}
	}
}

// Every package with metrics has a section, so none is left off the page.
func TestEveryPrefixHasASection(t *testing.T) {
	for _, p := range Prefixes {
		if !slices.ContainsFunc(sections, func(s struct{ prefix, title string }) bool { return s.prefix == p }) {
			t.Errorf("prefix %s has no section", p)
		}
	}
}

func TestPageIsUpToDate(t *testing.T) {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	list, err := Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, Path))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(Markdown(list)), string(got)); diff != "" {
		t.Errorf("%s is stale; run make generate and commit it (-want +got):\n%s", Path, diff)
	}
}

func TestParseDesc(t *testing.T) {
	for _, tc := range []struct {
		name, desc string
		want       Metric
		wantErr    bool
	}{
		{
			name: "labels",
			desc: `Desc{fqName: "tdset_desired_replicas", help: "Replicas \"now\".", unit: "", constLabels: {}, variableLabels: {namespace,name}}`,
			want: Metric{Name: "tdset_desired_replicas", Help: `Replicas "now".`, Labels: []string{"namespace", "name"}},
		},
		{
			name: "without unit, a constrained label",
			desc: `Desc{fqName: "x_total", help: "X.", constLabels: {}, variableLabels: {c(outcome)}}`,
			want: Metric{Name: "x_total", Help: "X.", Labels: []string{"outcome"}},
		},
		{
			name: "no labels",
			desc: `Desc{fqName: "go_goroutines", help: "Goroutines.", unit: "", constLabels: {version="1"}, variableLabels: {}}`,
			want: Metric{Name: "go_goroutines", Help: "Goroutines."},
		},
		{name: "another format", desc: `Desc{name: "x"}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDesc(tc.desc)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "plain",
		"a | b":      `a \| b`,
		"two\nlines": "two lines",
		"":           "",
	} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
}
