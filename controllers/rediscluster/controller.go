// Package rediscluster is the RedisCluster controller: it runs a StatefulSet
// of redis-server nodes in cluster mode and, through pkg/redisadmin, joins
// them, spreads the slots, and moves slots with their keys when the size
// changes, draining leaving masters before the StatefulSet shrinks.
package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/status"
)

// Name is the controller's name in --controllers.
const Name = "rediscluster"

// ImageEnv names the environment variable with the default image.
const ImageEnv = "REDIS_IMAGE"

// Requeue intervals.
const (
	// unreachableRetry is how soon a cluster with unreachable nodes is looked
	// at again, besides the pod events that usually come first.
	unreachableRetry = 15 * time.Second
	// progressRetry follows a run that left work, such as gossip to settle.
	progressRetry = 2 * time.Second
	// resync checks a healthy cluster for drift that raises no Kubernetes
	// event, such as a failover.
	resync = 5 * time.Minute
)

// Descriptor registers the controller with the manager.
func Descriptor() manager.Descriptor {
	return manager.Descriptor{
		Name:        Name,
		Description: "RedisCluster (cache.example.com/v1): a Redis Cluster that scales up and down without losing keys",
		AddToScheme: cachev1.AddToScheme,
		For:         &cachev1.RedisCluster{},
		// Pods are not created by the controller but read to reach the
		// nodes; listing them here keeps the cache to managed pods.
		Owns: []client.Object{&corev1.Service{}, &appsv1.StatefulSet{}, &policyv1.PodDisruptionBudget{}, &corev1.Pod{}},
		Setup: func(mgr ctrl.Manager) error {
			return NewReconciler(mgr, Options{DefaultImage: imageFromEnv()}).SetupWithManager(mgr)
		},
	}
}

func imageFromEnv() string {
	if img := os.Getenv(ImageEnv); img != "" {
		return img
	}
	return DefaultImage
}

// Resolver returns host:port of the node that runs in the named pod of rc.
type Resolver func(ctx context.Context, rc *cachev1.RedisCluster, pod string) (string, error)

// Options configure a Reconciler.
type Options struct {
	// DefaultImage runs unless a RedisCluster names its own.
	DefaultImage string
	// Resolve reaches the nodes; PodIPResolver of the manager's client when nil.
	Resolve Resolver
	// Admin tunes the cluster administration. MaxSlotsPerRun defaults to
	// 2048, so that status shows the progress of a long rebalance.
	Admin redisadmin.Options
}

// Reconciler reconciles RedisClusters.
type Reconciler struct {
	client client.Client
	// writes tells reads that predate our own status writes.
	writes status.Writes
	// children remembers the children this controller created until the cache has them.
	children     ownership.Children
	events       events.Recorder
	defaultImage string
	resolve      Resolver
	adminOpts    redisadmin.Options
}

// NewReconciler returns a Reconciler for mgr.
func NewReconciler(mgr ctrl.Manager, opts Options) *Reconciler {
	r := &Reconciler{
		client:       mgr.GetClient(),
		events:       events.NewRecorder(mgr.GetEventRecorder(Name + "-controller")),
		defaultImage: opts.DefaultImage,
		resolve:      opts.Resolve,
		adminOpts:    opts.Admin,
	}
	if r.defaultImage == "" {
		r.defaultImage = DefaultImage
	}
	if r.resolve == nil {
		r.resolve = PodIPResolver(mgr.GetClient())
	}
	if r.adminOpts.MaxSlotsPerRun == 0 {
		r.adminOpts.MaxSlotsPerRun = 2048
	}
	return r
}

// PodIPResolver reaches a node at its pod's IP on the client port. A pod
// without an IP, or being deleted, cannot be reached.
func PodIPResolver(c client.Reader) Resolver {
	return func(ctx context.Context, rc *cachev1.RedisCluster, name string) (string, error) {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: name}, pod); err != nil {
			if apierrors.IsNotFound(err) {
				return "", errors.New("pod does not exist yet")
			}
			return "", err
		}
		if !labels.SelectorFromSet(ownership.SelectorLabels(appName, rc.Name)).Matches(labels.Set(pod.Labels)) {
			return "", fmt.Errorf("pod %s is not one of this cluster's", name)
		}
		if !pod.DeletionTimestamp.IsZero() {
			return "", errors.New("pod is being deleted")
		}
		if pod.Status.PodIP == "" {
			return "", errors.New("pod has no IP yet")
		}
		return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(ClientPort)), nil
	}
}

// SetupWithManager watches RedisClusters, their children, and their pods,
// whose IP changes the nodes must be told about.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		// Our own status writes bump no generation, so they trigger nothing.
		For(&cachev1.RedisCluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.Service{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		// Pods belong to the StatefulSet; the instance label names the cluster.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToCluster)).
		Complete(r)
}

func podToCluster(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[ownership.LabelName] != appName || l[ownership.LabelInstance] == "" {
		return nil
	}
	// Names are at most 52 characters, so the label is the name itself.
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: l[ownership.LabelInstance]}}}
}

// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the phases fetch, children, cluster, status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rc := &cachev1.RedisCluster{}
	if result, ok, err := r.writes.Fetch(ctx, r.client, req.NamespacedName, rc); !ok {
		return result, err
	}
	if !rc.DeletionTimestamp.IsZero() {
		// Children go with their owner through garbage collection.
		return ctrl.Result{}, nil
	}
	patcher := r.writes.NewPatcher(r.client, rc)
	rc.Status.ObservedGeneration = rc.Generation
	rc.Status.Selector = labels.SelectorFromSet(ownership.SelectorLabels(appName, rc.Name)).String()

	running, result, err := r.reconcileChildren(ctx, rc)
	if err == nil && result.IsZero() {
		result, err = r.reconcileCluster(ctx, rc, running)
	}
	if _, patchErr := patcher.Patch(ctx, rc); patchErr != nil {
		err = errors.Join(err, patchErr)
	}
	return result, err
}

// reconcileChildren applies the Services, the PodDisruptionBudget and the
// StatefulSet, and returns the StatefulSet's size. That size never drops
// below the pods that still serve slots: a shrink waits for reconcileCluster.
func (r *Reconciler) reconcileChildren(ctx context.Context, rc *cachev1.RedisCluster) (int32, ctrl.Result, error) {
	running := Replicas(rc)
	existing := &appsv1.StatefulSet{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: rc.Name}, existing)
	if client.IgnoreNotFound(err) != nil {
		return 0, ctrl.Result{}, err
	}
	if err == nil && existing.Spec.Replicas != nil && *existing.Spec.Replicas > running {
		running = *existing.Spec.Replicas
	}
	for _, child := range []client.Object{
		DesiredHeadlessService(rc),
		DesiredClientService(rc),
		DesiredPodDisruptionBudget(rc),
		DesiredStatefulSet(rc, r.defaultImage, running),
	} {
		if res, err := r.apply(ctx, rc, child); err != nil || !res.IsZero() {
			return running, res, err
		}
	}
	return running, ctrl.Result{}, nil
}

// apply applies one child and records an event when it changed.
func (r *Reconciler) apply(ctx context.Context, rc *cachev1.RedisCluster, child client.Object) (ctrl.Result, error) {
	result, err := r.children.Apply(ctx, r.client, rc, child)
	if err != nil {
		return ownership.ReportApplyError(r.events, rc, err)
	}
	kind := fmt.Sprintf("%T", child)
	switch child.(type) {
	case *corev1.Service:
		kind = "Service"
	case *appsv1.StatefulSet:
		kind = "StatefulSet"
	case *policyv1.PodDisruptionBudget:
		kind = "PodDisruptionBudget"
	}
	switch result {
	case ownership.Created:
		r.events.Normal(rc, kind+"Created", events.ActionCreate, "Created %s %s", kind, child.GetName())
	case ownership.Updated:
		r.events.Normal(rc, kind+"Updated", events.ActionUpdate, "Updated %s %s", kind, child.GetName())
	}
	return ctrl.Result{}, nil
}

// reconcileCluster drives the Redis Cluster towards rc's topology, shrinks
// the StatefulSet once the leaving nodes are drained and forgotten, and
// records the outcome in the status.
func (r *Reconciler) reconcileCluster(ctx context.Context, rc *cachev1.RedisCluster, running int32) (ctrl.Result, error) {
	admin := redisadmin.New(func(ctx context.Context, pod string) (string, error) {
		return r.resolve(ctx, rc, pod)
	}, r.adminOpts)
	res, err := admin.Reconcile(ctx, Topology(rc, running))
	for _, a := range res.Actions {
		r.events.Normal(rc, a.Reason, events.ActionReconcile, "%s", a.Message)
	}
	if err == nil && res.LeavingForgotten && running > Replicas(rc) {
		sts := DesiredStatefulSet(rc, r.defaultImage, Replicas(rc))
		if _, applyErr := r.children.Apply(ctx, r.client, rc, sts); applyErr != nil {
			return ownership.ReportApplyError(r.events, rc, applyErr)
		}
		r.events.Normal(rc, "ScaledDown", events.ActionScale, "Scaled StatefulSet %s from %d to %d pods: the leaving nodes serve no slot and are forgotten", sts.Name, running, Replicas(rc))
		running = Replicas(rc)
	}
	return r.recordCluster(rc, running, res, err)
}
