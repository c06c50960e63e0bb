package helmchart

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// Switch is one boolean of the chart's values and the kustomize components
// it stands for. Turning a switch on renders what adding its components to
// config/manager adds, so that each overlay has a matching set of switches.
type Switch struct {
	// Value is the path in values.yaml, such as controllers.tdset.enabled.
	Value string
	// Components are directories under config/components; none for the
	// switches of Helm's own handling (crdSwitches).
	Components []string
	// Requires are switches this one only has effect with (cert-manager
	// issues the certificate of the webhooks that the tdset controller
	// brings).
	Requires []string
	// Controller is the controller's name when the switch turns one on.
	Controller string
	// Default is the switch's value in values.yaml.
	Default bool
	// Doc is the comment above the value in values.yaml.
	Doc string
}

// Condition is the template expression that is true when s is on together
// with the switches it requires.
func (s Switch) Condition() string {
	terms := make([]string, 0, len(s.Requires)+1)
	for _, r := range s.Requires {
		terms = append(terms, ".Values."+r)
	}
	terms = append(terms, ".Values."+s.Value)
	if len(terms) == 1 {
		return terms[0]
	}
	return "and " + strings.Join(terms, " ")
}

// optionalSwitches are the chart's switches for config/components that no
// overlay turns on by default (config/default lists them commented out).
var optionalSwitches = []Switch{
	{Value: "webhook.certManager", Components: []string{"cert-manager"}, Requires: []string{"controllers.tdset.enabled"},
		Doc: "cert-manager issues the webhook server's certificate and injects its CA (needs cert-manager in the cluster); otherwise the manager does."},
	{Value: "metrics.serviceMonitor.enabled", Components: []string{"prometheus"},
		Doc: "A ServiceMonitor (Prometheus Operator) for the manager's secure metrics endpoint."},
	{Value: "prometheusRules.enabled", Components: []string{"prometheus-rules"},
		Doc: "A PrometheusRule (Prometheus Operator) with the alerts for the manager, its RedisClusters and its TDSets, each with a runbook in docs/runbooks."},
	{Value: "grafanaDashboards.enabled", Components: []string{"grafana-dashboards"},
		Doc: "The Grafana dashboards (the manager's and one per kind) as ConfigMaps labelled grafana_dashboard: \"1\", which the Grafana sidecar of kube-prometheus-stack loads."},
	{Value: "networkPolicy", Components: []string{"network-policy"},
		Doc: "NetworkPolicies: only namespaces labelled metrics=enabled reach the metrics port; the webhook port (tdset) takes the API server's calls from anywhere."},
	{Value: "apiPriority.enabled", Components: []string{"api-priority"},
		Doc: "API Priority and Fairness: a priority level of the manager's own below users' and other service accounts', its requests queued fairly by namespace, and its leader-election Lease on the built-in leader-election level."},
}

// crdSwitches decide what Helm does with the CRDs, which kubectl never
// deletes unasked but Helm deletes with a release (helm uninstall) or when
// it stops rendering them (an upgrade that switches a controller off, a
// rollback to a release without it): and deleting a CRD deletes every
// custom resource of its kind. As cert-manager's crds.keep and KEDA's
// crds.install.
var (
	crdInstall = Switch{Value: "crds.install", Default: true,
		Doc: "Render the CRDs of the controllers switched on. Off when they are installed another way (kubectl apply -k config/crd)."}
	crdKeep = Switch{Value: "crds.keep", Default: true,
		Doc: "Annotate the CRDs helm.sh/resource-policy: keep, so that helm uninstall, a rollback or a controller switched off leaves them and their custom resources in the cluster (remove them with kubectl delete crd)."}
	crdSwitches = []Switch{crdInstall, crdKeep}
)

// Switches lists the chart's switches: one per controller component of
// config/default, in its order (which is the order of the manager's
// --controllers flags), then the optional components.
func Switches(root string) ([]Switch, error) {
	controllers, err := DefaultControllers(root)
	if err != nil {
		return nil, err
	}
	out := make([]Switch, 0, len(controllers)+len(optionalSwitches))
	for _, c := range controllers {
		out = append(out, Switch{
			Value: "controllers." + c + ".enabled", Components: []string{c}, Controller: c, Default: true,
			Doc: "The " + c + " controller: its --controllers flag, CRD, RBAC and operand image together.",
		})
	}
	return append(out, optionalSwitches...), nil
}

// DefaultControllers lists the controllers config/default turns on, in the
// order of its components: those components of config/components that are
// named like a package under controllers/.
func DefaultControllers(root string) ([]string, error) {
	components, err := overlay.Components(filepath.Join(root, "config", "default"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range components {
		if st, err := os.Stat(filepath.Join(root, "controllers", name)); err == nil && st.IsDir() {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("config/default turns on no controller component")
	}
	return out, nil
}

// SwitchesFor returns the values (as --set pairs) that make the chart
// render the kustomization of config/manager with the given components:
// each switch is on exactly when its components are among them.
func SwitchesFor(switches []Switch, components []string) map[string]bool {
	set := map[string]bool{}
	for _, s := range switches {
		on := true
		for _, c := range s.Components {
			on = on && slices.Contains(components, c)
		}
		set[s.Value] = on
	}
	return set
}
