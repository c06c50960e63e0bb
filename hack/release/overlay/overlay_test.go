package overlay

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/multi-operator/multi-operator/hack/reporoot"

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

// TestMemcachedExporterRunsTheManagerImage: in every overlay that runs the
// memcached controller, its exporter's image is exactly the manager's, as
// config/manager names it, as an image set above the overlay (make deploy
// IMG=..., the release) names it, and pinned by a digest; never latest.
func TestMemcachedExporterRunsTheManagerImage(t *testing.T) {
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "config", "overlays", "*"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, filepath.Join(root, "config", "default"))
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, k := range []Kustomization{
		{},
		{Image: "registry.example/mo:v9.9.9"},
		{Image: "registry.example/mo:v9.9.9", Digest: digest},
	} {
		for _, dir := range dirs {
			rel, _ := filepath.Rel(root, dir)
			t.Run(rel+"/"+k.Image+k.Digest, func(t *testing.T) {
				g := NewWithT(t)
				k := k
				k.Resources, k.Bare = []string{rel}, true
				objs, err := k.Build(root)
				g.Expect(err).NotTo(HaveOccurred())
				components, err := Components(dir)
				g.Expect(err).NotTo(HaveOccurred())
				checked := 0
				for _, o := range objs {
					pod, err := PodTemplate(o.Object)
					g.Expect(err).NotTo(HaveOccurred())
					if pod == nil {
						continue
					}
					n, mismatches := SelfImageMismatches(pod)
					g.Expect(mismatches).To(BeEmpty())
					checked += n
					if k.Image != "" {
						want := k.Image
						if k.Digest != "" {
							want += "@" + k.Digest
						}
						g.Expect(pod.Spec.Containers[0].Image).To(Equal(want), "the image set above the overlay")
					}
				}
				if slices.Contains(components, "memcached") {
					g.Expect(checked).To(Equal(1), "the memcached component names the exporter's image")
				} else {
					g.Expect(checked).To(BeZero(), "no memcached controller, no exporter image")
				}
			})
		}
	}
}
