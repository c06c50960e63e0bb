package olm

import (
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestGenerateRefusesWhatOLMCannotInstall breaks the real inputs one way at
// a time: each must fail with a message that says what to fix, rather than
// give a bundle that installs something else than the overlay.
func TestGenerateRefusesWhatOLMCannotInstall(t *testing.T) {
	vars := makeVars(t)
	load := func(t *testing.T) Input {
		in, err := DefaultSources(repoRoot(t)).Load(vars["VERSION"], "img:v1", AutoReplaces)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	find := func(in Input, kind, suffix string) *unstructured.Unstructured {
		for _, o := range in.Objects {
			if o.GetKind() == kind && strings.HasSuffix(o.GetName(), suffix) {
				return o
			}
		}
		t.Fatalf("no %s *%s in the overlay", kind, suffix)
		return nil
	}
	for _, tc := range []struct {
		name    string
		breakIt func(in *Input)
		wantErr string
	}{
		{"a kind OLM does not install", func(in *Input) {
			in.Objects = append(in.Objects, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": map[string]any{"name": "x", "namespace": "ns"},
			}})
		}, "cannot carry kind DaemonSet"},
		{"a binding of the manager with someone else", func(in *Input) {
			b := find(*in, "ClusterRoleBinding", "metrics-auth-rolebinding")
			subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
			subjects = append(subjects, map[string]any{"kind": "User", "name": "alice"})
			_ = unstructured.SetNestedSlice(b.Object, subjects, "subjects")
		}, "with other subjects"},
		{"a CRD version the base CSV does not describe", func(in *Input) {
			owned := in.Base.Spec.CustomResourceDefinitions.Owned
			in.Base.Spec.CustomResourceDefinitions.Owned = owned[1:]
		}, "has no entry in the base CSV"},
		{"a conversion webhook in a CSV for chosen namespaces", func(in *Input) {
			in.Namespaced = true
		}, "must support AllNamespaces only"},
		{"a ClusterRole granted in another namespace", func(in *Input) {
			b := find(*in, "RoleBinding", "leader-election-rolebinding")
			_ = unstructured.SetNestedField(b.Object, "ClusterRole", "roleRef", "kind")
			b.SetNamespace("elsewhere")
		}, "outside the manager's namespace"},
		{"a sample of a kind the CSV does not own", func(in *Input) {
			in.Samples = append(in.Samples, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Other", "metadata": map[string]any{"name": "x"},
			}})
		}, "of no kind the CSV owns"},
		{"a webhook Service that selects no Deployment", func(in *Input) {
			svc := find(*in, "Service", "webhook-service")
			_ = unstructured.SetNestedStringMap(svc.Object, map[string]string{"app": "nothing"}, "spec", "selector")
		}, "selects 0 Deployments"},
		{"a webhook to a port the Service lacks", func(in *Input) {
			svc := find(*in, "Service", "webhook-service")
			_ = unstructured.SetNestedSlice(svc.Object, []any{map[string]any{"port": int64(8443), "targetPort": "webhook"}}, "spec", "ports")
		}, "has no port 443"},
		{"no Deployment", func(in *Input) {
			var kept []*unstructured.Unstructured
			for _, o := range in.Objects {
				if o.GetKind() != "Deployment" {
					kept = append(kept, o)
				}
			}
			in.Objects = kept
		}, "no Deployment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := load(t)
			_, err := Generate(in)
			g.Expect(err).NotTo(HaveOccurred(), "the real inputs make a bundle")
			tc.breakIt(&in)
			_, err = Generate(in)
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}

func TestReleases(t *testing.T) {
	g := NewWithT(t)
	r, err := LoadReleases(filepath.Join(repoRoot(t), "config", "manifests", releasesFile))
	g.Expect(err).NotTo(HaveOccurred())
	first, last := r.Releases[0], r.Releases[len(r.Releases)-1]
	_, ok := r.Previous(first.Version)
	g.Expect(ok).To(BeFalse(), "the first release replaces nothing")
	prev, ok := r.Previous(last.Version)
	g.Expect(ok).To(BeTrue())
	g.Expect(prev.Version.LT(last.Version)).To(BeTrue())
	g.Expect(last.Version.String()).To(Equal(makeVars(t)["VERSION"]), "make bundle's VERSION is the newest release")

	swapped := Releases{Releases: []Release{last, first}}
	g.Expect(swapped.Check()).To(MatchError(ContainSubstring("versions must increase")))
	badDate := Releases{Releases: []Release{{Version: first.Version, Date: "22.11.2026"}}}
	g.Expect(badDate.Check()).To(MatchError(ContainSubstring("not YYYY-MM-DD")))
}
