package overlay

import (
	"github.com/multi-operator/multi-operator/hack/reporoot"

	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSplitImage(t *testing.T) {
	for _, tc := range []struct{ image, name, tag string }{
		{"multi-operator:v1", "multi-operator", "v1"},
		{"multi-operator", "multi-operator", "latest"},
		{"registry.example:5000/multi-operator", "registry.example:5000/multi-operator", "latest"},
		{"registry.example:5000/multi-operator:v2", "registry.example:5000/multi-operator", "v2"},
	} {
		name, tag := SplitImage(tc.image)
		NewWithT(t).Expect([]string{name, tag}).To(Equal([]string{tc.name, tc.tag}), tc.image)
	}
}

func TestDecode(t *testing.T) {
	g := NewWithT(t)
	objs, err := Decode([]byte("---\n# Source: a\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n\n---\nschema: olm.channel\nentries: [{name: b}]\nreplicas: 2\nratio: 0.5\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(2), "empty documents and comments are skipped")
	g.Expect(objs[0].GetName()).To(Equal("a"))
	g.Expect(objs[1].Object).To(HaveKeyWithValue("schema", "olm.channel"), "documents without a kind decode too")
	g.Expect(objs[1].Object["replicas"]).To(Equal(int64(2)), "whole numbers are int64")
	g.Expect(objs[1].Object["ratio"]).To(Equal(0.5))
	_, err = Decode([]byte("a: [\n"))
	g.Expect(err).To(HaveOccurred())
}

// TestImageTagOfDigitsOnly: a commit's short hash can be all digits, which
// YAML reads as a number, and kustomize refuses a number as a tag.
func TestImageTagOfDigitsOnly(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := Kustomization{Resources: []string{"config/manager"}, Image: "localhost/multi-operator:6994569", Bare: true}.Build(root)
	g.Expect(err).NotTo(HaveOccurred())
	var images []string
	for _, o := range objs {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			images = append(images, c.(map[string]any)["image"].(string))
		}
	}
	g.Expect(images).To(ContainElement("localhost/multi-operator:6994569"))
}
