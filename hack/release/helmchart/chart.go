// Package helmchart generates the Helm chart in dist/chart from the same
// kustomize sources the overlays are built from: every object that a
// component adds to config/manager becomes a template rendered under that
// component's switch, and the manager Deployment becomes one template whose
// flags, operand images, ports and replicas follow the switches. The tests
// hold `helm template` to `kustomize build` of every overlay.
package helmchart

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/release/kubeversions"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// ChartName is the chart's name, and the release name the README uses.
const ChartName = "multi-operator"

// Options are what a release sets: the chart's version and the manager
// image's repository (its tag is "v" + the version) and, for a release
// that pins it (make release), its digest.
type Options struct {
	Version         string
	ImageRepository string
	ImageDigest     string
}

// template is one object of the chart: its manifest and the conditions
// (ANDed) under which it renders.
type template struct {
	obj        *unstructured.Unstructured
	conditions []string
	// annotations added under a switch (cert-manager's CA injection).
	annotations []conditional
}

// conditional is a part of a manifest that a switch adds.
type conditional struct {
	condition string
	value     map[string]any
}

// Chart is the generated chart, before it is written.
type Chart struct {
	opts      Options
	versions  kubeversions.Range
	switches  []Switch
	templates []*template
	manager   *deployment
}

// Generate builds the chart from the repository at root.
func Generate(root string, opts Options) (*Chart, error) {
	switches, err := Switches(root)
	if err != nil {
		return nil, err
	}
	versions, err := kubeversions.Read(root)
	if err != nil {
		return nil, err
	}
	c := &Chart{opts: opts, switches: switches, versions: versions}
	base, err := build(root, nil)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*template{}
	for _, o := range base {
		if o.GetKind() == "Deployment" {
			c.manager = newDeployment(o)
			continue
		}
		t := &template{obj: o, conditions: baseConditions(o)}
		byKey[overlay.Key(o)] = t
		c.templates = append(c.templates, t)
	}
	if c.manager == nil {
		return nil, fmt.Errorf("config/manager has no Deployment")
	}
	for _, s := range switches {
		if err := c.addSwitch(root, s, byKey); err != nil {
			return nil, fmt.Errorf("switch %s: %w", s.Value, err)
		}
	}
	for _, t := range c.templates {
		if t.obj.GetKind() == "CustomResourceDefinition" {
			t.conditions = append(t.conditions, crdInstall.Condition())
			// Helm skips deleting a resource whose manifest in the release
			// (helm uninstall) or whose live object (upgrade, rollback;
			// last applied from the previous release) has the annotation.
			// So annotating is enough, also for the CRD of a controller
			// that an upgrade switches off and no longer renders.
			t.annotations = append(t.annotations, conditional{condition: crdKeep.Condition(), value: map[string]any{"helm.sh/resource-policy": "keep"}})
		}
		if since, ok := servedSince[t.obj.GetAPIVersion()+"/"+t.obj.GetKind()]; ok && kubeversions.Older(versions.Oldest, since) {
			t.conditions = append(t.conditions, servedCondition(since))
		}
	}
	return c, nil
}

// servedSince is the release from which Kubernetes serves a kind the
// overlays hold, for those served after the oldest supported release.
var servedSince = map[string]string{
	"admissionregistration.k8s.io/v1/MutatingAdmissionPolicy":        "1.36",
	"admissionregistration.k8s.io/v1/MutatingAdmissionPolicyBinding": "1.36",
}

// servedCondition renders a kind only for clusters of a release that
// serves it. It goes by the release (helm install asks the cluster, helm
// template takes --kube-version), not by .Capabilities.APIVersions, whose
// list under helm template is helm's own and lacks newer kinds.
func servedCondition(since string) string {
	return fmt.Sprintf(`semverCompare ">= %s.0-0" .Capabilities.KubeVersion.Version`, since)
}

// baseConditions are the values that turn off parts of config/manager.
func baseConditions(o *unstructured.Unstructured) []string {
	switch {
	case o.GetKind() == "Namespace":
		return []string{".Values.namespace.create"}
	case strings.Contains(o.GetName(), "leader-election"):
		return []string{".Values.leaderElection"}
	}
	return nil
}

// addSwitch records what s's components change: the objects they add and
// remove, the annotations they add, and the Deployment's changes.
func (c *Chart) addSwitch(root string, s Switch, byKey map[string]*template) error {
	var context []string
	for _, r := range s.Requires {
		for _, other := range c.switches {
			if other.Value == r {
				context = append(context, other.Components...)
			}
		}
	}
	before, err := build(root, context)
	if err != nil {
		return err
	}
	after, err := build(root, append(slices.Clone(context), s.Components...))
	if err != nil {
		return err
	}
	beforeByKey := index(before)
	afterByKey := index(after)
	for _, o := range after {
		key := overlay.Key(o)
		old, existed := beforeByKey[key]
		switch {
		case !existed:
			if _, dup := byKey[key]; dup {
				return fmt.Errorf("%s is added by two switches", key)
			}
			t := &template{obj: o, conditions: []string{s.Condition()}}
			byKey[key] = t
			c.templates = append(c.templates, t)
		case o.GetKind() == "Deployment":
			if err := c.manager.addChanges(s, old, o); err != nil {
				return err
			}
		case !reflect.DeepEqual(old.Object, o.Object):
			if err := addAnnotations(byKey[key], s, old, o); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	for key := range beforeByKey {
		if _, kept := afterByKey[key]; !kept {
			t := byKey[key]
			if t == nil {
				return fmt.Errorf("%s is removed but no switch adds it", key)
			}
			t.conditions = append(t.conditions, "not ("+s.Condition()+")")
		}
	}
	return nil
}

// addAnnotations records annotations that s adds to an object another
// switch renders; any other change is beyond what the generator knows.
func addAnnotations(t *template, s Switch, before, after *unstructured.Unstructured) error {
	if t == nil {
		return fmt.Errorf("changed by a switch but not a template")
	}
	added := map[string]any{}
	old := before.GetAnnotations()
	for k, v := range after.GetAnnotations() {
		if ov, ok := old[k]; !ok || ov != v {
			added[k] = v
		}
	}
	stripped := after.DeepCopy()
	stripped.SetAnnotations(old)
	if len(old) == 0 {
		unstructured.RemoveNestedField(stripped.Object, "metadata", "annotations")
	}
	if len(added) == 0 || !reflect.DeepEqual(stripped.Object, before.Object) {
		return fmt.Errorf("changes other than added annotations; teach hack/release/helmchart to template them")
	}
	t.annotations = append(t.annotations, conditional{condition: s.Condition(), value: added})
	return nil
}

// build is config/manager with the given components, as an overlay composes it.
func build(root string, components []string) ([]*unstructured.Unstructured, error) {
	dirs := make([]string, len(components))
	for i, c := range components {
		dirs[i] = filepath.Join("config", "components", c)
	}
	return overlay.Kustomization{Resources: []string{"config/manager"}, Components: dirs}.Build(root)
}

func index(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := make(map[string]*unstructured.Unstructured, len(objs))
	for _, o := range objs {
		m[overlay.Key(o)] = o
	}
	return m
}

// Write writes the chart into dir, replacing what was there.
func (c *Chart) Write(dir string) error {
	files, err := c.Files()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil { //nolint:gosec // a chart is public
			return err
		}
	}
	return nil
}

// Files are the chart's files by path relative to the chart's directory.
func (c *Chart) Files() (map[string]string, error) {
	files := map[string]string{
		"Chart.yaml":             c.chartYAML(),
		".helmignore":            "# Files helm package leaves out.\n.git/\n*.orig\n*~\n",
		"templates/NOTES.txt":    notes,
		"templates/_helpers.tpl": helpersTPL,
	}
	generated := map[string]func() (string, error){
		"values.yaml":                       c.valuesYAML,
		"values.schema.json":                c.schemaJSON,
		"README.md":                         c.readme,
		"templates/manager/deployment.yaml": c.manager.render,
	}
	for name, generate := range generated {
		text, err := generate()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		files[name] = text
	}
	account := c.serviceAccount()
	for _, t := range c.templates {
		text, err := t.render(account)
		if err != nil {
			return nil, err
		}
		files[t.path(c.switches)] = text
	}
	return files, nil
}

// path puts a template under the folder of the component that adds it.
func (t *template) path(switches []Switch) string {
	folder := "manager"
	for _, s := range switches {
		if slices.Contains(t.conditions, s.Condition()) {
			folder = s.Components[0]
		}
	}
	name := strings.TrimPrefix(t.obj.GetName(), overlay.NamePrefix)
	return fmt.Sprintf("templates/%s/%s-%s.yaml", folder, strings.ToLower(t.obj.GetKind()), name)
}

// render is the template's text: the object's YAML with the namespace and
// the managed-by label templated, the values of valueEdits wired in, and
// wrapped in its conditions. account is the manager's ServiceAccount.
func (t *template) render(account string) (string, error) {
	obj := t.obj.DeepCopy()
	blocks, err := t.annotationBlocks(obj)
	if err != nil {
		return "", err
	}
	conditions, edits, err := valueEdits(obj, account)
	if err != nil {
		return "", err
	}
	text, err := marshal(obj.Object)
	if err != nil {
		return "", err
	}
	text = templated(text)
	if blocks != "" {
		edits[tokenAnnotations] = func(string) string { return blocks }
	}
	text = replaceBlocks(text, edits)
	if overlay.IsControllerRoleBinding(t.obj) {
		perNamespace, err := namespacedBinding(obj)
		if err != nil {
			return "", err
		}
		text = "{{- if not .Values.watchNamespaces }}\n" + text + "{{- else }}\n" + perNamespace + "{{- end }}\n"
	}
	return wrap(append(slices.Clone(t.conditions), conditions...), text), nil
}

// tokenWatchNamespace stands for each of watchNamespaces in the
// RoleBindings of the namespace-scoped mode.
const tokenWatchNamespace = "__WATCH_NAMESPACE__"

// namespacedBinding is crb, a controller's ClusterRoleBinding as the
// chart templates it, as one RoleBinding of the same ClusterRole in each
// of watchNamespaces: its rules then hold in those namespaces alone.
func namespacedBinding(crb *unstructured.Unstructured) (string, error) {
	rb := crb.DeepCopy()
	rb.SetKind("RoleBinding")
	rb.SetNamespace(tokenWatchNamespace)
	text, err := marshal(rb.Object)
	if err != nil {
		return "", err
	}
	text = strings.ReplaceAll(templated(text), tokenWatchNamespace, "{{ $namespace }}")
	// range rebinds the dot: the values and the release are $'s.
	text = strings.NewReplacer("{{ .Values.", "{{ $.Values.", "{{ .Release.", "{{ $.Release.").Replace(text)
	return "{{- range $namespace := .Values.watchNamespaces }}\n---\n" + text + "{{- end }}\n", nil
}

// tokenAnnotations marks where the conditional annotations go.
const tokenAnnotations = "__ANNOTATIONS__"

// annotationBlocks puts tokenAnnotations into obj where the annotations
// that switches add belong (among the object's own, or as the whole
// annotations map when it has none) and returns the blocks that replace it.
func (t *template) annotationBlocks(obj *unstructured.Unstructured) (string, error) {
	if len(t.annotations) == 0 {
		return "", nil
	}
	indent, wholeMap := "    ", len(obj.GetAnnotations()) == 0
	if wholeMap {
		obj.Object["metadata"].(map[string]any)[tokenAnnotations] = ""
		indent = "  "
	} else {
		anns := obj.GetAnnotations()
		anns[tokenAnnotations] = ""
		obj.SetAnnotations(anns)
	}
	var blocks strings.Builder
	for _, a := range t.annotations {
		body, err := marshal(a.value)
		if err != nil {
			return "", err
		}
		if wholeMap {
			body = "annotations:\n" + indentLines(body, "  ")
		}
		blocks.WriteString(ifBlock(a.condition, indentLines(templated(body), indent)))
	}
	return blocks.String(), nil
}

// templated escapes template delimiters in a manifest and puts the
// release's namespace and service where the overlay has its own.
func templated(manifest string) string {
	manifest = strings.ReplaceAll(manifest, "{{", `{{ "{{" }}`)
	manifest = strings.ReplaceAll(manifest, tokenServiceAccount, "{{ .Values.serviceAccount.name }}")
	manifest = strings.ReplaceAll(manifest, overlay.Namespace, "{{ .Release.Namespace }}")
	return strings.ReplaceAll(manifest, "app.kubernetes.io/managed-by: kustomize", "app.kubernetes.io/managed-by: {{ .Release.Service }}")
}

// wrap renders text only when every condition holds.
func wrap(conditions []string, text string) string {
	if len(conditions) == 0 {
		return text
	}
	cond := conditions[0]
	if len(conditions) > 1 {
		parts := make([]string, len(conditions))
		for i, c := range conditions {
			parts[i] = "(" + c + ")"
		}
		cond = "and " + strings.Join(parts, " ")
	}
	return "{{- if " + cond + " }}\n" + text + "{{- end }}\n"
}

// ifBlock is text (whole lines) under a condition.
func ifBlock(condition, text string) string {
	return "{{- if " + condition + " }}\n" + text + "{{- end }}\n"
}

// marshal is YAML with sorted keys, so that the chart is reproducible.
func marshal(v any) (string, error) {
	b, err := yaml.Marshal(v)
	return string(b), err
}

// indentLines prefixes every line of text.
func indentLines(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// replaceBlocks replaces each line `token: ""` of text with the block of
// its token, made for the line's indentation.
func replaceBlocks(text string, blocks map[string]blockFunc) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		token, isToken := strings.CutSuffix(strings.TrimSpace(l), `: ""`)
		if block, ok := blocks[token]; isToken && ok {
			lines[i] = block(l[:len(l)-len(strings.TrimLeft(l, " "))])
		}
	}
	return strings.Join(lines, "")
}

const notes = `{{ .Chart.Name }} {{ .Chart.AppVersion }} is installed in {{ .Release.Namespace }}.
Controllers: {{ range $name, $c := .Values.controllers }}{{ if $c.enabled }}{{ $name }} {{ end }}{{ end }}

  kubectl -n {{ .Release.Namespace }} rollout status deployment/multi-operator-controller-manager
  kubectl apply -f samples/    # the repository's samples, one per kind
`
