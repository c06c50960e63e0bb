package overlay

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MetricsNamespaceLabel is the namespace label (with the value "enabled")
// that the network-policy component admits to the metrics port.
const MetricsNamespaceLabel = "metrics"

// objects are the kinds of a build that the ingress check reads.
type objects struct {
	deployments []appsv1.Deployment
	services    map[string]corev1.Service
	policies    []networkingv1.NetworkPolicy
	// webhookServices are the Services the API server calls webhooks
	// through (admission webhooks and CRD conversion), each with the port
	// it calls.
	webhookServices []serviceRef
}

// serviceRef is a webhook's clientConfig.service.
type serviceRef struct {
	namespace, name string
	port            int32
}

// ManagerIngressViolations checks the NetworkPolicies of a build that
// isolates the manager's pods: some policy selecting them admits TCP to
// every webhook port (the targetPort, resolved against the pod's ports, of
// each Service a webhook configuration or CRD conversion calls) from any
// source, and the metrics port (the container port named metrics) is
// admitted, but only from namespaces labelled metrics=enabled. It returns
// the ports it checked ("webhook 9443", "metrics 8443") and what is wrong.
func ManagerIngressViolations(objs []*unstructured.Unstructured) (checked, violations []string, err error) {
	o, err := decodeIngress(objs)
	if err != nil {
		return nil, nil, err
	}
	if len(o.deployments) == 0 {
		return nil, []string{"no Deployment"}, nil
	}
	for _, d := range o.deployments {
		pod := d.Spec.Template
		rules := o.ingressRules(d.Namespace, pod.Labels)
		if len(rules) == 0 {
			violations = append(violations, fmt.Sprintf("Deployment %s: no NetworkPolicy isolates its pods for ingress", d.Name))
			continue
		}
		for _, ref := range o.webhookServices {
			port, ok, err := o.webhookPort(ref, pod)
			if err != nil {
				violations = append(violations, err.Error())
			}
			if !ok {
				continue
			}
			checked = append(checked, fmt.Sprintf("webhook %d", port))
			if !slices.ContainsFunc(rules, func(r networkingv1.NetworkPolicyIngressRule) bool {
				return len(r.From) == 0 && admitsPort(r, pod.Spec, port)
			}) {
				violations = append(violations, fmt.Sprintf("Deployment %s: no NetworkPolicy admits the webhook port %d (Service %s/%s) from every source", d.Name, port, ref.namespace, ref.name))
			}
		}
		metrics, ok := namedPort(pod.Spec, "metrics")
		if !ok {
			continue
		}
		checked = append(checked, fmt.Sprintf("metrics %d", metrics))
		admitted := false
		for _, r := range rules {
			if !admitsPort(r, pod.Spec, metrics) {
				continue
			}
			admitted = true
			if !fromMetricsNamespacesOnly(r) {
				violations = append(violations, fmt.Sprintf("Deployment %s: the metrics port %d is admitted from %v, not only from namespaces labelled %s=enabled", d.Name, metrics, r.From, MetricsNamespaceLabel))
			}
		}
		if !admitted {
			violations = append(violations, fmt.Sprintf("Deployment %s: no NetworkPolicy admits the metrics port %d", d.Name, metrics))
		}
	}
	return checked, violations, nil
}

// decodeIngress reads the objects the ingress check needs.
func decodeIngress(objs []*unstructured.Unstructured) (*objects, error) {
	o := &objects{services: map[string]corev1.Service{}}
	for _, u := range objs {
		var err error
		switch u.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			err = fromUnstructured(u, &d)
			o.deployments = append(o.deployments, d)
		case "Service":
			var s corev1.Service
			err = fromUnstructured(u, &s)
			o.services[s.Namespace+"/"+s.Name] = s
		case "NetworkPolicy":
			var p networkingv1.NetworkPolicy
			err = fromUnstructured(u, &p)
			o.policies = append(o.policies, p)
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			// Both kinds' webhooks have the same clientConfig.
			var c struct {
				Webhooks []struct {
					ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`
				} `json:"webhooks"`
			}
			err = fromUnstructured(u, &c)
			for _, w := range c.Webhooks {
				o.addWebhook(w.ClientConfig.Service)
			}
		case "CustomResourceDefinition":
			var c apiextensionsv1.CustomResourceDefinition
			err = fromUnstructured(u, &c)
			if conv := c.Spec.Conversion; conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil {
				if s := conv.Webhook.ClientConfig.Service; s != nil {
					o.addWebhook(&admissionregistrationv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Port: s.Port})
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Key(u), err)
		}
	}
	return o, nil
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// addWebhook records the Service a webhook calls (none for a URL).
func (o *objects) addWebhook(s *admissionregistrationv1.ServiceReference) {
	if s == nil {
		return
	}
	ref := serviceRef{namespace: s.Namespace, name: s.Name, port: 443}
	if s.Port != nil {
		ref.port = *s.Port
	}
	if !slices.Contains(o.webhookServices, ref) {
		o.webhookServices = append(o.webhookServices, ref)
	}
}

// ingressRules are the ingress rules of the policies that select the pod
// labels in namespace; none means the pods are not isolated for ingress.
func (o *objects) ingressRules(namespace string, podLabels map[string]string) []networkingv1.NetworkPolicyIngressRule {
	var rules []networkingv1.NetworkPolicyIngressRule
	for _, p := range o.policies {
		if p.Namespace != namespace || !matches(&p.Spec.PodSelector, podLabels) {
			continue
		}
		if len(p.Spec.PolicyTypes) > 0 && !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			continue
		}
		rules = append(rules, p.Spec.Ingress...)
	}
	return rules
}

// webhookPort is the pod's port that ref's Service sends to; ok is false
// when the Service does not select the pod.
func (o *objects) webhookPort(ref serviceRef, pod corev1.PodTemplateSpec) (port int32, ok bool, err error) {
	svc, found := o.services[ref.namespace+"/"+ref.name]
	if !found {
		return 0, false, fmt.Errorf("a webhook calls Service %s/%s, which the build lacks", ref.namespace, ref.name)
	}
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		return 0, false, nil
	}
	for _, p := range svc.Spec.Ports {
		if p.Port != ref.port {
			continue
		}
		switch {
		case p.TargetPort.Type == intstr.String:
			if n, ok := namedPort(pod.Spec, p.TargetPort.StrVal); ok {
				return n, true, nil
			}
			return 0, false, fmt.Errorf("webhook Service %s/%s: no container port named %s", ref.namespace, ref.name, p.TargetPort.StrVal)
		case p.TargetPort.IntVal != 0:
			return p.TargetPort.IntVal, true, nil
		}
		return p.Port, true, nil
	}
	return 0, false, fmt.Errorf("webhook Service %s/%s has no port %d that its webhook calls", ref.namespace, ref.name, ref.port)
}

func matches(selector *metav1.LabelSelector, podLabels map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(selector)
	return err == nil && s.Matches(labels.Set(podLabels))
}

// namedPort is the number of the pod's container port called name.
func namedPort(spec corev1.PodSpec, name string) (int32, bool) {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

// admitsPort says whether the rule admits TCP to port; a named port in the
// rule is resolved against the pod's, as the network plugin does.
func admitsPort(r networkingv1.NetworkPolicyIngressRule, spec corev1.PodSpec, port int32) bool {
	if len(r.Ports) == 0 {
		return true
	}
	for _, p := range r.Ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if p.Port == nil {
			return true
		}
		first := p.Port.IntVal
		if p.Port.Type == intstr.String {
			first, _ = namedPort(spec, p.Port.StrVal)
		}
		last := first
		if p.EndPort != nil {
			last = *p.EndPort
		}
		if first <= port && port <= last {
			return true
		}
	}
	return false
}

// fromMetricsNamespacesOnly says whether every source the rule admits is
// a namespace labelled metrics=enabled (any pod in it).
func fromMetricsNamespacesOnly(r networkingv1.NetworkPolicyIngressRule) bool {
	if len(r.From) == 0 {
		return false
	}
	for _, peer := range r.From {
		if peer.IPBlock != nil || peer.PodSelector != nil || peer.NamespaceSelector == nil {
			return false
		}
		s := peer.NamespaceSelector
		if len(s.MatchExpressions) > 0 || len(s.MatchLabels) != 1 || s.MatchLabels[MetricsNamespaceLabel] != "enabled" {
			return false
		}
	}
	return true
}
