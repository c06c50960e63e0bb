package webhookcert

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchOp is one operation of a JSON patch (RFC 6902).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// inject puts bundle into every named CRD and webhook configuration whose
// caBundle differs, so that a steady state costs no write. A missing object
// is skipped: its watch syncs again when it appears.
func (c *Certificates) inject(ctx context.Context, bundle []byte) error {
	var errs []error
	for _, name := range c.opts.ConversionCRDs {
		if err := c.injectCRD(ctx, name, bundle); err != nil {
			errs = append(errs, fmt.Errorf("injecting the CA bundle into CRD %s: %w", name, err))
		}
	}
	for _, name := range c.opts.ValidatingWebhookConfigurations {
		if err := c.injectVWC(ctx, name, bundle); err != nil {
			errs = append(errs, fmt.Errorf("injecting the CA bundle into ValidatingWebhookConfiguration %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Certificates) injectCRD(ctx context.Context, name string, bundle []byte) error {
	crd := newCRD()
	if err := c.watch.crds[name].Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return client.IgnoreNotFound(err)
	}
	// Only the Webhook strategy has a clientConfig; None must stay as it is.
	if strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); strategy != "Webhook" {
		return nil
	}
	current, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	if have, err := base64.StdEncoding.DecodeString(current); err == nil && bytes.Equal(have, bundle) {
		return nil
	}
	// The test makes a stale cache fail the patch rather than give a CRD
	// whose strategy someone just changed a clientConfig it may not have.
	ops := []patchOp{
		{Op: "test", Path: "/spec/conversion/strategy", Value: "Webhook"},
		{Op: "add", Path: "/spec/conversion/webhook/clientConfig/caBundle", Value: bundle},
	}
	if err := c.patch(ctx, crd, ops); err != nil {
		return err
	}
	c.log.Info("injected the CA bundle", "customResourceDefinition", name, "cas", countCerts(bundle))
	return nil
}

func (c *Certificates) injectVWC(ctx context.Context, name string, bundle []byte) error {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.watch.vwcs[name].Get(ctx, client.ObjectKey{Name: name}, vwc); err != nil {
		return client.IgnoreNotFound(err)
	}
	var ops []patchOp
	var changed []string
	for i, wh := range vwc.Webhooks {
		if bytes.Equal(wh.ClientConfig.CABundle, bundle) {
			continue
		}
		// By index, each guarded by the webhook's name: a list that changed
		// under a stale cache fails the patch instead of taking the bundle
		// at the wrong place.
		at := "/webhooks/" + strconv.Itoa(i)
		ops = append(ops,
			patchOp{Op: "test", Path: at + "/name", Value: wh.Name},
			patchOp{Op: "add", Path: at + "/clientConfig/caBundle", Value: bundle})
		changed = append(changed, wh.Name)
	}
	if len(ops) == 0 {
		return nil
	}
	if err := c.patch(ctx, vwc, ops); err != nil {
		return err
	}
	c.log.Info("injected the CA bundle", "validatingWebhookConfiguration", name, "webhooks", changed, "cas", countCerts(bundle))
	return nil
}

func (c *Certificates) patch(ctx context.Context, obj client.Object, ops []patchOp) error {
	raw, err := json.Marshal(ops) // a []byte value becomes base64, as caBundle is on the wire
	if err != nil {
		return err
	}
	return c.client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, raw))
}

func countCerts(bundle []byte) int {
	return bytes.Count(bundle, []byte("-----BEGIN CERTIFICATE-----"))
}
