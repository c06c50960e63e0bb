package kubescore

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// OptionalComponents are the components of config/components that no
// overlay turns on and that config/default lists commented out.
var OptionalComponents = []string{"cert-manager", "prometheus", "network-policy", "api-priority", "prometheus-rules", "grafana-dashboards"}

// NamespaceScoped is the component of the namespace-scoped mode, which
// turns the controllers' bindings into RoleBindings and so goes after them.
const NamespaceScoped = "namespace-scoped"

// Shipped renders everything the project ships, from the repository at
// root, with the helm CLI at helm:
//   - kustomize: config/default and every config/overlays/*, and
//     config/default with each optional component, with all of them and
//     with NamespaceScoped;
//   - helm: dist/chart with its default values and with every boolean
//     value of values.yaml on;
//   - olm: dist/bundle/manifests and dist/bundle-namespaced/manifests, with
//     the Deployments that the CSV embeds in place of the CSV.
func Shipped(root, helm string) ([]Render, error) {
	var renders []Render
	dirs, err := filepath.Glob(filepath.Join(root, "config", "overlays", "*"))
	if err != nil {
		return nil, err
	}
	for _, dir := range append([]string{filepath.Join(root, "config", "default")}, dirs...) {
		objs, err := overlay.Build(dir)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, dir)
		renders = append(renders, Render{Name: "kustomize " + rel, Objects: objs})
	}
	defaults, err := overlay.Components(filepath.Join(root, "config", "default"))
	if err != nil {
		return nil, err
	}
	for _, optional := range append(slices.Clone(OptionalComponents), strings.Join(OptionalComponents, "+"), NamespaceScoped) {
		r, err := withComponents(root, defaults, strings.Split(optional, "+"))
		if err != nil {
			return nil, err
		}
		renders = append(renders, r)
	}

	chart := filepath.Join(root, "dist", "chart")
	objs, err := helmchart.Template(helm, chart, overlay.Namespace, nil)
	if err != nil {
		return nil, err
	}
	renders = append(renders, Render{Name: "helm dist/chart", Objects: objs})
	on, err := booleansOn(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return nil, err
	}
	objs, err = helmchart.Template(helm, chart, overlay.Namespace, on)
	if err != nil {
		return nil, err
	}
	renders = append(renders, Render{Name: "helm dist/chart all-on", Objects: objs})

	for _, dir := range []string{"bundle", "bundle-namespaced"} {
		objs, err = bundle(filepath.Join(root, "dist", dir, "manifests"))
		if err != nil {
			return nil, err
		}
		renders = append(renders, Render{Name: "olm dist/" + dir, Objects: objs})
	}
	return renders, nil
}

// withComponents is config/default with more components added, named
// "kustomize config/default+<component>...".
func withComponents(root string, defaults, more []string) (Render, error) {
	k := overlay.Kustomization{Resources: []string{filepath.Join("config", "manager")}}
	for _, c := range append(slices.Clone(defaults), more...) {
		k.Components = append(k.Components, filepath.Join("config", "components", c))
	}
	objs, err := k.Build(root)
	if err != nil {
		return Render{}, err
	}
	return Render{Name: "kustomize config/default+" + strings.Join(more, "+"), Objects: objs}, nil
}

// booleansOn sets every boolean of a values file to true, as --set pairs:
// the chart's switches, whatever they are.
func booleansOn(file string) (map[string]string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	on := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			switch v := v.(type) {
			case bool:
				on[prefix+k] = "true"
			case map[string]any:
				walk(prefix+k+".", v)
			}
		}
	}
	walk("", values)
	if len(on) == 0 {
		return nil, fmt.Errorf("%s: no boolean value", file)
	}
	return on, nil
}

// bundle reads a bundle's manifests, replacing each ClusterServiceVersion
// by the Deployments it embeds (OLM creates them with these names, labels
// and specs), so that kube-score sees the manager's pod and can match the
// bundle's Services and PodDisruptionBudget to it.
func bundle(dir string) ([]*unstructured.Unstructured, error) {
	objs, err := overlay.DecodeDir(dir)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("no manifests in %s", dir)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ClusterServiceVersion" {
			out = append(out, o)
			continue
		}
		deployments, err := csvDeployments(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		out = append(out, deployments...)
	}
	return out, nil
}

// csvDeployments are the Deployments of a CSV's install strategy.
func csvDeployments(csv *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	specs, _, err := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
	if err != nil || len(specs) == 0 {
		return nil, fmt.Errorf("CSV %s embeds no Deployment: %v", csv.GetName(), err)
	}
	out := make([]*unstructured.Unstructured, 0, len(specs))
	for _, s := range specs {
		d, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("CSV %s: a deployment is not an object", csv.GetName())
		}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1",
			"kind":       "Deployment",
			"metadata":   map[string]any{"name": d["name"], "labels": d["label"]},
			"spec":       d["spec"],
		}})
	}
	return out, nil
}
