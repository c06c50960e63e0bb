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
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/backupinputs"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/jobstatus"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/podmonitor"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/rediscanary"
)

// Name is the controller's name in --controllers.
const Name = "rediscluster"

// ImageEnv names the environment variable with the default image.
const ImageEnv = "REDIS_IMAGE"

// ExporterImageEnv names the environment variable with the default image
// of the redis_exporter sidecar.
const ExporterImageEnv = "REDIS_EXPORTER_IMAGE"

// ExporterScrapersEnv names the environment variable with the label
// selector of the namespaces whose pods may reach the exporters' metrics
// port (see ParseScrapers).
const ExporterScrapersEnv = "REDIS_EXPORTER_SCRAPERS"

// DefaultExporterScrapers admits the namespaces labelled as the manager's
// own metrics NetworkPolicy wants them: a platform labels its Prometheus'
// namespace once for both.
const DefaultExporterScrapers = "metrics=enabled"

// AnyScraper is the scrapers value that admits the metrics port from
// anywhere, as a Prometheus on the host network needs, and so lets anyone
// who reaches a pod make its exporter dial any address (/scrape?target=).
const AnyScraper = "*"

// ParseScrapers reads who may reach the exporters' metrics port: AnyScraper
// for any source (nil), or a namespace label selector in kubectl's form
// ("metrics=enabled", "team in (sre,monitoring)"), whose namespaces' pods
// may. Empty is refused rather than read as "every namespace".
func ParseScrapers(s string) (*metav1.LabelSelector, error) {
	s = strings.TrimSpace(s)
	switch s {
	case AnyScraper:
		return nil, nil
	case "":
		return nil, fmt.Errorf("%s is empty: give a namespace label selector, or %q for any source", ExporterScrapersEnv, AnyScraper)
	}
	sel, err := metav1.ParseToLabelSelector(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ExporterScrapersEnv, err)
	}
	// Empty as nil, as the API server returns them, so that the applied
	// NetworkPolicy compares equal to the desired one.
	if len(sel.MatchLabels) == 0 {
		sel.MatchLabels = nil
	}
	if len(sel.MatchExpressions) == 0 {
		sel.MatchExpressions = nil
	}
	return sel, nil
}

// Requeue intervals.
const (
	// unreachableRetry is how soon a cluster with unreachable nodes is looked
	// at again, besides the pod events that usually come first.
	unreachableRetry = 15 * time.Second
	// maxUnreachableRetry bounds unreachableRetryAfter.
	maxUnreachableRetry = 2 * time.Minute
	// progressRetry follows a run that left work, such as gossip to settle.
	progressRetry = 2 * time.Second
	// resync checks a healthy cluster for drift that raises no Kubernetes
	// event, such as a failover.
	resync = 5 * time.Minute
)

// unreachableRetryAfter is how soon a cluster whose nodes have been
// unreachable for the duration since is looked at again: unreachableRetry
// at first, then half the time it has been unreachable, up to
// maxUnreachableRetry. Pod events still wake it at once. A cluster that a
// tenant keeps unreachable, with a NetworkPolicy that drops the manager's
// packets or an image that never listens, costs the shared workers a dial
// timeout ever less often.
func unreachableRetryAfter(since time.Duration) time.Duration {
	return min(max(since/2, unreachableRetry), maxUnreachableRetry)
}

// DrainGrace is how long the nodes a scale-down removes stay in the
// cluster once they serve no slot: clients whose slot map is older than
// the move still reach them and are redirected (MOVED), and refresh their
// map, instead of meeting a node already reset (CLUSTERDOWN). Several
// cluster-node-timeouts, so that gossip has spread the new owners too.
const DrainGrace = 15 * time.Second

// drainGrace tells whether leaving nodes found drained at since (nil: not
// yet) still stay in the cluster at now, and for how much longer.
func drainGrace(since *metav1.Time, now time.Time) (keep bool, left time.Duration) {
	if since == nil {
		return true, 0
	}
	left = since.Add(DrainGrace).Sub(now)
	return left > 0, max(left, 0)
}

// Descriptor registers the controller with the manager.
func Descriptor() reconciler.Descriptor {
	return reconciler.Descriptor{
		Name:        Name,
		Description: "RedisCluster (cache.example.com/v1): a Redis Cluster that scales up and down without losing keys",
		AddToScheme: cachev1.AddToScheme,
		For:         &cachev1.RedisCluster{},
		// Pods are not created by the controller but read to reach the
		// nodes; listing them here keeps the cache to managed pods.
		// Jobs: the restore Job of a cluster created with spec.restoreFrom.
		Managed: []client.Object{&corev1.Service{}, &appsv1.StatefulSet{}, &policyv1.PodDisruptionBudget{}, &networkingv1.NetworkPolicy{}, &corev1.Pod{}, &batchv1.Job{}},
		// Secrets: the ones a RedisCluster names, and the ones it generates;
		// Secrets and ConfigMaps: those a restore's Job mounts.
		Referenced:   []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		ImageEnv:     ImageEnv,
		DefaultImage: DefaultImage,
		// The exporter sidecar's.
		ExporterImageEnv:        ExporterImageEnv,
		DefaultExporterImage:    DefaultExporterImage,
		ExporterScrapersEnv:     ExporterScrapersEnv,
		DefaultExporterScrapers: DefaultExporterScrapers,
		Setup:                   reconciler.SetupWith(NewReconciler),
	}
}

// Resolver returns host:port of the node that runs in the named pod of rc.
type Resolver func(ctx context.Context, rc *cachev1.RedisCluster, pod string) (string, error)

// MaxSlotsPerRun bounds the slots one reconcile moves, so that status
// shows the progress of a long rebalance.
const MaxSlotsPerRun = 2048

// AdminRunTimeout bounds one redisadmin run of a reconcile. A tenant's
// image decides how its nodes answer: nodes that answer each command just
// before the read timeout would otherwise hold a worker for as long as
// the run has commands. It leaves ample time for MaxSlotsPerRun slots, and
// a run cut short resumes in the next reconcile.
const AdminRunTimeout = 5 * time.Minute

// Reconciler reconciles RedisClusters.
type Reconciler struct {
	reconciler.Flow[*cachev1.RedisCluster, *scope]
	client client.Client
	// reader reads the API server directly, to tell a missing Secret from
	// one the cache does not hold.
	reader client.Reader
	// children applies the Services, the PodDisruptionBudget and the
	// StatefulSet, and records their events.
	children reconciler.Children
	// secrets applies the generated Secrets, whose events reportSecret
	// records, and remembers the ones it created until the cache has them.
	secrets apply.Children
	events  events.Recorder
	// images are the pods' images unless a spec names its own.
	images Images
	// scrapers select the namespaces whose pods may reach the exporters'
	// metrics port; nil admits any source.
	scrapers *metav1.LabelSelector
	// resolve reaches the nodes: at their pods' IPs.
	resolve   Resolver
	adminOpts redisadmin.Options
	clock     clock.PassiveClock
	// podMonitors keeps the PodMonitors where the cluster serves them;
	// SetupWithManager starts its discovery with the manager. No
	// finalizer deletes them: their owner reference does.
	podMonitors *podmonitor.Keeper
	// canaries probes the write canaries (canary.go); canaryLost
	// reconciles a cluster whose canary found a loss.
	canaries   *rediscanary.Runner
	canaryLost chan event.TypedGenericEvent[*cachev1.RedisCluster]
	// restoreImage is the restore Jobs' image (RestoreImageEnv).
	restoreImage string
	// backupsServed says whether the API server serves
	// RedisClusterBackups, which a restore waits for and watches.
	backupsServed bool
}

// scope is what the phases of one reconcile share.
type scope struct {
	rc *cachev1.RedisCluster
	// running is the StatefulSet's size when the reconcile began: never
	// below the pods that still serve slots, since a shrink waits for the
	// cluster phase.
	running int32
	// topo is the cluster this reconcile drives towards, from rc and
	// running. Every phase reads it from here, so that they all work on
	// the same nodes.
	topo redisadmin.Topology
	// access is what the nodes must enforce, from the Secrets.
	access redisadmin.Access
	// operatorSecret is <name>-operator as the secrets phase applied it.
	operatorSecret *corev1.Secret
	// tls is the TLS Secret's material, nil without TLS.
	tls *TLSMaterial
	// statefulSet is rc's StatefulSet when the reconcile began, nil
	// before it exists.
	statefulSet *appsv1.StatefulSet
	// busTLS is whether the nodes run a TLS bus with <name>-bus (BusTLS).
	busTLS bool
	// accessPending says what the access phase left for later.
	accessPending string
	// accessDone is true when the access phase found every node enforcing
	// s.access: the restore Job starts only then, when every node has its
	// user.
	accessDone bool
	// passwordsRefused are the nodes that refuse every password of the
	// default user the operator knows, as the access phase found them.
	passwordsRefused []string
	// pods are the cluster's pods by name, as the cluster phase read them
	// from the cache after its Redis run.
	pods map[string]*corev1.Pod
	// cluster is what the cluster phase found and did.
	cluster redisadmin.Result
	// settled is true when the cluster phase found nothing to do: every
	// node reachable and met, every slot served where it belongs, and
	// cluster_state ok. Only then may a rollout take its next step.
	settled bool
	// restoreJob is the restore Job when it exists, and backup the
	// Complete backup to restore before it does (restore.go).
	restoreJob *batchv1.Job
	backup     *cachev1.RedisClusterBackup
}

// NewReconciler returns a Reconciler whose nodes run opts.Image unless a
// RedisCluster names its own.
func NewReconciler(mgr ctrl.Manager, opts reconciler.Options) (*Reconciler, error) {
	if opts.ExporterScrapers == "" {
		opts.ExporterScrapers = DefaultExporterScrapers
	}
	scrapers, err := ParseScrapers(opts.ExporterScrapers)
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		scrapers:  scrapers,
		client:    mgr.GetClient(),
		reader:    mgr.GetAPIReader(),
		events:    reconciler.EventRecorder(mgr, Name),
		images:    Images{Redis: opts.ImageOr(DefaultImage), Exporter: opts.ExporterImageOr(DefaultExporterImage)},
		resolve:   PodIPResolver(mgr.GetClient()),
		adminOpts: redisadmin.Options{MaxSlotsPerRun: MaxSlotsPerRun, RunTimeout: AdminRunTimeout},
		clock:     opts.ClockOrReal(),
	}
	r.restoreImage = os.Getenv(RestoreImageEnv)
	if r.restoreImage == "" {
		r.restoreImage = DefaultRestoreImage
	}
	if r.backupsServed, err = manager.Serves(mgr, &cachev1.RedisClusterBackup{}); err != nil {
		return nil, fmt.Errorf("asking whether the API server serves RedisClusterBackups: %w", err)
	}
	r.children = reconciler.Children{Client: r.client, Events: r.events}
	podMonitors, err := podmonitor.NewKeeper(mgr, r.events, "RedisCluster", podmonitor.Reasons{
		Created: cachev1.ReasonPodMonitorCreated,
		Updated: cachev1.ReasonPodMonitorUpdated,
		Deleted: cachev1.ReasonPodMonitorDeleted,
	})
	if err != nil {
		return nil, err
	}
	r.podMonitors = podMonitors
	if err := r.setupCanaries(mgr); err != nil {
		return nil, err
	}
	r.Flow = reconciler.Flow[*cachev1.RedisCluster, *scope]{
		Client:    r.client,
		Events:    r.events,
		NewObject: func() *cachev1.RedisCluster { return &cachev1.RedisCluster{} },
		NewScope:  func(rc *cachev1.RedisCluster) *scope { return &scope{rc: rc} },
		Phases: []reconciler.NamedPhase[*scope]{
			{Name: "restore-source", Run: r.reconcileRestoreSource},
			{Name: "secrets", Run: r.reconcileSecrets},
			{Name: "children", Run: r.reconcileChildren},
			{Name: "canary", Run: r.reconcileCanary},
			{Name: "podmonitor", Run: r.reconcilePodMonitor},
			{Name: "access", Run: r.reconcileAccess},
			{Name: "cluster", Run: r.reconcileCluster},
			{Name: "restore", Run: r.reconcileRestore},
			{Name: "rollout", Run: r.reconcileRollout},
		},
		ObservedGeneration: func(rc *cachev1.RedisCluster) *int64 { return &rc.Status.ObservedGeneration },
		Gone: func(key types.NamespacedName) {
			forgetMetrics(key.Namespace, key.Name)
			r.canaries.Remove(key)
		},
	}
	return r, nil
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

// SetupWithManager watches RedisClusters, their children, their pods,
// whose IP changes the nodes must be told about, and the Secrets they name.
// PodMonitors are not watched (see podmonitor.Watch): one changed by hand
// is corrected at the RedisCluster's next reconcile, and every
// RedisCluster is reconciled once when the kind becomes served or goes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	podMonitorsChanged, err := podmonitor.Watch(mgr, r.podMonitors, func(ctx context.Context) ([]*cachev1.RedisCluster, error) {
		list := &cachev1.RedisClusterList{}
		if err := r.client.List(ctx, list); err != nil {
			return nil, err
		}
		out := make([]*cachev1.RedisCluster, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	b := reconciler.NewControllerBuilder(mgr, Name, r, &cachev1.RedisCluster{},
		[]reconciler.Reported{reconciler.ReportOf(&batchv1.Job{}, jobstatus.Of)},
		[]client.Object{&corev1.Secret{}, &corev1.Service{}, &appsv1.StatefulSet{}, &policyv1.PodDisruptionBudget{}, &networkingv1.NetworkPolicy{}}).
		// Pods belong to the StatefulSet; the instance label names the cluster.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToCluster)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.secretToClusters)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.inputToRestores)).
		WatchesRawSource(podMonitorsChanged).
		WatchesRawSource(r.canaryLossSource())
	if r.backupsServed {
		// A restore waits for its backup to complete, without polling.
		b = b.Watches(&cachev1.RedisClusterBackup{}, handler.EnqueueRequestsFromMapFunc(r.backupToClusters))
	}
	return b.Complete(r)
}

// secretToClusters finds the RedisClusters of the Secret's namespace that
// name it for their password or certificate, or whose restore waits for
// it.
func (r *Reconciler) secretToClusters(ctx context.Context, obj client.Object) []reconcile.Request {
	key := backupinputs.ReferenceKey(backupinputs.KindSecret, obj.GetName())
	return r.clustersWanting(ctx, obj, func(rc *cachev1.RedisCluster) bool {
		return ReferencesSecret(rc, obj.GetName()) || r.restoreWaitsFor(ctx, rc, key)
	})
}

// clustersWanting lists the RedisClusters of obj's namespace for which
// wants is true.
func (r *Reconciler) clustersWanting(ctx context.Context, obj client.Object, wants func(*cachev1.RedisCluster) bool) []reconcile.Request {
	list := &cachev1.RedisClusterList{}
	if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing RedisClusters for a change", "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if rc := &list.Items[i]; wants(rc) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rc)})
		}
	}
	return out
}

// ReferencesSecret reports whether rc names the Secret for its password
// or its certificate.
func ReferencesSecret(rc *cachev1.RedisCluster, name string) bool {
	if rc.Spec.Auth != nil && rc.Spec.Auth.PasswordSecret != nil && rc.Spec.Auth.PasswordSecret.Name == name {
		return true
	}
	return rc.Spec.TLS != nil && rc.Spec.TLS.SecretName == name
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
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusters/status,verbs=patch
// +kubebuilder:rbac:groups=cache.example.com,resources=redisclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;create;patch;delete

// reconcileChildren applies the Services, the PodDisruptionBudget, the
// NetworkPolicy and the StatefulSet, and works out the reconcile's topology. The StatefulSet's
// size never drops below the pods that still serve slots: while a shrink
// is under way, reconcileCluster applies the StatefulSet after the Redis
// run, with the size that run allows, so that it is applied once per
// reconcile. A child that is not in place yet stops the reconcile here.
func (r *Reconciler) reconcileChildren(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	s.running = Replicas(rc)
	if existing := s.statefulSet; existing != nil && existing.Spec.Replicas != nil && *existing.Spec.Replicas > s.running {
		s.running = *existing.Spec.Replicas
	}
	s.topo = Topology(rc, s.running)
	for _, child := range []reconciler.Child{
		{Object: DesiredHeadlessService(rc), Created: cachev1.ReasonServiceCreated, Updated: cachev1.ReasonServiceUpdated},
		{Object: DesiredPodDisruptionBudget(rc), Created: cachev1.ReasonPodDisruptionBudgetCreated, Updated: cachev1.ReasonPodDisruptionBudgetUpdated},
		{Object: DesiredNetworkPolicy(rc, r.scrapers), Created: cachev1.ReasonNetworkPolicyCreated, Updated: cachev1.ReasonNetworkPolicyUpdated},
	} {
		if _, result, err := r.children.Apply(ctx, rc, child); result.Stop {
			return result, err
		}
	}
	// Until a restore is complete there is no client Service, so that no
	// client sees the cluster without the backup's keys: the restore
	// phase creates it once they are loaded.
	if !restoring(rc) {
		child := reconciler.Child{Object: DesiredClientService(rc), Created: cachev1.ReasonServiceCreated, Updated: cachev1.ReasonServiceUpdated}
		if _, result, err := r.children.Apply(ctx, rc, child); result.Stop {
			return result, err
		}
	}
	if s.shrinking() {
		return reconciler.Result{}, nil
	}
	return r.applyStatefulSet(ctx, s, s.running)
}

// reconcilePodMonitor keeps the RedisCluster's PodMonitor where the
// cluster serves the kind: created or corrected while the exporter runs
// and the PodMonitor is not disabled, deleted otherwise; nothing, and no
// event, where the kind is not served.
func (r *Reconciler) reconcilePodMonitor(ctx context.Context, s *scope) (reconciler.Result, error) {
	return r.podMonitors.Reconcile(ctx, s.rc, s.rc.Spec.Monitoring.Shared(), PodMonitorTarget(s.rc))
}

// shrinking reports whether the StatefulSet runs more pods than rc wants:
// the leaving nodes must be drained and forgotten before it shrinks.
func (s *scope) shrinking() bool { return s.running > Replicas(s.rc) }

// applyStatefulSet applies rc's StatefulSet with replicas pods. Fewer pods
// than s.running is the last step of a shrink, which its own event tells.
func (r *Reconciler) applyStatefulSet(ctx context.Context, s *scope, replicas int32) (reconciler.Result, error) {
	rc := s.rc
	child := reconciler.Child{Object: DesiredStatefulSet(rc, r.images, replicas, s.busTLS), Created: cachev1.ReasonStatefulSetCreated, Updated: cachev1.ReasonStatefulSetUpdated}
	scaledDown := replicas < s.running
	if scaledDown {
		child.Updated = ""
	}
	applied, result, err := r.children.Apply(ctx, rc, child)
	if result.Stop {
		return result, err
	}
	if scaledDown && applied.Result == apply.Updated {
		r.events.Normal(rc, cachev1.ReasonStatefulSetScaledDown, events.ActionScale, "Scaled StatefulSet %s from %d to %d pods: the leaving nodes serve no slot and are forgotten", child.Object.GetName(), s.running, replicas)
	}
	return reconciler.Result{}, nil
}

// reconcileCluster drives the Redis Cluster towards the reconcile's
// topology and records the outcome in the status. During a shrink it then
// applies the StatefulSet: smaller once the leaving nodes are drained and
// forgotten, so that no pod goes while it still serves slots, and
// otherwise at its current size.
func (r *Reconciler) reconcileCluster(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	now := r.clock.Now()
	var graceLeft time.Duration
	if s.shrinking() {
		s.topo.KeepDrained, graceLeft = drainGrace(rc.Status.LeavingDrainedSince, now)
	} else {
		rc.Status.LeavingDrainedSince = nil
	}
	res, err := r.admin(rc, s).Reconcile(ctx, s.topo)
	s.cluster = res
	if res.SlotsMoved > 0 {
		slotsMigrated.WithLabelValues(rc.Namespace, rc.Name).Add(float64(res.SlotsMoved))
	}
	if m := migrationStatus(res.Migration, r.clock.Now()); m != nil {
		rc.Status.Migration = m
	}
	r.recordActions(rc, res.Actions)
	running := s.running
	if s.shrinking() {
		if err == nil && !res.LeavingDrained {
			// Not drained (again, after another scale-down): the grace
			// starts when they are.
			rc.Status.LeavingDrainedSince = nil
		}
		if err == nil && res.LeavingDrained && rc.Status.LeavingDrainedSince == nil {
			since := metav1.NewTime(now)
			rc.Status.LeavingDrainedSince = &since
			graceLeft = DrainGrace
			r.events.Normal(rc, cachev1.ReasonLeavingNodesDrained, events.ActionScale,
				"%s serve no slot; they leave the cluster in %s and redirect clients with an old slot map meanwhile", redisadmin.ListNames(s.topo.Leaving), DrainGrace)
		}
		if err == nil && res.LeavingForgotten {
			running = Replicas(rc)
			rc.Status.LeavingDrainedSince = nil
		}
		if result, applyErr := r.applyStatefulSet(ctx, s, running); result.Stop {
			return result, applyErr
		}
	}
	pods, listErr := r.pods(ctx, rc)
	if listErr != nil {
		return reconciler.Result{}, listErr
	}
	s.pods = pods
	result, err := r.recordCluster(s, running, res, err)
	if err == nil && res.LeavingDrained && graceLeft > 0 {
		// The next step's time is known: no polling until then.
		result.RequeueAfter = graceLeft
	}
	return result, err
}

// recordActions records an event for each change pkg/redisadmin made to
// the nodes, with the action's reason.
func (r *Reconciler) recordActions(rc *cachev1.RedisCluster, actions []redisadmin.Action) {
	for _, a := range actions {
		r.events.Normal(rc, string(a.Reason), events.ActionReconcile, "%s", a.Message)
	}
}
