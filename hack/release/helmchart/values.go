package helmchart

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/pkg/manager"
)

// chartYAML is Chart.yaml.
func (c *Chart) chartYAML() string {
	return fmt.Sprintf(`apiVersion: v2
name: %s
description: One controller-manager hosting the TDSet, Memcached, RedisCluster and WhaleSay operators; each switched on or off with its CRD and RBAC.
type: application
version: %s
appVersion: %q
kubeVersion: %q
home: https://github.com/multi-operator/multi-operator
sources:
- https://github.com/multi-operator/multi-operator
keywords:
- operator
- redis
- memcached
- scheduling
maintainers:
- name: multi-operator maintainers
  url: https://github.com/multi-operator/multi-operator
`, ChartName, c.opts.Version, c.opts.Version, c.versions.HelmConstraint())
}

// value is one value of the chart. values.yaml (with its comment),
// values.schema.json and the README's table are all written from these,
// so that the three cannot disagree.
type value struct {
	// key is the value's dotted path.
	key string
	doc string
	def any
	// types are its JSON schema types; "null" admits unsetting it.
	types []string
	enum  []any
	// more is further schema: the items of an array, the values of a
	// free-form object.
	more map[string]any
}

// Schema types of the values.
var (
	typeString  = []string{"string"}
	typeBool    = []string{"boolean"}
	typeObject  = []string{"object"}
	typeArray   = []string{"array"}
	stringMap   = map[string]any{"additionalProperties": map[string]any{"type": "string"}}
	objectItems = map[string]any{"items": map[string]any{"type": "object"}}
)

// groupDocs are the comments above groups of values in values.yaml.
var groupDocs = map[string]string{
	"image":               "The manager image.",
	"serviceAccount":      "The manager's ServiceAccount, which every (Cluster)RoleBinding of the chart names.",
	"kubeAPI":             "The manager's client-side limits on its requests to the API server.",
	"podDisruptionBudget": "The manager's PodDisruptionBudget, which comes with the tdset controller's webhooks (2 replicas serve them).",
	"metrics":             "The manager's secure metrics endpoint.",
}

// values lists the chart's values in the order of values.yaml.
func (c *Chart) values() []value {
	resources, _, _ := unstructured.NestedMap(c.managerContainer(), "resources")
	account, _, _ := unstructured.NestedString(c.manager.base.Object, "spec", "template", "spec", "serviceAccountName")
	affinity, _, _ := unstructured.NestedMap(c.manager.base.Object, "spec", "template", "spec", "affinity")
	if affinity == nil {
		affinity = map[string]any{}
	}
	vs := []value{
		{key: "image.repository", doc: "The manager image's repository.", def: c.opts.ImageRepository, types: typeString},
		{key: "image.tag", doc: "The manager image's tag; empty: v<appVersion>.", def: "", types: typeString},
		{key: "image.digest", doc: "The manager image's digest (sha256:...); set, it pins the image as repository:tag@digest, which is pulled by the digest.", def: c.opts.ImageDigest, types: typeString},
		{key: "image.pullPolicy", doc: "The manager image's pull policy.", def: "IfNotPresent", types: typeString, enum: []any{"Always", "IfNotPresent", "Never"}},
		{key: "imagePullSecrets", doc: "Secrets (- name: ...) to pull the manager image with.", def: []any{}, types: typeArray, more: objectItems},
		{key: "replicas", doc: "Manager replicas. Unset: 2 when the tdset controller is on (every replica serves its conversion webhook, behind a PodDisruptionBudget), else 1.",
			types: []string{"integer", "null"}},
		{key: "leaderElection", doc: "Leader election: one replica reconciles, the others wait (and serve webhooks).", def: true, types: typeBool},
		{key: "resources", doc: "The manager container's requests and limits (GOMEMLIMIT follows limits.memory, GOMAXPROCS limits.cpu rounded up).", def: resources, types: typeObject},
		{key: "nodeSelector", doc: "The manager pod's nodeSelector.", def: map[string]any{}, types: typeObject, more: stringMap},
		{key: "tolerations", doc: "The manager pod's tolerations.", def: []any{}, types: typeArray, more: objectItems},
		{key: "affinity", doc: "The manager pod's affinity; the default prefers its replicas on different nodes. Helm merges a value into it: set affinity.podAntiAffinity=null to drop that.", def: affinity, types: typeObject},
		{key: "topologySpreadConstraints", doc: "The manager pod's topologySpreadConstraints, e.g. to spread the replicas over zones.", def: []any{}, types: typeArray, more: objectItems},
		{key: "priorityClassName", doc: "The manager pod's PriorityClass; empty: none.", def: "", types: typeString},
		{key: "podAnnotations", doc: "Annotations added to the manager pod.", def: map[string]any{}, types: typeObject, more: stringMap},
		{key: "podLabels", doc: "Labels added to the manager pod; the Deployment's selector labels are left as they are.", def: map[string]any{}, types: typeObject, more: stringMap},
		{key: "serviceAccount.create", doc: "Render the ServiceAccount; off to run as an existing one, named by serviceAccount.name.", def: true, types: typeBool},
		{key: "serviceAccount.name", doc: "The ServiceAccount's name.", def: account, types: typeString, more: map[string]any{"minLength": 1}},
		{key: "serviceAccount.annotations", doc: "Annotations of the ServiceAccount (when created), such as a cloud IAM role.", def: map[string]any{}, types: typeObject, more: stringMap},
		{key: "watchNamespaces", doc: "The namespace-scoped mode: the namespaces whose custom resources the controllers reconcile (--watch-namespaces). Set, each controller's ClusterRole is bound with a RoleBinding in each of them instead of a ClusterRoleBinding; empty: every namespace.",
			def: []any{}, types: typeArray, more: map[string]any{"items": map[string]any{"type": "string", "pattern": `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, "maxLength": 63}, "uniqueItems": true}},
		{key: "extraArgs", doc: "Flags appended to the manager's (manager --help lists them).", def: []any{}, types: typeArray, more: map[string]any{"items": map[string]any{"type": "string"}}},
		{key: "extraEnv", doc: "Environment variables (EnvVar objects) appended to the manager's.", def: []any{}, types: typeArray, more: objectItems},
		{key: "logLevel", doc: "--zap-log-level: debug, info, error, panic, or an integer above 0 for more verbose debug levels. Unset: info.",
			types: []string{"string", "integer", "null"}},
		{key: "logFormat", doc: "--zap-encoder: json or console. Unset: json.", types: []string{"string", "null"}, enum: []any{"json", "console", nil}},
		{key: "kubeAPI.qps", doc: fmt.Sprintf("--kube-api-qps: requests per second to the API server, shared by every controller; 0 sets no client-side limit. Unset: none when the API server runs API Priority and Fairness, %v otherwise.", manager.FallbackKubeAPIQPS),
			// helm --set passes a fraction (2.5) as a string.
			types: []string{"number", "string", "null"}, more: map[string]any{"minimum": 0, "pattern": `^[0-9]+(\.[0-9]+)?$`}},
		{key: "kubeAPI.burst", doc: fmt.Sprintf("--kube-api-burst: requests allowed at once above the client-side limit. Unset: %v.", manager.FallbackKubeAPIBurst),
			types: []string{"integer", "null"}, more: map[string]any{"minimum": 0}},
		{key: "podDisruptionBudget.enabled", doc: "Render the PodDisruptionBudget (with the tdset controller).", def: true, types: typeBool},
		{key: "podDisruptionBudget.minAvailable", doc: "Replicas (or a percentage) kept through voluntary disruptions such as node drains.",
			def: c.pdbMinAvailable(), types: []string{"integer", "string"}},
		{key: "podDisruptionBudget.maxUnavailable", doc: "Replicas (or a percentage) a disruption may take down; set, it replaces minAvailable.",
			types: []string{"integer", "string", "null"}},
	}
	for _, s := range c.switches {
		if s.Controller == "" {
			continue
		}
		vs = append(vs, value{key: s.Value, doc: s.Doc, def: s.Default, types: typeBool})
		for _, ch := range c.manager.changes {
			if ch.sw.Value != s.Value {
				continue
			}
			for _, set := range ch.settings() {
				vs = append(vs, value{key: "controllers." + s.Controller + "." + set.value, doc: set.doc, def: set.def, types: typeString})
			}
		}
	}
	for _, s := range append(slices.Clone(crdSwitches), c.switches...) {
		if s.Controller == "" {
			vs = append(vs, value{key: s.Value, doc: s.Doc, def: s.Default, types: typeBool})
		}
	}
	vs = append(vs,
		value{key: "metrics.serviceMonitor.labels", doc: "Labels added to the ServiceMonitor, such as the one a Prometheus' serviceMonitorSelector picks.", def: map[string]any{}, types: typeObject, more: stringMap},
		value{key: "metrics.serviceMonitor.interval", doc: "How often Prometheus scrapes (30s); empty: Prometheus' default.", def: "", types: typeString},
		value{key: "metrics.serviceMonitor.scrapeTimeout", doc: "The scrape's timeout (10s); empty: Prometheus' default.", def: "", types: typeString},
		value{key: "prometheusRules.labels", doc: "Labels added to the PrometheusRule, such as the one a Prometheus' ruleSelector picks.", def: map[string]any{}, types: typeObject, more: stringMap},
		value{key: "grafanaDashboards.labels", doc: "Labels added to the dashboards' ConfigMaps, beside grafana_dashboard: \"1\" (the sidecar's default label).", def: map[string]any{}, types: typeObject, more: stringMap},
		value{key: "grafanaDashboards.annotations", doc: "Annotations of the dashboards' ConfigMaps, such as the sidecar's folder annotation (grafana_folder with the sidecar's folderAnnotation set to it).", def: map[string]any{}, types: typeObject, more: stringMap},
		value{key: "grafanaDashboards.namespace", doc: "The namespace of the dashboards' ConfigMaps, for a sidecar that watches only Grafana's own; empty: the release's.", def: "", types: typeString,
			more: map[string]any{"pattern": `^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`, "maxLength": 63}},
		value{key: "namespace.create", doc: "Render the Namespace (with the restricted Pod Security label) as the overlays do. Off for `helm install --create-namespace`; label the namespace pod-security.kubernetes.io/enforce=restricted yourself then.",
			def: false, types: typeBool},
	)
	return vs
}

// pdbMinAvailable is the minAvailable of the overlays' PodDisruptionBudget.
func (c *Chart) pdbMinAvailable() any {
	for _, t := range c.templates {
		if t.obj.GetKind() == "PodDisruptionBudget" {
			v, _, _ := unstructured.NestedFieldNoCopy(t.obj.Object, "spec", "minAvailable")
			return v
		}
	}
	return 1
}

// valueNode is a value, or a group of them, in the tree of values.yaml.
type valueNode struct {
	name     string
	path     string
	leaf     *value
	children []*valueNode
}

// valueTree nests the values by their keys, each group where its first
// value is.
func valueTree(vs []value) *valueNode {
	root := &valueNode{}
	for i := range vs {
		n := root
		for _, part := range strings.Split(vs[i].key, ".") {
			idx := slices.IndexFunc(n.children, func(c *valueNode) bool { return c.name == part })
			if idx < 0 {
				path := part
				if n.path != "" {
					path = n.path + "." + part
				}
				n.children = append(n.children, &valueNode{name: part, path: path})
				idx = len(n.children) - 1
			}
			n = n.children[idx]
		}
		n.leaf = &vs[i]
	}
	return root
}

// valuesYAML is values.yaml, with a comment on every value.
func (c *Chart) valuesYAML() (string, error) {
	var b strings.Builder
	b.WriteString("# Generated by `make helm` from config/; edit config/ and regenerate.\n" +
		"# values.schema.json types every value; README.md lists them.\n")
	var write func(n *valueNode, indent string) error
	write = func(n *valueNode, indent string) error {
		if doc := groupDocs[n.path]; doc != "" || n.leaf != nil {
			if n.leaf != nil {
				doc = n.leaf.doc
			}
			b.WriteString(comment(doc, indent))
		}
		if n.leaf != nil {
			text, err := marshal(map[string]any{n.name: n.leaf.def})
			if err != nil {
				return err
			}
			b.WriteString(indentLines(text, indent))
			return nil
		}
		b.WriteString(indent + n.name + ":\n")
		for _, ch := range n.children {
			if err := write(ch, indent+"  "); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range valueTree(c.values()).children {
		b.WriteString("\n")
		if err := write(n, ""); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// comment is doc as YAML comment lines of about 80 columns.
func comment(doc, indent string) string {
	var b strings.Builder
	line := indent + "#"
	for _, word := range strings.Fields(doc) {
		if len(line)+1+len(word) > 80 && line != indent+"#" {
			b.WriteString(line + "\n")
			line = indent + "#"
		}
		line += " " + word
	}
	return b.String() + line + "\n"
}

// schemaJSON is values.schema.json: every value typed, and no value
// beyond them, so that helm refuses a misspelled or mistyped one.
func (c *Chart) schemaJSON() (string, error) {
	var object func(n *valueNode) map[string]any
	object = func(n *valueNode) map[string]any {
		if n.leaf != nil {
			s := map[string]any{"description": n.leaf.doc}
			if len(n.leaf.types) == 1 {
				s["type"] = n.leaf.types[0]
			} else {
				s["type"] = n.leaf.types
			}
			if n.leaf.enum != nil {
				s["enum"] = n.leaf.enum
			}
			for k, v := range n.leaf.more {
				s[k] = v
			}
			return s
		}
		props := map[string]any{}
		for _, ch := range n.children {
			props[ch.name] = object(ch)
		}
		s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if doc := groupDocs[n.path]; doc != "" {
			s["description"] = doc
		}
		return s
	}
	schema := object(valueTree(c.values()))
	schema["$schema"] = "https://json-schema.org/draft-07/schema#"
	schema["title"] = ChartName + " values"
	b, err := json.MarshalIndent(schema, "", "  ")
	return string(b) + "\n", err
}

// readme is the chart's README.md: how to install it, and a table of
// every value.
func (c *Chart) readme() (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `# %[1]s

<!-- Generated by `+"`make helm`"+` from config/ and hack/release/helmchart; do not edit. -->

One controller-manager hosting the TDSet, Memcached, RedisCluster and WhaleSay
operators; each switched on or off with its CRD and RBAC. With the switches of
an overlay of config/overlays, the chart renders what the overlay does.

`+"```sh"+`
kubectl create namespace %[2]s
kubectl label namespace %[2]s pod-security.kubernetes.io/enforce=restricted
helm install %[1]s dist/chart -n %[2]s
`+"```"+`

values.schema.json types every value; helm refuses any other.

## Values

| Key | Type | Default | Description |
|---|---|---|---|
`, ChartName, overlay.Namespace)
	var rows func(n *valueNode) error
	rows = func(n *valueNode) error {
		if v := n.leaf; v != nil {
			def, err := json.Marshal(v.def)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", v.key, strings.Join(v.types, " or "), def, strings.ReplaceAll(v.doc, "|", `\|`))
		}
		for _, ch := range n.children {
			if err := rows(ch); err != nil {
				return err
			}
		}
		return nil
	}
	if err := rows(valueTree(c.values())); err != nil {
		return "", err
	}
	return b.String(), nil
}

// managerContainer is the manager's container in config/manager.
func (c *Chart) managerContainer() map[string]any {
	ctr, err := container(c.manager.base)
	if err != nil {
		return nil
	}
	return ctr
}
