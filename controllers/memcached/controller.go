// Package memcached is the Memcached controller: the kubebuilder tutorial's
// operator built to production standard. Each Memcached gets a Deployment of
// memcached servers and a headless Service through which clients find every
// server; drift in either is corrected, the status follows the Deployment's
// and is written only when it changed, and a finalizer removes both children
// before the Memcached goes.
package memcached

import (
	"cmp"
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/podmonitor"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Name is the controller's name in --controllers.
const Name = "memcached"

// ImageEnv names the environment variable with the memcached image.
const ImageEnv = "MEMCACHED_IMAGE"

// ExporterImageEnv names the environment variable with the exporter
// sidecar's image, which runs the manager binary's memcached-exporter
// subcommand.
const ExporterImageEnv = "MEMCACHED_EXPORTER_IMAGE"

// DefaultExporterImage is the exporter's image when MEMCACHED_EXPORTER_IMAGE
// is unset (the binary run alone): this release's manager image, which has
// the exporter built in. Every install path sets the variable to the
// manager's image as installed (test/deploy holds the two equal).
const DefaultExporterImage = "ghcr.io/multi-operator/multi-operator:v0.2.0"

// Finalizer holds a Memcached until its Deployment and Service are deleted.
const Finalizer = "cache.example.com/finalizer"

// Descriptor registers the controller with the manager.
func Descriptor() reconciler.Descriptor {
	return reconciler.Descriptor{
		Name:                 Name,
		Description:          "Memcached (cache.example.com/v1alpha1): runs memcached servers in a Deployment behind a headless Service",
		AddToScheme:          cachev1alpha1.AddToScheme,
		For:                  &cachev1alpha1.Memcached{},
		Managed:              []client.Object{&appsv1.Deployment{}, &corev1.Service{}},
		ImageEnv:             ImageEnv,
		DefaultImage:         DefaultImage,
		ExporterImageEnv:     ExporterImageEnv,
		DefaultExporterImage: DefaultExporterImage,
		Setup:                reconciler.SetupWith(NewReconciler),
	}
}

// Reconciler reconciles Memcacheds.
type Reconciler struct {
	reconciler.Flow[*cachev1alpha1.Memcached, *scope]
	client client.Client
	// children applies the Deployment and the Service and records their events.
	children reconciler.Children
	events   events.Recorder
	image    string
	// exporterImage runs the exporter sidecars.
	exporterImage string
	// podMonitors keeps the PodMonitors where the cluster serves them;
	// SetupWithManager starts its discovery with the manager.
	podMonitors *podmonitor.Keeper
	// startupGrace is how long a new Memcached's first status waits for
	// all its servers to be available; see reconcileStatus.
	startupGrace time.Duration
	// cleanup runs before a Memcached may go. It is a field so that tests
	// can make it fail; it is deleteChildren otherwise.
	cleanup func(ctx context.Context, m *cachev1alpha1.Memcached) error
}

// scope is what the phases of one reconcile share.
type scope struct {
	m *cachev1alpha1.Memcached
	// deployment is the Deployment as the API server has it, once applied.
	deployment *appsv1.Deployment
}

// NewReconciler returns a Reconciler whose servers run opts.Image.
func NewReconciler(mgr ctrl.Manager, opts reconciler.Options) (*Reconciler, error) {
	r := &Reconciler{
		client: mgr.GetClient(),
		events: reconciler.EventRecorder(mgr, Name),
		image:  opts.ImageOr(DefaultImage),

		exporterImage: cmp.Or(opts.ExporterImage, DefaultExporterImage),

		startupGrace: opts.StartupGrace,
	}
	r.children = reconciler.Children{Client: r.client, Events: r.events}
	podMonitors, err := podmonitor.NewKeeper(mgr, r.events, "Memcached", podmonitor.Reasons{
		Created: cachev1alpha1.ReasonPodMonitorCreated,
		Updated: cachev1alpha1.ReasonPodMonitorUpdated,
		Deleted: cachev1alpha1.ReasonPodMonitorDeleted,
	})
	if err != nil {
		return nil, err
	}
	r.podMonitors = podMonitors
	r.cleanup = r.deleteChildren
	r.Flow = reconciler.Flow[*cachev1alpha1.Memcached, *scope]{
		Client:     r.client,
		Events:     r.events,
		NewObject:  func() *cachev1alpha1.Memcached { return &cachev1alpha1.Memcached{} },
		Finalizer:  Finalizer,
		Cleanup:    func(ctx context.Context, m *cachev1alpha1.Memcached) error { return r.cleanup(ctx, m) },
		Finalizing: r.finalizing,
		NewScope:   func(m *cachev1alpha1.Memcached) *scope { return &scope{m: m} },
		Phases: []reconciler.NamedPhase[*scope]{
			{Name: "children", Run: r.reconcileChildren},
			{Name: "podmonitor", Run: r.reconcilePodMonitor},
			{Name: "status", Run: r.reconcileStatus},
		},
		ObservedGeneration: func(m *cachev1alpha1.Memcached) *int64 { return &m.Status.ObservedGeneration },
		Gone:               func(key types.NamespacedName) { forgetMetrics(key.Namespace, key.Name) },
	}
	return r, nil
}

// SetupWithManager watches Memcacheds and the Deployments and Services they
// own; a change to a child, its status included, reconciles the owner, which
// is how drift is corrected and the status follows the Deployment's.
//
// PodMonitors are not watched: the kind may not be served, and a watch of
// it would need list and watch of every namespace's PodMonitors. A
// PodMonitor changed by hand is corrected at the Memcached's next
// reconcile instead. When the kind becomes served (the Prometheus
// Operator installed after the manager started) or goes, every Memcached
// is reconciled once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	changed, err := podmonitor.Watch(mgr, r.podMonitors, func(ctx context.Context) ([]*cachev1alpha1.Memcached, error) {
		list := &cachev1alpha1.MemcachedList{}
		if err := r.client.List(ctx, list); err != nil {
			return nil, err
		}
		out := make([]*cachev1alpha1.Memcached, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	return reconciler.NewControllerBuilder(mgr, Name, r, &cachev1alpha1.Memcached{},
		[]reconciler.Reported{reconciler.ReportOf(&appsv1.Deployment{}, reportOf)}, []client.Object{&corev1.Service{}}).
		WatchesRawSource(changed).
		Complete(r)
}

// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;create;patch;delete

// reconcileChildren creates or corrects the Deployment and the Service.
// When either cannot be applied, Ready and Degraded say why and the status
// phase is skipped, so that the status does not flip between the two.
func (r *Reconciler) reconcileChildren(ctx context.Context, s *scope) (reconciler.Result, error) {
	m := s.m
	m.Status.Selector = Selector(m)
	deployment := DesiredDeployment(m, r.image, r.exporterImage)
	// Creations are left to reportCreations, and a change of size is told
	// as a scale (reportUpdate).
	deploymentApplied, result, err := r.children.Apply(ctx, m, reconciler.Child{Object: deployment})
	if result.Stop {
		return degraded(m, result, err)
	}
	if deploymentApplied.Result == apply.Updated {
		before, _ := deploymentApplied.Previous.(*appsv1.Deployment)
		r.reportUpdate(m, before, deployment)
	}
	serviceApplied, result, err := r.children.Apply(ctx, m, reconciler.Child{
		Object: DesiredService(m), Updated: cachev1alpha1.ReasonServiceUpdated, UpdatedNote: " to match the Memcached",
	})
	r.reportCreations(m, deploymentApplied.Result, serviceApplied.Result)
	if result.Stop {
		return degraded(m, result, err)
	}
	s.deployment = deployment
	return reconciler.Result{}, nil
}

// reconcilePodMonitor keeps the Memcached's PodMonitor where the cluster
// serves the kind: created or corrected while the exporter runs and the
// PodMonitor is not disabled, deleted otherwise. Where the kind is not
// served it does nothing, and says nothing: a cluster without the
// Prometheus Operator is an ordinary one.
func (r *Reconciler) reconcilePodMonitor(ctx context.Context, s *scope) (reconciler.Result, error) {
	return r.podMonitors.Reconcile(ctx, s.m, s.m.Spec.Monitoring, podMonitorTarget(s.m))
}

// degraded passes on the Result and error of a child that could not be
// applied, with Degraded saying what Ready already does: the Memcached
// cannot reach its spec.
func degraded(m *cachev1alpha1.Memcached, result reconciler.Result, err error) (reconciler.Result, error) {
	ready := conditions.Get(m, conditions.Ready)
	conditions.MarkTrue(m, cachev1alpha1.ConditionDegraded, ready.Reason, ready.Message)
	return result, err
}

// reconcileStatus sets the status from the Deployment.
//
// A new Memcached's status waits for the Deployment controller's first
// report, and then, for up to the startup grace after the Deployment's
// creation, for all servers to be available or a failure
// (reconciler.HoldFirstStatus): a status computed before either would be
// replaced a moment later, and the report that replaces it reconciles the
// Memcached again. A Memcached that has a Ready condition always gets its
// status written, so that a spec change turns a stale Ready=True False at
// once.
func (r *Reconciler) reconcileStatus(_ context.Context, s *scope) (reconciler.Result, error) {
	m, deployment := s.m, reportOf(s.deployment)
	if conditions.Get(m, conditions.Ready) == nil && deployment.observedGeneration < deployment.generation {
		return reconciler.Result{HoldStatus: true}, nil
	}
	settled := deployment.availableReplicas >= m.Spec.Size || deployment.failure.status == metav1.ConditionTrue
	if hold := reconciler.HoldFirstStatus(m, time.Since(s.deployment.CreationTimestamp.Time), r.startupGrace, settled); hold.HoldStatus {
		return hold, nil
	}
	wasDegraded := conditions.Get(m, cachev1alpha1.ConditionDegraded).DeepCopy()
	observe(m, deployment)
	recordServers(m, deployment)
	if d := conditions.Get(m, cachev1alpha1.ConditionDegraded); d.Status == metav1.ConditionTrue &&
		(wasDegraded == nil || wasDegraded.Status != metav1.ConditionTrue || wasDegraded.Reason != d.Reason) {
		r.events.Warning(m, d.Reason, events.ActionReconcile, "Deployment %s is degraded: %s", deployment.name, d.Message)
	}
	return reconciler.Result{}, nil
}

// reportCreations emits one event for the children this reconcile created:
// a new Memcached gets a single event for both, which keeps its writes to
// the API server down.
func (r *Reconciler) reportCreations(m *cachev1alpha1.Memcached, deployment, service apply.Result) {
	switch {
	case deployment == apply.Created && service == apply.Created:
		r.events.Normal(m, cachev1alpha1.ReasonChildrenCreated, events.ActionCreate, "Created Deployment %s (size %d) and headless Service %s", m.Name, m.Spec.Size, m.Name)
	case deployment == apply.Created:
		r.events.Normal(m, cachev1alpha1.ReasonDeploymentCreated, events.ActionCreate, "Created Deployment %s (size %d)", m.Name, m.Spec.Size)
	case service == apply.Created:
		r.events.Normal(m, cachev1alpha1.ReasonServiceCreated, events.ActionCreate, "Created headless Service %s", m.Name)
	}
}

// reportUpdate tells a scale from other corrections of the Deployment, so
// that `kubectl describe` shows "Scaled Deployment x from 1 to 3" for a
// change of size and a separate event when the template was restored too.
func (r *Reconciler) reportUpdate(m *cachev1alpha1.Memcached, before, after *appsv1.Deployment) {
	if before != nil {
		if change := apply.DiffDeployment(before, after); change.Scaled() {
			r.events.Normal(m, cachev1alpha1.ReasonDeploymentScaled, events.ActionScale, "Scaled Deployment %s from %d to %d", after.Name, change.FromReplicas, change.ToReplicas)
			if !change.TemplateChanged {
				return
			}
		}
	}
	r.events.Normal(m, cachev1alpha1.ReasonDeploymentUpdated, events.ActionUpdate, "Updated Deployment %s to match the Memcached", after.Name)
}

// finalizing shows that the Memcached is going (Degraded=True, reason
// Finalizing, and a Warning event) before the cleanup runs, so that a
// failing cleanup is shown with what was being done.
func (r *Reconciler) finalizing(m *cachev1alpha1.Memcached) {
	if d := conditions.Get(m, cachev1alpha1.ConditionDegraded); d != nil && d.Status == metav1.ConditionTrue && d.Reason == cachev1alpha1.ReasonFinalizing {
		return
	}
	conditions.MarkTrue(m, cachev1alpha1.ConditionDegraded, cachev1alpha1.ReasonFinalizing, "deleting Deployment "+m.Name+" and Service "+m.Name+" before the Memcached goes")
	summarize(m)
	r.events.Warning(m, cachev1alpha1.ReasonDeleting, events.ActionDelete, "Deleting Memcached %s: removing its Deployment and Service", m.Name)
}

// deleteChildren deletes the Memcached's Deployment and Service, each only
// while it is still the one this Memcached controls (apply.DeleteControlled,
// which never deletes a replacement of the same name). The garbage collector
// would delete them too once the Memcached is gone; deleting them here stops
// the servers where no garbage collector runs and makes a deletion that
// cannot proceed say why. It is idempotent: a child already gone is skipped.
func (r *Reconciler) deleteChildren(ctx context.Context, m *cachev1alpha1.Memcached) error {
	logger := log.FromContext(ctx)
	for _, child := range []struct {
		kind, reason string
		obj          client.Object
	}{
		{"Deployment", cachev1alpha1.ReasonDeploymentDeleted, &appsv1.Deployment{}},
		{"Service", cachev1alpha1.ReasonServiceDeleted, &corev1.Service{}},
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
		if err := apply.DeleteControlled(ctx, r.client, child.obj); err != nil {
			return err
		}
		logger.Info("deleted child before the Memcached goes", "kind", child.kind, "name", m.Name)
		r.events.Normal(m, child.reason, events.ActionDelete, "Deleted %s %s", child.kind, m.Name)
	}
	return r.podMonitors.Delete(ctx, m, podMonitorTarget(m))
}
