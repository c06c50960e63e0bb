package helmchart

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/multi-operator/multi-operator/controllers"
)

// deployment is the manager Deployment of config/manager and what each
// switch's components change in it.
type deployment struct {
	base    *unstructured.Unstructured
	changes []deploymentChange
}

// deploymentChange is what one switch adds to the manager's container, or
// the replica count it sets.
type deploymentChange struct {
	sw Switch
	// managerImage is the manager container's image before the switch,
	// which an image variable naming the manager's own image repeats.
	managerImage string
	args         []any
	env          []any
	ports        []any
	lifecycle    any
	replicas     any
}

// The manager container's lists that components append to.
var appendedLists = []string{"args", "env", "ports"}

func newDeployment(o *unstructured.Unstructured) *deployment {
	return &deployment{base: o}
}

// container is the manager's container of a Deployment (the first one,
// which the components' JSON patches address).
func container(o *unstructured.Unstructured) (map[string]any, error) {
	containers, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		return nil, fmt.Errorf("deployment %s has no container", o.GetName())
	}
	c, ok := containers[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("deployment %s: container is not an object", o.GetName())
	}
	return c, nil
}

// addChanges records what s changes between the Deployment before and
// after its components: items appended to args, env and ports, a lifecycle
// and the replica count. Any other change is an error, so that the chart
// cannot silently drift from the overlays.
func (d *deployment) addChanges(s Switch, before, after *unstructured.Unstructured) error {
	bc, err := container(before)
	if err != nil {
		return err
	}
	ac, err := container(after)
	if err != nil {
		return err
	}
	ch := deploymentChange{sw: s}
	ch.managerImage, _ = bc["image"].(string)
	lists := map[string]*[]any{"args": &ch.args, "env": &ch.env, "ports": &ch.ports}
	rest := after.DeepCopy()
	restC, _ := container(rest)
	for _, name := range appendedLists {
		b, _ := bc[name].([]any)
		a, _ := ac[name].([]any)
		if len(a) < len(b) || !reflect.DeepEqual(a[:len(b)], b) {
			return fmt.Errorf("%s changes the manager's %s other than by appending", s.Value, name)
		}
		*lists[name] = a[len(b):]
		restC[name] = bc[name]
	}
	if l, ok := ac["lifecycle"]; ok && !reflect.DeepEqual(l, bc["lifecycle"]) {
		ch.lifecycle = l
		if bl, had := bc["lifecycle"]; had {
			restC["lifecycle"] = bl
		} else {
			delete(restC, "lifecycle")
		}
	}
	if err := setContainer(rest, restC); err != nil {
		return err
	}
	br, _, _ := unstructured.NestedFieldNoCopy(before.Object, "spec", "replicas")
	ar, _, _ := unstructured.NestedFieldNoCopy(after.Object, "spec", "replicas")
	if !reflect.DeepEqual(br, ar) {
		ch.replicas = ar
		if err := unstructured.SetNestedField(rest.Object, br, "spec", "replicas"); err != nil {
			return err
		}
	}
	if !reflect.DeepEqual(rest.Object, before.Object) {
		return fmt.Errorf("%s changes the manager Deployment in a way hack/release/helmchart does not template", s.Value)
	}
	d.changes = append(d.changes, ch)
	return nil
}

func setContainer(o *unstructured.Unstructured, c map[string]any) error {
	containers, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return err
	}
	containers[0] = c
	return unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
}

// envValue is a setting the manager reads from an environment variable
// that a controller's component sets (an image, or who may scrape its
// exporters), and the value of values.yaml that sets it.
type envValue struct {
	// env is the variable, value the key under controllers.<name>, and def
	// the value the component sets.
	env, value, def string
	// doc describes the value.
	doc string
	// self: the component sets the manager's own image (the Memcached
	// exporter is the manager's binary), so the value is empty by default
	// and the variable follows the manager image's values.
	self bool
}

// settings are the env variables of a controller's settings among those
// the controller's component adds: its Descriptor's ImageEnv (the
// operand's image), ExporterImageEnv (its exporter sidecar's) and
// ExporterScrapersEnv (who may reach that sidecar), which values.yaml sets
// as controllers.<name>.image, .exporterImage and .exporterScrapers.
func (ch deploymentChange) settings() []envValue {
	var out []envValue
	for _, d := range controllers.All() {
		if d.Name != ch.sw.Controller {
			continue
		}
		for _, want := range []envValue{
			{env: d.ImageEnv, value: "image", doc: "The operand image the " + d.Name + " controller runs."},
			{env: d.ExporterImageEnv, value: "exporterImage", doc: "The metrics exporter image the " + d.Name + " controller runs beside its operand."},
			{env: d.ExporterScrapersEnv, value: "exporterScrapers", doc: "The namespaces whose pods may reach the metrics port of the " + d.Name + " controller's exporters, as a label selector (kubectl's form), or * for any source: the port also lets its callers make the exporter dial any address."},
		} {
			if want.env == "" {
				continue
			}
			for _, e := range ch.env {
				if m, _ := e.(map[string]any); m["name"] == want.env {
					if v, isString := m["value"].(string); isString {
						want.def = v
						if v == ch.managerImage {
							want.self, want.def = true, ""
							want.doc += " Empty: the manager image (image.repository, image.tag, image.digest), whose binary it runs."
						}
						out = append(out, want)
					}
				}
			}
		}
	}
	return out
}

// Placeholders in the Deployment's YAML that render replaces with template text.
const (
	tokenReplicas    = "__REPLICAS__"
	tokenImage       = "__IMAGE__"
	tokenResources   = "__RESOURCES__"
	tokenLeaderElect = "__LEADER_ELECT__"
	tokenLifecycle   = "zz_lifecycle_token" // sorts last, so never the first key of the container item
	leaderElectFlag  = "--leader-elect"
)

// render is the Deployment's template.
func (d *deployment) render() (string, error) {
	obj := d.base.DeepCopy()
	ctr, err := container(obj)
	if err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(obj.Object, tokenReplicas, "spec", "replicas"); err != nil {
		return "", err
	}
	ctr["image"] = tokenImage
	ctr["resources"] = tokenResources
	args, _ := ctr["args"].([]any)
	for i, a := range args {
		if a == leaderElectFlag {
			args[i] = tokenLeaderElect
		}
	}
	for _, name := range appendedLists {
		list, _ := ctr[name].([]any)
		ctr[name] = append(list, listToken(name))
	}
	ctr[tokenLifecycle] = ""
	if err := setContainer(obj, ctr); err != nil {
		return "", err
	}
	blocks, err := podBlocks(obj)
	if err != nil {
		return "", err
	}
	text, err := marshal(obj.Object)
	if err != nil {
		return "", err
	}
	text, err = d.substitute(templated(text))
	return replaceBlocks(text, blocks), err
}

// podFields are the pod spec's fields that a value sets, all beyond what
// config/manager sets.
var podFields = []struct{ field, value string }{
	{"imagePullSecrets", ".Values.imagePullSecrets"},
	{"nodeSelector", ".Values.nodeSelector"},
	{"tolerations", ".Values.tolerations"},
	{"affinity", ".Values.affinity"},
	{"topologySpreadConstraints", ".Values.topologySpreadConstraints"},
}

// defaultFromConfig are the podFields that config/manager may set: the
// chart's value defaults to what it sets, and a user's value is merged
// into it as Helm merges values.
var defaultFromConfig = map[string]bool{"affinity": true}

// podBlocks puts into the Deployment obj the tokens of the pod's values:
// its labels and annotations (beside its own), its ServiceAccount, and
// the podFields and priorityClassName.
func podBlocks(obj *unstructured.Unstructured) (map[string]blockFunc, error) {
	blocks := map[string]blockFunc{}
	meta, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "metadata")
	for field, value := range map[string]string{"labels": ".Values.podLabels", "annotations": ".Values.podAnnotations"} {
		own, _ := meta[field].(map[string]any)
		if own == nil {
			return nil, fmt.Errorf("the manager's pod has no %s for the chart's to join", field)
		}
		keys := slices.Sorted(maps.Keys(own))
		addBlock(own, blocks, field, func(indent string) string { return mergedYAML(value, keys, indent) })
	}
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
	for _, f := range append(slices.Clone(podFields), struct{ field, value string }{"priorityClassName", ""}) {
		if _, ok := spec[f.field]; !ok {
			continue
		}
		if !defaultFromConfig[f.field] {
			return nil, fmt.Errorf("config/manager sets the pod's %s, which a value of the chart sets", f.field)
		}
		// The value's default is config/manager's (see values).
		delete(spec, f.field)
	}
	spec["serviceAccountName"] = tokenServiceAccount
	addBlock(spec, blocks, "pod", func(indent string) string {
		var b strings.Builder
		for _, f := range podFields {
			b.WriteString(withYAML(f.value, f.field, indent))
		}
		b.WriteString(withScalar(".Values.priorityClassName", "priorityClassName", indent))
		return b.String()
	})
	if err := unstructured.SetNestedMap(obj.Object, spec, "spec", "template", "spec"); err != nil {
		return nil, err
	}
	return blocks, unstructured.SetNestedMap(obj.Object, meta, "spec", "template", "metadata")
}

// imageLines are the container's image and pull policy. The policy is
// left out where it is Kubernetes' default, as the overlays leave it out:
// IfNotPresent, unless the tag is latest (then Always).
const imageLines = `%[1]simage: {{ include "` + managerImageTemplate + `" . | quote }}
{{- if or (ne .Values.image.pullPolicy "IfNotPresent") (and (not .Values.image.digest) (eq .Values.image.tag "latest")) }}
%[1]simagePullPolicy: {{ .Values.image.pullPolicy }}
{{- end }}
`

// managerImageTemplate names the chart's template of the manager image,
// repository:tag[@digest], which the manager's container runs and which an
// image variable naming the manager's own image defaults to.
const managerImageTemplate = ChartName + ".managerImage"

// helpersTPL is templates/_helpers.tpl, the chart's named templates.
const helpersTPL = `{{/* The manager image: repository:tag, @digest when pinned; the tag defaults to v<appVersion>. */}}
{{- define "` + managerImageTemplate + `" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}{{ with .Values.image.digest }}@{{ . }}{{ end }}
{{- end }}
`

func listToken(name string) string { return "__" + strings.ToUpper(name) + "__" }

// substitute replaces the placeholders of the Deployment's YAML.
func (d *deployment) substitute(text string) (string, error) {
	replicas, err := d.replicasExpr()
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(trimmed)]
		body := strings.TrimSpace(trimmed)
		switch {
		case strings.HasSuffix(body, tokenReplicas):
			out.WriteString(strings.Replace(line, tokenReplicas, replicas, 1))
		case body == "image: "+tokenImage:
			fmt.Fprintf(&out, imageLines, indent)
		case strings.HasSuffix(body, tokenResources):
			fmt.Fprintf(&out, "%sresources:\n{{- toYaml .Values.resources | nindent %d }}\n", indent, len(indent)+2)
		case body == "- "+tokenLeaderElect:
			out.WriteString(ifBlock(".Values.leaderElection", indent+"- "+leaderElectFlag+"\n"))
		case body == tokenLifecycle+`: ""`:
			block, err := d.lifecycleBlock(indent)
			if err != nil {
				return "", err
			}
			out.WriteString(block)
		case strings.HasPrefix(body, "- __"):
			block, err := d.listBlock(strings.ToLower(strings.Trim(strings.TrimPrefix(body, "- "), "_")), indent)
			if err != nil {
				return "", err
			}
			out.WriteString(block)
		default:
			out.WriteString(line)
		}
	}
	return out.String(), nil
}

// replicasExpr is the replica count: the value when set, else what the
// overlays set (the webhook server's components run two replicas).
func (d *deployment) replicasExpr() (string, error) {
	base, _, _ := unstructured.NestedFieldNoCopy(d.base.Object, "spec", "replicas")
	def := fmt.Sprint(base)
	for _, ch := range d.changes {
		if ch.replicas == nil {
			continue
		}
		if def != fmt.Sprint(base) {
			return "", fmt.Errorf("two switches set the replica count")
		}
		def = fmt.Sprintf("(ternary %v %v (%s))", ch.replicas, base, ch.sw.Condition())
	}
	return fmt.Sprintf(`{{ if kindIs "invalid" .Values.replicas }}{{ %s }}{{ else }}{{ .Values.replicas }}{{ end }}`, def), nil
}

// listBlock is the items each switch appends to the container's list
// name, each under its switch's condition.
func (d *deployment) listBlock(name, indent string) (string, error) {
	var b strings.Builder
	for _, ch := range d.changes {
		items := map[string][]any{"args": ch.args, "env": ch.env, "ports": ch.ports}[name]
		if len(items) == 0 {
			continue
		}
		var body strings.Builder
		settings := ch.settings()
	items:
		for _, item := range items {
			if m, ok := item.(map[string]any); ok && name == "env" {
				for _, set := range settings {
					if m["name"] == set.env {
						def := ""
						if set.self {
							def = fmt.Sprintf(" | default (include %q .)", managerImageTemplate)
						}
						fmt.Fprintf(&body, "%s- name: %s\n%s  value: {{ .Values.controllers.%s.%s%s | quote }}\n", indent, set.env, indent, ch.sw.Controller, set.value, def)
						continue items
					}
				}
			}
			text, err := marshal([]any{item})
			if err != nil {
				return "", err
			}
			body.WriteString(indentLines(templated(text), indent))
		}
		b.WriteString(ifBlock(ch.sw.Condition(), body.String()))
	}
	switch name {
	case "args":
		for _, f := range valueFlags {
			b.WriteString(flagItem(f.flag, f.value, indent))
		}
		b.WriteString(fmt.Sprintf("{{- with .Values.watchNamespaces }}\n%s- --watch-namespaces={{ join \",\" . }}\n{{- end }}\n", indent))
		b.WriteString(mergedYAML(".Values.extraArgs", nil, indent))
	case "env":
		b.WriteString(mergedYAML(".Values.extraEnv", nil, indent))
	}
	return b.String(), nil
}

// valueFlags are the manager's flags that values set; unset, the flag is
// left out and the manager's default applies.
var valueFlags = []struct{ flag, value string }{
	{"--zap-log-level", ".Values.logLevel"},
	{"--zap-encoder", ".Values.logFormat"},
	{"--kube-api-qps", ".Values.kubeAPI.qps"},
	{"--kube-api-burst", ".Values.kubeAPI.burst"},
}

// lifecycleBlock is the container's lifecycle under the switch that adds it.
func (d *deployment) lifecycleBlock(indent string) (string, error) {
	var b strings.Builder
	for _, ch := range d.changes {
		if ch.lifecycle == nil {
			continue
		}
		text, err := marshal(map[string]any{"lifecycle": ch.lifecycle})
		if err != nil {
			return "", err
		}
		b.WriteString(ifBlock(ch.sw.Condition(), indentLines(text, indent)))
	}
	return b.String(), nil
}
