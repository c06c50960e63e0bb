package main

import (
	"context"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
)

const (
	// conditionAvailable is the one condition type the tutorial sets.
	conditionAvailable = "Available"
	// reasonReconciling and reasonResizing are the tutorial's reasons.
	reasonReconciling = "Reconciling"
	reasonResizing    = "Resizing"

	// imageEnv overrides defaultImage.
	imageEnv = "MEMCACHED_IMAGE"
	// defaultImage is the image the tutorial's controller hard-codes.
	defaultImage = "memcached:1.6.26-alpine3.19"
	// containerName names the container and its port, as in the tutorial.
	containerName = "memcached"
	// defaultPort is the tutorial's fixed port, used when spec.containerPort
	// is zero (the CRD defaults it to the same 11211).
	defaultPort = 11211
	// runAsUser is the tutorial's container uid.
	runAsUser = 1001
)

// podLabels are the tutorial's selector and pod labels. They are the same
// for every Memcached, as in the tutorial; each Deployment still manages
// only its own ReplicaSets and pods, through their controller references.
func podLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "project"}
}

// imageFromEnv is MEMCACHED_IMAGE, or the tutorial's image when it is unset
// or empty.
func imageFromEnv() string {
	if image := os.Getenv(imageEnv); image != "" {
		return image
	}
	return defaultImage
}

// MemcachedReconciler is the tutorial's Memcached controller: it runs each
// Memcached's servers in a Deployment of the same name and reports an
// Available condition. It adds no finalizer and never deletes anything
// itself; the garbage collector removes the Deployment through its owner
// reference.
type MemcachedReconciler struct {
	client.Client
	// Scheme resolves the Memcached's GroupVersionKind for owner references.
	Scheme *runtime.Scheme
	// Image is the memcached image of new Deployments.
	Image string
}

// Reconcile makes the same requests, in the same order, as the tutorial's
// Reconcile. Reads come from the manager's informer cache; the writes, for
// a new Memcached, are:
//
//  1. Status().Update with Available=Unknown (only while the Memcached has
//     no condition at all), then, after reading it again, Create of the
//     Deployment, and a requeue after a minute;
//  2. on a later pass that finds the Deployment at spec.size,
//     Status().Update with Available=True. Every such pass writes it again,
//     changed or not: the Deployment's status events bring several.
//
// A pass that finds the Deployment at another size Updates its replicas and
// requeues at once (rate limited) instead.
func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	memcached := &cachev1alpha1.Memcached{}
	if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted, or never there: nothing to do.
			log.Info("memcached resource not found. Ignoring since object must be deleted")
			return ctrl.Result{}, nil
		}
		log.Error(err, "Failed to get memcached")
		return ctrl.Result{}, err
	}

	// A Memcached with no status yet gets Available=Unknown first, then is
	// read again so that later writes carry its new resourceVersion.
	if len(memcached.Status.Conditions) == 0 {
		if err := r.setAvailable(ctx, memcached, metav1.ConditionUnknown, reasonReconciling, "Starting reconciliation"); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
			log.Error(err, "Failed to re-fetch memcached")
			return ctrl.Result{}, err
		}
	}

	found := &appsv1.Deployment{}
	err := r.Get(ctx, types.NamespacedName{Name: memcached.Name, Namespace: memcached.Namespace}, found)
	switch {
	case apierrors.IsNotFound(err):
		dep, err := r.deploymentForMemcached(memcached)
		if err != nil {
			log.Error(err, "Failed to define new Deployment resource for Memcached")
			if err := r.setAvailable(ctx, memcached, metav1.ConditionFalse, reasonReconciling, fmt.Sprintf("Failed to create Deployment for the custom resource (%s): (%s)", memcached.Name, err)); err != nil {
				return ctrl.Result{}, err
			}
			return ctrl.Result{}, err
		}

		log.Info("Creating a new Deployment", "Deployment.Namespace", dep.Namespace, "Deployment.Name", dep.Name)
		if err := r.Create(ctx, dep); err != nil {
			log.Error(err, "Failed to create new Deployment",
				"Deployment.Namespace", dep.Namespace, "Deployment.Name", dep.Name)
			return ctrl.Result{}, err
		}
		// The tutorial comes back in a minute even though the Deployment's
		// own events bring it back sooner.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	case err != nil:
		log.Error(err, "Failed to get Deployment")
		return ctrl.Result{}, err
	}

	// Scale the Deployment to spec.size with a full Update of the object
	// read from the cache, as the tutorial does (no patch).
	size := memcached.Spec.Size
	if found.Spec.Replicas == nil || *found.Spec.Replicas != size {
		found.Spec.Replicas = ptr.To(size)
		if err := r.Update(ctx, found); err != nil {
			log.Error(err, "Failed to update Deployment",
				"Deployment.Namespace", found.Namespace, "Deployment.Name", found.Name)

			// Read the Memcached again before writing its status, as the
			// tutorial does, then report the failure.
			if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
				log.Error(err, "Failed to re-fetch memcached")
				return ctrl.Result{}, err
			}
			if err := r.setAvailable(ctx, memcached, metav1.ConditionFalse, reasonResizing, fmt.Sprintf("Failed to update the size for the custom resource (%s): (%s)", memcached.Name, err)); err != nil {
				return ctrl.Result{}, err
			}
			return ctrl.Result{}, err
		}
		// The tutorial's immediate, rate-limited requeue; RequeueAfter
		// would change when the next pass runs, and so the traffic.
		return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // kept to match the tutorial
	}

	// The tutorial writes this status on every pass that gets here, whether
	// or not it changed.
	if err := r.setAvailable(ctx, memcached, metav1.ConditionTrue, reasonReconciling, fmt.Sprintf("Deployment for custom resource (%s) with %d replicas created successfully", memcached.Name, size)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// setAvailable sets memcached's Available condition and writes its status
// with a full Update, as the tutorial does at each of its status writes.
func (r *MemcachedReconciler) setAvailable(ctx context.Context, memcached *cachev1alpha1.Memcached, status metav1.ConditionStatus, reason, message string) error {
	meta.SetStatusCondition(&memcached.Status.Conditions, metav1.Condition{
		Type: conditionAvailable, Status: status, Reason: reason, Message: message,
	})
	if err := r.Status().Update(ctx, memcached); err != nil {
		logf.FromContext(ctx).Error(err, "Failed to update Memcached status")
		return err
	}
	return nil
}

// SetupWithManager registers the controller as the tutorial does: Memcached
// events, and those of the Deployments a Memcached controls, with
// controller-runtime's default of one worker.
func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&cachev1alpha1.Memcached{}).
		Owns(&appsv1.Deployment{}).
		Named("memcached").
		Complete(r)
}

// deploymentForMemcached is newDeployment with memcached as its controller.
func (r *MemcachedReconciler) deploymentForMemcached(memcached *cachev1alpha1.Memcached) (*appsv1.Deployment, error) {
	dep := newDeployment(memcached, r.Image)
	if err := ctrl.SetControllerReference(memcached, dep, r.Scheme); err != nil {
		return nil, err
	}
	return dep, nil
}

// newDeployment is the tutorial's Deployment for memcached, running image:
// spec.size replicas of one memcached container with 64 MB of item memory,
// under the restricted pod security standard.
func newDeployment(memcached *cachev1alpha1.Memcached, image string) *appsv1.Deployment {
	port := memcached.Spec.ContainerPort
	if port == 0 {
		port = defaultPort
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      memcached.Name,
			Namespace: memcached.Namespace,
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(memcached.Spec.Size),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels()},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            containerName,
						Image:           image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot:             ptr.To(true),
							RunAsUser:                ptr.To[int64](runAsUser),
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						Ports: []corev1.ContainerPort{{
							Name:          containerName,
							ContainerPort: port,
						}},
						// The v4 tutorial's command. Its long option takes
						// "=64"; the short "-m=64" of older tutorials would
						// hand memcached 1.6 the value "=64".
						Command: []string{"memcached", "--memory-limit=64", "-o", "modern", "-v"},
					}},
				},
			},
		},
	}
}
