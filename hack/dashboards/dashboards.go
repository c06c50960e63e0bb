// Package dashboards describes the project's Grafana dashboards, one per
// kind and one for the manager, and writes them as the JSON Grafana
// imports, with the kustomize component that ships them as ConfigMaps
// (config/components/grafana-dashboards). Describing the panels in Go
// keeps them alike: every dashboard has the same data source, namespace
// and name variables, every panel reads its data source from the
// variable, and the tests hold every expression to the metrics that
// exist. make generate writes the files; make verify fails when the
// committed ones are stale.
package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Dir is the component's folder, relative to the repository root.
const Dir = "config/components/grafana-dashboards"

// SidecarLabel is the label kube-prometheus-stack's Grafana sidecar looks
// for on ConfigMaps to load the dashboards they hold.
const SidecarLabel = "grafana_dashboard"

// Dashboard is one dashboard.
type Dashboard struct {
	// File is the JSON file's name without .json, and the ConfigMap's
	// name after grafana-dashboard-.
	File string
	// UID is Grafana's stable identifier, which links and imports keep.
	UID string
	// Title is the dashboard's title.
	Title string
	// Description says what it shows.
	Description string
	// Variables are the template variables after the data source's.
	Variables []Variable
	// Rows are the panels, by topic.
	Rows []Row
}

// Variable is a template variable whose values Prometheus lists.
type Variable struct {
	// Name is the variable's name, $Name in expressions.
	Name string
	// Label is what Grafana shows beside it.
	Label string
	// Selector is the series whose values of Name's label are offered.
	Selector string
	// LabelName is the label whose values are offered.
	LabelName string
}

// Query is Grafana's label_values query of the variable.
func (v Variable) Query() string {
	return fmt.Sprintf("label_values(%s, %s)", v.Selector, v.LabelName)
}

// Row is a titled group of panels.
type Row struct {
	Title  string
	Panels []Panel
}

// Panel is one graph or single value.
type Panel struct {
	Title       string
	Description string
	// Unit is Grafana's unit id (short, bytes, s, percentunit, reqps, ...).
	Unit string
	// Stat shows the last value instead of a graph.
	Stat bool
	// Width is in Grafana's 24 columns; 12 when zero.
	Width   int
	Targets []Target
}

// Target is one PromQL expression of a panel.
type Target struct {
	Expr   string
	Legend string
}

// Exprs are every PromQL expression of d: its panels' and, as a selector
// each, its variables'.
func (d Dashboard) Exprs() []string {
	var out []string
	for _, v := range d.Variables {
		out = append(out, v.Selector)
	}
	for _, r := range d.Rows {
		for _, p := range r.Panels {
			for _, t := range p.Targets {
				out = append(out, t.Expr)
			}
		}
	}
	return out
}

// datasource is how every panel, target and variable names its data
// source: the dashboard's variable.
var datasource = map[string]any{"type": "prometheus", "uid": "${datasource}"}

// JSON is the dashboard as Grafana imports it.
func (d Dashboard) JSON() ([]byte, error) {
	vars := []any{map[string]any{
		"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
		"current": map[string]any{}, "hide": 0, "refresh": 1, "regex": "", "options": []any{},
	}}
	for _, v := range d.Variables {
		vars = append(vars, map[string]any{
			"name": v.Name, "label": v.Label, "type": "query", "datasource": datasource,
			"query": v.Query(), "definition": v.Query(),
			"refresh": 2, "sort": 1, "multi": true, "includeAll": true, "allValue": ".*",
			"current": map[string]any{}, "hide": 0, "regex": "", "options": []any{},
		})
	}
	var panels []any
	id, y := 1, 0
	for _, r := range d.Rows {
		panels = append(panels, map[string]any{
			"type": "row", "title": r.Title, "id": id, "collapsed": false, "panels": []any{},
			"gridPos": map[string]any{"h": 1, "w": 24, "x": 0, "y": y},
		})
		id++
		y++
		x, rowHeight := 0, 0
		for _, p := range r.Panels {
			w, h := p.Width, 8
			if w == 0 {
				w = 12
			}
			if p.Stat {
				h = 4
			}
			if x+w > 24 {
				x, y = 0, y+rowHeight
				rowHeight = 0
			}
			panels = append(panels, p.json(id, x, y, w, h))
			id++
			x += w
			rowHeight = max(rowHeight, h)
		}
		y += rowHeight
	}
	dash := map[string]any{
		"uid": d.UID, "title": d.Title, "description": d.Description,
		"tags": []string{"multi-operator"}, "editable": true, "graphTooltip": 1,
		"schemaVersion": 39, "version": 1, "refresh": "30s", "timezone": "",
		"time":        map[string]any{"from": "now-6h", "to": "now"},
		"annotations": map[string]any{"list": []any{}},
		"templating":  map[string]any{"list": vars},
		"panels":      panels,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(dash); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// json is the panel with its place on the grid.
func (p Panel) json(id, x, y, w, h int) map[string]any {
	var targets []any
	for i, t := range p.Targets {
		targets = append(targets, map[string]any{
			"datasource": datasource, "expr": t.Expr, "legendFormat": t.Legend,
			"refId": string(rune('A' + i)), "range": !p.Stat, "instant": p.Stat,
		})
	}
	unit := p.Unit
	if unit == "" {
		unit = "short"
	}
	panel := map[string]any{
		"id": id, "title": p.Title, "description": p.Description, "datasource": datasource,
		"gridPos":     map[string]any{"h": h, "w": w, "x": x, "y": y},
		"fieldConfig": map[string]any{"defaults": map[string]any{"unit": unit}, "overrides": []any{}},
		"targets":     targets,
	}
	if p.Stat {
		panel["type"] = "stat"
		panel["options"] = map[string]any{
			"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
			"colorMode":     "value", "graphMode": "none", "textMode": "auto",
		}
	} else {
		panel["type"] = "timeseries"
		panel["options"] = map[string]any{
			"legend":  map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
		}
	}
	return panel
}

// ConfigMapName is the name of the ConfigMap that holds d, before an
// overlay's prefix.
func (d Dashboard) ConfigMapName() string { return "grafana-dashboard-" + d.File }

// Files are the component's files, by path relative to the repository
// root: a JSON file per dashboard and the kustomization that makes a
// ConfigMap of each.
func Files(all []Dashboard) (map[string][]byte, error) {
	files := map[string][]byte{}
	var k strings.Builder
	k.WriteString(`# Generated by make generate (hack/dashboards); do not edit.
# Optional: the Grafana dashboards, one per kind and one for the manager,
# as ConfigMaps labelled grafana_dashboard: "1", which the Grafana sidecar
# of kube-prometheus-stack loads from every namespace it watches. Each
# dashboard chooses its Prometheus data source, namespace and name (or
# pod) in variables. The JSON files import into any Grafana as they are.
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
configMapGenerator:
`)
	for _, d := range all {
		data, err := d.JSON()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.File, err)
		}
		files[filepath.Join(Dir, d.File+".json")] = data
		fmt.Fprintf(&k, `- name: %s
  namespace: system
  files:
  - %s.json
  options:
    disableNameSuffixHash: true
    labels:
      %s: "1"
      app.kubernetes.io/name: multi-operator
      app.kubernetes.io/managed-by: kustomize
`, d.ConfigMapName(), d.File, SidecarLabel)
	}
	files[filepath.Join(Dir, "kustomization.yaml")] = []byte(k.String())
	return files, nil
}
