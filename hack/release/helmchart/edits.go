package helmchart

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// dashboardLabel marks the ConfigMaps of the grafana-dashboards
// component (hack/dashboards.SidecarLabel).
const dashboardLabel = "grafana_dashboard"

// blockFunc is the template text that replaces a token's line, made for
// the line's indentation.
type blockFunc func(indent string) string

// blockToken is a map key that marks where a block goes. It sorts after
// every field, so that it is never the first key of a list item.
func blockToken(name string) string { return "zz_" + name + "_token" }

// tokenServiceAccount stands for the manager's ServiceAccount name wherever
// a manifest has it; templated replaces it with the value.
const tokenServiceAccount = "__SERVICE_ACCOUNT__"

// serviceAccount is the name of the manager's ServiceAccount.
func (c *Chart) serviceAccount() string {
	name, _, _ := unstructured.NestedString(c.manager.base.Object, "spec", "template", "spec", "serviceAccountName")
	return name
}

// valueEdits wires the values that are not switches into obj (a copy):
// it returns the conditions obj renders under, and the blocks of the
// tokens it puts into obj.
func valueEdits(obj *unstructured.Unstructured, account string) ([]string, map[string]blockFunc, error) {
	blocks := map[string]blockFunc{}
	var conditions []string
	switch obj.GetKind() {
	case "ServiceAccount":
		if obj.GetName() != account {
			break
		}
		conditions = append(conditions, ".Values.serviceAccount.create")
		obj.SetName(tokenServiceAccount)
		addBlock(obj.Object["metadata"].(map[string]any), blocks, "annotations", func(indent string) string {
			return withYAML(".Values.serviceAccount.annotations", "annotations", indent)
		})
	case "FlowSchema":
		rules, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
		for _, r := range rules {
			subjects, _ := r.(map[string]any)["subjects"].([]any)
			for _, s := range subjects {
				if sa, _ := s.(map[string]any)["serviceAccount"].(map[string]any); sa["name"] == account {
					sa["name"] = tokenServiceAccount
				}
			}
		}
		if err := unstructured.SetNestedSlice(obj.Object, rules, "spec", "rules"); err != nil {
			return nil, nil, err
		}
	case "RoleBinding", "ClusterRoleBinding":
		subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
		for _, s := range subjects {
			if m, _ := s.(map[string]any); m["kind"] == "ServiceAccount" && m["name"] == account {
				m["name"] = tokenServiceAccount
			}
		}
		if err := unstructured.SetNestedSlice(obj.Object, subjects, "subjects"); err != nil {
			return nil, nil, err
		}
	case "PodDisruptionBudget":
		conditions = append(conditions, ".Values.podDisruptionBudget.enabled")
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
		if _, ok := spec["minAvailable"]; !ok {
			return nil, nil, fmt.Errorf("PodDisruptionBudget %s: the chart templates minAvailable, which it lacks", obj.GetName())
		}
		delete(spec, "minAvailable")
		addBlock(spec, blocks, "budget", func(indent string) string {
			const v = ".Values.podDisruptionBudget."
			return fmt.Sprintf("{{- if kindIs \"invalid\" %[1]smaxUnavailable }}\n%[2]sminAvailable: {{ %[1]sminAvailable | toJson }}\n"+
				"{{- else }}\n%[2]smaxUnavailable: {{ %[1]smaxUnavailable | toJson }}\n{{- end }}\n", v, indent)
		})
		obj.Object["spec"] = spec
	case "ConfigMap":
		if obj.GetLabels()[dashboardLabel] == "" {
			break
		}
		meta := obj.Object["metadata"].(map[string]any)
		labels, _, _ := unstructured.NestedMap(obj.Object, "metadata", "labels")
		addBlock(meta["labels"].(map[string]any), blocks, "labels", func(indent string) string {
			return mergedYAML(".Values.grafanaDashboards.labels", slices.Sorted(maps.Keys(labels)), indent)
		})
		addBlock(meta, blocks, "annotations", func(indent string) string {
			return withYAML(".Values.grafanaDashboards.annotations", "annotations", indent)
		})
		// The release's namespace unless another is asked for: Grafana's
		// sidecar may watch its own namespace only.
		delete(meta, "namespace")
		addBlock(meta, blocks, "namespace", func(indent string) string {
			return indent + "namespace: {{ .Values.grafanaDashboards.namespace | default .Release.Namespace }}\n"
		})
	case "PrometheusRule":
		labels, _, _ := unstructured.NestedMap(obj.Object, "metadata", "labels")
		addBlock(obj.Object["metadata"].(map[string]any)["labels"].(map[string]any), blocks, "labels", func(indent string) string {
			return mergedYAML(".Values.prometheusRules.labels", slices.Sorted(maps.Keys(labels)), indent)
		})
	case "ServiceMonitor":
		labels, _, _ := unstructured.NestedMap(obj.Object, "metadata", "labels")
		addBlock(obj.Object["metadata"].(map[string]any)["labels"].(map[string]any), blocks, "labels", func(indent string) string {
			return mergedYAML(".Values.metrics.serviceMonitor.labels", slices.Sorted(maps.Keys(labels)), indent)
		})
		endpoints, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
		for _, e := range endpoints {
			addBlock(e.(map[string]any), blocks, "endpoint", func(indent string) string {
				return withScalar(".Values.metrics.serviceMonitor.interval", "interval", indent) +
					withScalar(".Values.metrics.serviceMonitor.scrapeTimeout", "scrapeTimeout", indent)
			})
		}
		if err := unstructured.SetNestedSlice(obj.Object, endpoints, "spec", "endpoints"); err != nil {
			return nil, nil, err
		}
	}
	return conditions, blocks, nil
}

// addBlock puts the token of name into m, and its block into blocks.
func addBlock(m map[string]any, blocks map[string]blockFunc, name string, block blockFunc) {
	m[blockToken(name)] = ""
	blocks[blockToken(name)] = block
}

// withYAML is key with value's YAML under it, when value is set.
func withYAML(value, key, indent string) string {
	return fmt.Sprintf("{{- with %s }}\n%s%s:\n{{- toYaml . | nindent %d }}\n{{- end }}\n", value, indent, key, len(indent)+2)
}

// withScalar is key: value, when value is set.
func withScalar(value, key, indent string) string {
	return fmt.Sprintf("{{- with %s }}\n%s%s: {{ . | quote }}\n{{- end }}\n", value, indent, key)
}

// mergedYAML is the entries of value (a map or a list) at indent, to
// follow those of the map or list the token is in; the keys of that map's
// own are left out, so that a value cannot override them (or repeat a key).
func mergedYAML(value string, own []string, indent string) string {
	if len(own) > 0 {
		quoted := make([]string, len(own))
		for i, k := range own {
			quoted[i] = strconv.Quote(k)
		}
		value = "omit " + value + " " + strings.Join(quoted, " ")
	}
	return fmt.Sprintf("{{- with %s }}\n{{- toYaml . | nindent %d }}\n{{- end }}\n", value, len(indent))
}

// flagItem is the list item --flag=value of args, when value is set (0 is).
func flagItem(flag, value, indent string) string {
	return fmt.Sprintf("{{- if not (kindIs \"invalid\" %s) }}\n%s- %s={{ %s }}\n{{- end }}\n", value, indent, flag, value)
}
