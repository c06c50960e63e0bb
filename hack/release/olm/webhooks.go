package olm

import (
	"fmt"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/multi-operator/multi-operator/hack/release/overlay"
)

// serviceKey names a Service as a webhook's clientConfig does.
func serviceKey(namespace, name string) string { return namespace + "/" + name }

// webhookServiceKeys are the Services that webhook configurations and CRD
// conversions call: OLM replaces them with its own.
func webhookServiceKeys(objs []*unstructured.Unstructured) (map[string]bool, error) {
	keys := map[string]bool{}
	for _, o := range objs {
		cfgs, err := clientConfigs(o)
		if err != nil {
			return nil, err
		}
		for _, cfg := range cfgs {
			if ref := cfg.Service; ref != nil {
				keys[serviceKey(ref.Namespace, ref.Name)] = true
			}
		}
	}
	return keys, nil
}

// clientConfigs are the client configurations of o's webhooks: those of a
// webhook configuration, or a CRD's conversion webhook at a Service. An
// object that does not decode as its kind is an error, not one without
// webhooks.
func clientConfigs(o *unstructured.Unstructured) ([]admissionregistrationv1.WebhookClientConfig, error) {
	var out []admissionregistrationv1.WebhookClientConfig
	switch o.GetKind() {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		// Both kinds share the webhooks' clientConfig field.
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, vwc); err != nil {
			return nil, fmt.Errorf("%s: %w", overlay.Key(o), err)
		}
		for _, wh := range vwc.Webhooks {
			out = append(out, wh.ClientConfig)
		}
	case "CustomResourceDefinition":
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", overlay.Key(o), err)
		}
		if c := crd.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil && c.Webhook.ClientConfig.Service != nil {
			ref := c.Webhook.ClientConfig.Service
			out = append(out, admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: ref.Namespace, Name: ref.Name, Path: ref.Path, Port: ref.Port,
			}})
		}
	}
	return out, nil
}

// webhookTarget is where OLM must send a webhook's calls: the Deployment
// behind the overlay's Service, the container port the Service targets and
// the path.
type webhookTarget struct {
	deployment string
	port       int32
	path       *string
}

// resolver finds webhook targets among the overlay's objects.
type resolver struct {
	objs        []*unstructured.Unstructured
	deployments []*unstructured.Unstructured
}

// target resolves a clientConfig. OLM calls a Deployment's pods through a
// Service of its own, so the overlay's Service must select exactly one
// Deployment and target a port of its pods.
func (r resolver) target(cfg admissionregistrationv1.WebhookClientConfig) (webhookTarget, error) {
	ref := cfg.Service
	if ref == nil {
		return webhookTarget{}, fmt.Errorf("a webhook called at a URL cannot be installed by OLM")
	}
	svc, err := r.service(ref.Namespace, ref.Name)
	if err != nil {
		return webhookTarget{}, err
	}
	port := ptr.Deref(ref.Port, 443)
	for _, p := range svc.Spec.Ports {
		if p.Port != port {
			continue
		}
		dep, err := r.selected(svc)
		if err != nil {
			return webhookTarget{}, err
		}
		n, err := containerPort(dep, p.TargetPort)
		return webhookTarget{deployment: dep.Name, port: n, path: ref.Path}, err
	}
	return webhookTarget{}, fmt.Errorf("the Service %s/%s has no port %d", ref.Namespace, ref.Name, port)
}

// service finds a Service of the overlay.
func (r resolver) service(namespace, name string) (*corev1.Service, error) {
	for _, o := range r.objs {
		if o.GetKind() == "Service" && o.GetNamespace() == namespace && o.GetName() == name {
			svc := &corev1.Service{}
			return svc, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, svc)
		}
	}
	return nil, fmt.Errorf("no Service %s/%s in the overlay for a webhook", namespace, name)
}

// selected is the one Deployment whose pods svc selects.
func (r resolver) selected(svc *corev1.Service) (*appsv1.Deployment, error) {
	var found []*appsv1.Deployment
	for _, o := range r.deployments {
		dep := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, dep); err != nil {
			return nil, err
		}
		if len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) {
			found = append(found, dep)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("the Service %s/%s selects %d Deployments, not one", svc.Namespace, svc.Name, len(found))
	}
	return found[0], nil
}

// containerPort is the number of the container port target names.
func containerPort(dep *appsv1.Deployment, target intstr.IntOrString) (int32, error) {
	if target.Type == intstr.Int {
		return target.IntVal, nil
	}
	for _, c := range dep.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == target.StrVal {
				return p.ContainerPort, nil
			}
		}
	}
	return 0, fmt.Errorf("the Deployment %s has no container port named %q", dep.Name, target.StrVal)
}

// webhookDefinitions are the CSV's webhookdefinitions: every webhook of
// the overlay's configurations, then one ConversionWebhook per CRD that
// converts through a webhook.
func (s *split) webhookDefinitions(objs []*unstructured.Unstructured) ([]v1alpha1.WebhookDescription, error) {
	r := resolver{objs: objs, deployments: s.deployments}
	var out []v1alpha1.WebhookDescription
	for _, o := range s.webhookConfigs {
		defs, err := r.admission(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", overlay.Key(o), err)
		}
		out = append(out, defs...)
	}
	for _, o := range s.crds {
		def, ok, err := r.conversion(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", overlay.Key(o), err)
		}
		if ok {
			out = append(out, def)
		}
	}
	return out, nil
}

// admission turns a webhook configuration into webhookdefinitions.
func (r resolver) admission(o *unstructured.Unstructured) ([]v1alpha1.WebhookDescription, error) {
	if o.GetKind() == "MutatingWebhookConfiguration" {
		return nil, fmt.Errorf("mutating webhooks are not packaged yet")
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, vwc); err != nil {
		return nil, err
	}
	var out []v1alpha1.WebhookDescription
	for _, wh := range vwc.Webhooks {
		if wh.NamespaceSelector != nil {
			// OLM sets it to the OperatorGroup's namespaces.
			return nil, fmt.Errorf("webhook %s: OLM replaces a namespaceSelector", wh.Name)
		}
		t, err := r.target(wh.ClientConfig)
		if err != nil {
			return nil, fmt.Errorf("webhook %s: %w", wh.Name, err)
		}
		out = append(out, t.describe(v1alpha1.WebhookDescription{
			GenerateName:            wh.Name,
			Type:                    v1alpha1.ValidatingAdmissionWebhook,
			Rules:                   wh.Rules,
			FailurePolicy:           wh.FailurePolicy,
			MatchPolicy:             wh.MatchPolicy,
			ObjectSelector:          wh.ObjectSelector,
			SideEffects:             wh.SideEffects,
			TimeoutSeconds:          wh.TimeoutSeconds,
			AdmissionReviewVersions: wh.AdmissionReviewVersions,
		}))
	}
	return out, nil
}

// conversion is the ConversionWebhook of a CRD whose conversion strategy
// is Webhook; false for any other CRD.
func (r resolver) conversion(o *unstructured.Unstructured) (v1alpha1.WebhookDescription, bool, error) {
	cfgs, err := clientConfigs(o)
	if err != nil || len(cfgs) == 0 {
		return v1alpha1.WebhookDescription{}, false, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd); err != nil {
		return v1alpha1.WebhookDescription{}, false, err
	}
	t, err := r.target(cfgs[0])
	if err != nil {
		return v1alpha1.WebhookDescription{}, false, err
	}
	return t.describe(v1alpha1.WebhookDescription{
		GenerateName:            crd.Spec.Names.Plural + "-conversion." + crd.Spec.Group,
		Type:                    v1alpha1.ConversionWebhook,
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: crd.Spec.Conversion.Webhook.ConversionReviewVersions,
		ConversionCRDs:          []string{crd.Name},
	}), true, nil
}

// describe completes d with where OLM sends the calls. containerPort is
// the port of OLM's Service and targetPort the pod's; both are the
// container's port, because OLM releases before targetPort existed send
// the calls to containerPort on the pod too.
func (t webhookTarget) describe(d v1alpha1.WebhookDescription) v1alpha1.WebhookDescription {
	d.DeploymentName = t.deployment
	d.ContainerPort = t.port
	d.TargetPort = ptr.To(intstr.FromInt32(t.port))
	d.WebhookPath = t.path
	return d
}
