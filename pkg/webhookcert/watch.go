package webhookcert

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The RBAC this package needs, with the names the default deployment
// gives (config/manager: namespace multi-operator-system, namePrefix
// multi-operator-). Every list and watch carries a metadata.name field
// selector, which the API server authorizes against resourceNames; create
// is the one verb RBAC cannot restrict by name, as the name of a new object
// is not part of the request's path. get (secrets only) re-reads the Secret
// past a stale cache after a conflict; the CRDs and webhook configurations
// are only read from their caches.
//
// +kubebuilder:rbac:groups="",namespace=multi-operator-system,resources=secrets,verbs=get;list;watch;update,resourceNames=multi-operator-webhook-server-cert
// +kubebuilder:rbac:groups="",namespace=multi-operator-system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=list;watch;patch,resourceNames=tdsets.schedule.rs
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=list;watch;patch,resourceNames=multi-operator-validating-webhook-configuration

// cacheSyncTimeout bounds the wait for the first list of the watched
// objects: past it, the runnable fails and with it the manager, which makes
// missing RBAC visible instead of a replica that stays unready in silence.
const cacheSyncTimeout = 2 * time.Minute

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// watches read the named objects from caches of their own, one per
// object: a field selector matches one name, and a cache holds one informer
// per kind.
type watches struct {
	secret client.Reader
	crds   map[string]client.Reader
	vwcs   map[string]client.Reader
}

// newCRD is an empty CRD to read into. CRDs are read as unstructured, so
// that the manager's scheme need not know apiextensions.k8s.io.
func newCRD() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crdGVK)
	return u
}

// startWatches builds and starts the caches, each calling poke on every
// change of its object, and waits for their first list.
func (c *Certificates) startWatches(ctx context.Context) (*watches, error) {
	w := &watches{crds: map[string]client.Reader{}, vwcs: map[string]client.Reader{}}
	var all []cache.Cache
	add := func(obj client.Object, name, namespace string) (cache.Cache, error) {
		by := cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", name)}
		if namespace != "" {
			by.Namespaces = map[string]cache.Config{namespace: {}}
		}
		ca, err := cache.New(c.mgr.GetConfig(), cache.Options{
			HTTPClient: c.mgr.GetHTTPClient(),
			Scheme:     c.mgr.GetScheme(),
			Mapper:     c.mgr.GetRESTMapper(),
			ByObject:   map[client.Object]cache.ByObject{obj: by},
			// A read of any other kind would start a cluster-wide informer.
			ReaderFailOnMissingInformer: true,
			DefaultTransform:            cache.TransformStripManagedFields(),
		})
		if err != nil {
			return nil, err
		}
		inf, err := ca.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.poke() },
			UpdateFunc: func(any, any) { c.poke() },
			DeleteFunc: func(any) { c.poke() },
		}); err != nil {
			return nil, err
		}
		all = append(all, ca)
		return ca, nil
	}
	var err error
	if w.secret, err = add(&corev1.Secret{}, c.opts.SecretName, c.opts.Namespace); err != nil {
		return nil, err
	}
	if c.opts.Rotate {
		for _, name := range c.opts.ConversionCRDs {
			if w.crds[name], err = add(newCRD(), name, ""); err != nil {
				return nil, err
			}
		}
		for _, name := range c.opts.ValidatingWebhookConfigurations {
			if w.vwcs[name], err = add(&admissionregistrationv1.ValidatingWebhookConfiguration{}, name, ""); err != nil {
				return nil, err
			}
		}
	}
	for _, ca := range all {
		go func() {
			if err := ca.Start(ctx); err != nil {
				c.log.Error(err, "a cache of the webhook certificate's objects stopped")
			}
		}()
	}
	syncCtx, cancel := context.WithTimeout(ctx, cacheSyncTimeout)
	defer cancel()
	for _, ca := range all {
		if !ca.WaitForCacheSync(syncCtx) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("the watches of Secret %s/%s and of the CA bundle's targets did not sync within %s: check the manager's RBAC", c.opts.Namespace, c.opts.SecretName, cacheSyncTimeout)
		}
	}
	return w, nil
}

// runnable runs the certificates' loop in the manager.
type runnable struct{ c *Certificates }

// NeedLeaderElection is false: every replica serves the webhooks, so every
// replica needs the certificate.
func (runnable) NeedLeaderElection() bool { return false }

// Start watches, then syncs on every change and at the next renewal time
// until ctx ends. Sync errors are retried with backoff, never returned: a
// replica that keeps serving its current certificate is better than a
// manager that stops.
func (r runnable) Start(ctx context.Context) error {
	c := r.c
	w, err := c.startWatches(ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	c.watch = w
	const minBackoff, maxBackoff = 100 * time.Millisecond, time.Minute
	backoff := minBackoff
	for {
		wake, err := c.sync(ctx)
		c.syncs.Add(1)
		var timer <-chan time.Time
		var stop func() bool
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			c.log.Error(err, "syncing the webhook certificate; retrying", "after", backoff)
			t := time.NewTimer(backoff)
			timer, stop = t.C, t.Stop
			backoff = min(2*backoff, maxBackoff)
		case !wake.IsZero():
			backoff = minBackoff
			t := c.timers.NewTimer(wake.Sub(c.opts.Clock.Now()))
			timer, stop = t.C(), t.Stop
			// A fake clock may have moved between Now and NewTimer.
			if !c.opts.Clock.Now().Before(wake) {
				ch := make(chan time.Time, 1)
				ch <- wake
				timer = ch
			}
		default:
			backoff = minBackoff
		}
		select {
		case <-ctx.Done():
		case <-c.trigger:
		case <-timer:
		}
		if stop != nil {
			stop()
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}
