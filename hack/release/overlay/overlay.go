// Package overlay builds the project's kustomizations (config/default,
// config/overlays/*, or a composition of config/manager and components) in
// process with kustomize's API, for the release generators (OLM bundle, Helm
// chart) and for the tests that hold those packages to the overlays.
package overlay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	// Namespace is where every overlay installs the manager.
	Namespace = "multi-operator-system"
	// NamePrefix is every overlay's name prefix.
	NamePrefix = "multi-operator-"
	// ImageName is the manager image's name in config/manager (the
	// release's repository), which Kustomization.Image replaces.
	ImageName = "ghcr.io/multi-operator/multi-operator"
)

// Kustomization is a kustomization written into a temporary directory:
// resources and components are directories relative to the repository
// root, composed the way config/default composes them.
type Kustomization struct {
	// Resources are kustomization directories, such as config/default or
	// config/manager.
	Resources []string
	// Components are component directories, such as config/components/tdset.
	Components []string
	// Image, when set, replaces the manager image (name:tag), as
	// `make build-installer IMG=...` does.
	Image string
	// Digest, when set with Image, pins it (sha256:...), as a user's
	// images: entry with a digest does.
	Digest string
	// Bare leaves out the namespace and name prefix every overlay sets,
	// for a kustomization of overlays that already set them.
	Bare bool
}

// unknownClusterScoped are cluster-scoped kinds that kustomize's built-in
// schema does not know, so that its namespace transformer gives them the
// overlay's namespace. The API server drops it (kubectl apply -k works);
// the chart and the bundle should not show it.
var unknownClusterScoped = map[schema.GroupKind]bool{
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}: true,
}

// Build runs kustomize on the kustomization directory dir and returns its
// objects in kustomize's output order.
func Build(dir string) ([]*unstructured.Unstructured, error) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	objs := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, res := range resMap.Resources() {
		// Through JSON, so that numbers are int64 as the API machinery's
		// deep copies expect (kustomize's own maps hold int).
		raw, err := res.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, res.CurId(), err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, res.CurId(), err)
		}
		if unknownClusterScoped[obj.GroupVersionKind().GroupKind()] {
			obj.SetNamespace("")
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// Build writes k into a temporary directory, builds it and removes the
// directory again. root is the repository root.
func (k Kustomization) Build(root string) ([]*unstructured.Unstructured, error) {
	tmp, err := os.MkdirTemp("", "overlay-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k.render(root, tmp)), 0o600); err != nil {
		return nil, err
	}
	return Build(tmp)
}

// render is the kustomization file of k placed in dir.
func (k Kustomization) render(root, dir string) string {
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
	if !k.Bare {
		fmt.Fprintf(&b, "namespace: %s\nnamePrefix: %s\n", Namespace, NamePrefix)
	}
	list := func(key string, dirs []string) {
		if len(dirs) == 0 {
			return
		}
		b.WriteString(key + ":\n")
		for _, d := range dirs {
			rel, err := filepath.Rel(dir, filepath.Join(root, d))
			if err != nil {
				rel = filepath.Join(root, d)
			}
			b.WriteString("- " + rel + "\n")
		}
	}
	list("resources", k.Resources)
	list("components", k.Components)
	if k.Image != "" {
		name, tag := SplitImage(k.Image)
		fmt.Fprintf(&b, "images:\n- name: %s\n  newName: %s\n  newTag: %q\n", ImageName, name, tag)
		if k.Digest != "" {
			fmt.Fprintf(&b, "  digest: %s\n", k.Digest)
		}
	}
	return b.String()
}

// SplitImage splits name:tag as the Makefile's IMG is split: a reference
// without a tag (or whose last colon belongs to a registry's port) gets
// the tag "latest".
func SplitImage(image string) (name, tag string) {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i+1:], "/") {
		return image, "latest"
	}
	return image[:i], image[i+1:]
}

// Key identifies an object in a build: kind, namespace and name.
func Key(o *unstructured.Unstructured) string {
	return KeyOf(o.GetKind(), o.GetNamespace(), o.GetName())
}

// KeyOf is the Key of the object of that kind, namespace and name, such as
// the role a binding refers to.
func KeyOf(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

// Components are the names (the last path element) of the components the
// kustomization in dir lists, in its order.
func Components(dir string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k struct {
		Components []string `json:"components"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	names := make([]string, len(k.Components))
	for i, c := range k.Components {
		names[i] = filepath.Base(c)
	}
	return names, nil
}

// IsControllerRoleBinding reports whether o binds a controller's own
// ClusterRole (<prefix><controller>-manager-role, generated from its RBAC
// markers) cluster-wide: the bindings that the namespace-scoped mode
// replaces with RoleBindings in the watched namespaces.
func IsControllerRoleBinding(o *unstructured.Unstructured) bool {
	if o.GetKind() != "ClusterRoleBinding" {
		return false
	}
	kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
	return kind == "ClusterRole" && strings.HasSuffix(name, "-manager-role")
}
