// Package memcached is the Memcached controller: the kubebuilder tutorial's
// operator built to production standard. Each Memcached gets a Deployment of
// memcached servers and a headless Service through which clients find every
// server; drift in either is corrected, the status follows the Deployment's
// and is written only when it changed, and a finalizer removes both children
// before the Memcached goes.
package memcached

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/finalizers"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/status"
)

// Name is the controller's name in --controllers.
const Name = "memcached"

// ImageEnv names the environment variable with the memcached image.
const ImageEnv = "MEMCACHED_IMAGE"

// Finalizer holds a Memcached until its Deployment and Service are deleted.
const Finalizer = "cache.example.com/finalizer"

// Descriptor registers the controller with the manager.
func Descriptor() manager.Descriptor {
	return manager.Descriptor{
		Name:        Name,
		Description: "Memcached (cache.example.com/v1alpha1): runs memcached servers in a Deployment behind a headless Service",
		AddToScheme: v1alpha1.AddToScheme,
		For:         &v1alpha1.Memcached{},
		Owns:        []client.Object{&appsv1.Deployment{}, &corev1.Service{}},
		Setup: func(mgr ctrl.Manager) error {
			return NewReconciler(mgr, manager.ImageFromEnv(ImageEnv, DefaultImage)).SetupWithManager(mgr)
		},
	}
}

// Reconciler reconciles Memcacheds.
type Reconciler struct {
	client client.Client
	// writes tells reads that predate our own status writes.
	writes status.Writes
	// children remembers the children this controller created until the cache has them.
	children ownership.Children
	events   events.Recorder
	image    string
	// cleanup runs before a Memcached may go. It is a field so that tests
	// can make it fail; it is deleteChildren otherwise.
	cleanup func(ctx context.Context, m *v1alpha1.Memcached) error
}

// NewReconciler returns a Reconciler whose servers run image.
func NewReconciler(mgr ctrl.Manager, image string) *Reconciler {
	r := &Reconciler{
		client: mgr.GetClient(),
		events: events.NewRecorder(mgr.GetEventRecorder(Name + "-controller")),
		image:  image,
	}
	r.cleanup = r.deleteChildren
	return r
}

// SetupWithManager watches Memcacheds and the Deployments and Services they
// own; a change to a child, its status included, reconciles the owner, which
// is how drift is corrected and the status follows the Deployment's.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		// Our own status writes bump no generation, so they trigger nothing.
		For(&v1alpha1.Memcached{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A Deployment's progress is reported ahead of new work.
		Watches(&appsv1.Deployment{}, ownership.EnqueueOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.Memcached{})).
		Owns(&corev1.Service{}).
		Complete(r)
}

// The finalizers subresource lets the controller set blockOwnerDeletion on
// the owner references of its children where OwnerReferencesPermissionEnforcement is on.
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the phases fetch, finalize (once deleted), children, status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &v1alpha1.Memcached{}
	if result, ok, err := r.writes.Fetch(ctx, r.client, req.NamespacedName, m); !ok {
		return result, err
	}
	patcher := r.writes.NewPatcher(r.client, m)
	if !m.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, m, patcher)
	}
	if _, err := finalizers.Ensure(ctx, r.client, m, Finalizer); err != nil {
		return ctrl.Result{}, err
	}

	m.Status.ObservedGeneration = m.Generation
	m.Status.Selector = Selector(m)
	result, report, err := r.reconcileChildren(ctx, m)
	if !report {
		return result, err
	}
	if _, patchErr := patcher.Patch(ctx, m); patchErr != nil {
		err = errors.Join(err, patchErr)
	}
	return result, err
}

// reconcileChildren creates or corrects the Deployment and the Service and
// sets the status from the Deployment. When either cannot be applied, the
// status shows why instead, so that it does not flip between the two.
//
// report is false while a new Memcached waits for the Deployment
// controller's first report: a status computed from a Deployment nobody has
// observed yet would be replaced a moment later, and that report reconciles
// the Memcached again. A Memcached that has a Ready condition always gets
// its status written, so that a spec change turns a stale Ready=True False
// at once.
func (r *Reconciler) reconcileChildren(ctx context.Context, m *v1alpha1.Memcached) (result ctrl.Result, report bool, err error) {
	deployment, deploymentResult, err := r.applyDeployment(ctx, m)
	serviceResult := ownership.Unchanged
	if err == nil {
		serviceResult, err = r.applyService(ctx, m)
	}
	r.reportCreations(m, deploymentResult, serviceResult)
	if err != nil {
		result, err := ownership.ReportApplyError(r.events, m, err)
		ready := conditions.Get(m, conditions.Ready)
		conditions.MarkTrue(m, v1alpha1.ConditionDegraded, ready.Reason, ready.Message)
		return result, true, err
	}
	if conditions.Get(m, conditions.Ready) == nil && deployment.Status.ObservedGeneration < deployment.Generation {
		return ctrl.Result{}, false, nil
	}

	wasDegraded := conditions.Get(m, v1alpha1.ConditionDegraded).DeepCopy()
	observe(m, deployment)
	if d := conditions.Get(m, v1alpha1.ConditionDegraded); d.Status == metav1.ConditionTrue &&
		(wasDegraded == nil || wasDegraded.Status != metav1.ConditionTrue || wasDegraded.Reason != d.Reason) {
		r.events.Warning(m, d.Reason, events.ActionReconcile, "Deployment %s is degraded: %s", deployment.Name, d.Message)
	}
	return ctrl.Result{}, true, nil
}

// reportCreations emits one event for the children this reconcile created:
// a new Memcached gets a single "Created" event for both, which keeps its
// writes to the API server down.
func (r *Reconciler) reportCreations(m *v1alpha1.Memcached, deployment, service ownership.Result) {
	switch {
	case deployment == ownership.Created && service == ownership.Created:
		r.events.Normal(m, "Created", events.ActionCreate, "Created Deployment %s (size %d) and headless Service %s", m.Name, m.Spec.Size, m.Name)
	case deployment == ownership.Created:
		r.events.Normal(m, "DeploymentCreated", events.ActionCreate, "Created Deployment %s (size %d)", m.Name, m.Spec.Size)
	case service == ownership.Created:
		r.events.Normal(m, "ServiceCreated", events.ActionCreate, "Created headless Service %s", m.Name)
	}
}

// applyDeployment creates or corrects the Deployment and returns it as the
// API server has it. A changed replica count is reported as a scale;
// creation is left to reportCreations.
func (r *Reconciler) applyDeployment(ctx context.Context, m *v1alpha1.Memcached) (*appsv1.Deployment, ownership.Result, error) {
	desired := DesiredDeployment(m, r.image)
	// Read only to tell what an update changed; Apply reports any error.
	before := &appsv1.Deployment{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), before); err != nil {
		before = nil
	}
	result, err := r.children.Apply(ctx, r.client, m, desired)
	if err != nil {
		return nil, result, err
	}
	if result == ownership.Updated {
		r.reportUpdate(m, before, desired)
	}
	return desired, result, nil
}

// reportUpdate tells a scale from other corrections of the Deployment, so
// that `kubectl describe` shows "Scaled Deployment x from 1 to 3" for a
// change of size and a separate event when the template was restored too.
func (r *Reconciler) reportUpdate(m *v1alpha1.Memcached, before, after *appsv1.Deployment) {
	if before != nil {
		if change := ownership.DiffDeployment(before, after); change.Scaled() {
			r.events.Normal(m, "Scaled", events.ActionScale, "Scaled Deployment %s from %d to %d", after.Name, change.FromReplicas, change.ToReplicas)
			if !change.TemplateChanged {
				return
			}
		}
	}
	r.events.Normal(m, "DeploymentUpdated", events.ActionUpdate, "Updated Deployment %s to match the Memcached", after.Name)
}

// applyService creates or corrects the headless Service; creation is left
// to reportCreations.
func (r *Reconciler) applyService(ctx context.Context, m *v1alpha1.Memcached) (ownership.Result, error) {
	desired := DesiredService(m)
	result, err := r.children.Apply(ctx, r.client, m, desired)
	if result == ownership.Updated {
		r.events.Normal(m, "ServiceUpdated", events.ActionUpdate, "Updated Service %s to match the Memcached", desired.Name)
	}
	return result, err
}

// finalize shows that the Memcached is going (Degraded=True, reason
// Finalizing, and a Warning event) before it runs the cleanup, so that a
// slow or failing cleanup is visible, then removes the finalizer. A failed
// cleanup keeps the finalizer, is shown by pkg/finalizers and is retried
// with backoff.
func (r *Reconciler) finalize(ctx context.Context, m *v1alpha1.Memcached, patcher *status.Patcher) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(m, Finalizer) {
		// Another finalizer holds the Memcached; ours is done.
		return ctrl.Result{}, nil
	}
	if d := conditions.Get(m, v1alpha1.ConditionDegraded); d == nil || d.Status != metav1.ConditionTrue || d.Reason != ReasonFinalizing {
		conditions.MarkTrue(m, v1alpha1.ConditionDegraded, ReasonFinalizing, "deleting Deployment "+m.Name+" and Service "+m.Name+" before the Memcached goes")
		summarize(m)
		r.events.Warning(m, "Deleting", events.ActionDelete, "Deleting Memcached %s: removing its Deployment and Service", m.Name)
		if _, err := patcher.Patch(ctx, m); err != nil {
			return ctrl.Result{}, err
		}
	}
	_, err := finalizers.Finalize(ctx, r.client, r.events, m, Finalizer, func(ctx context.Context) error {
		return r.cleanup(ctx, m)
	})
	if err != nil && controllerutil.ContainsFinalizer(m, Finalizer) {
		if _, patchErr := patcher.Patch(ctx, m); patchErr != nil {
			err = errors.Join(err, patchErr)
		}
	}
	return ctrl.Result{}, err
}

// deleteChildren deletes the Memcached's Deployment and Service, each only
// while it is still the one this Memcached controls. The garbage collector
// would delete them too once the Memcached is gone; deleting them here stops
// the servers where no garbage collector runs and makes a deletion that
// cannot proceed say why. It is idempotent: a child already gone is skipped.
func (r *Reconciler) deleteChildren(ctx context.Context, m *v1alpha1.Memcached) error {
	logger := log.FromContext(ctx)
	for _, child := range []struct {
		kind string
		obj  client.Object
	}{
		{"Deployment", &appsv1.Deployment{}},
		{"Service", &corev1.Service{}},
	} {
		err := r.client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, child.obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if !metav1.IsControlledBy(child.obj, m) || !child.obj.GetDeletionTimestamp().IsZero() {
			continue
		}
		// The UID precondition keeps a stale cache from deleting an object
		// that replaced ours under the same name.
		uid := child.obj.GetUID()
		err = r.client.Delete(ctx, child.obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return err
		}
		logger.Info("deleted child before the Memcached goes", "kind", child.kind, "name", m.Name)
		r.events.Normal(m, child.kind+"Deleted", events.ActionDelete, "Deleted %s %s", child.kind, m.Name)
	}
	return nil
}
