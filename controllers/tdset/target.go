package tdset

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// Finalizer holds a TDSet with a spec.scaleTargetRef until it has handed
// its target back (spec.onDelete). Container-mode TDSets do not get it:
// their children go with them through garbage collection.
const Finalizer = "schedule.rs/scale-target"

// TargetIndex is the field index of TDSets by the target they scale
// (targetKey), which finds the TDSets that name the same target.
const TargetIndex = "spec.scaleTargetRef"

// TargetResync is how often a TDSet with a scaleTargetRef looks at its
// target when the schedule does not change. Targets are watched
// (targetwatch.go), so this only covers a kind that was not served when
// the manager started, or a missed event.
const TargetResync = 10 * time.Minute

// targetProgressRetry is how soon a TDSet looks again while its target
// does not run the count it set yet, to report Ready.
const targetProgressRetry = 10 * time.Second

// DefaultScalableKinds are the kinds a TDSet may scale unless the manager's
// --tdset-scalable-kinds says otherwise: the built-in workloads with a
// scale subresource and this project's own. Not ReplicaSet: a
// Deployment controls nearly every one, and one it does not is refused
// anyway (controlled); name it with the flag to scale a bare ReplicaSet.
func DefaultScalableKinds() []schema.GroupKind {
	return []schema.GroupKind{
		{Group: "apps", Kind: "Deployment"},
		{Group: "apps", Kind: "StatefulSet"},
		{Group: "cache.example.com", Kind: "Memcached"},
		{Group: "cache.example.com", Kind: "RedisCluster"},
	}
}

// The scale subresource of every default kind; and a get of the kind, to
// tell a missing target from one without a scale subresource, with list
// and watch for the targets' cache (targetwatch.go), which notices someone
// else's change of the count and the target's available replicas. A kind added with
// --tdset-scalable-kinds needs the same rules in a Role of its own. (The
// finalizer is patched onto the TDSet: controller.go's patch on tdsets.)
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale,verbs=get;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/scale;redisclusters/scale,verbs=get;patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds;redisclusters,verbs=get;list;watch

// targetKey is TargetIndex's value for a reference: the group, kind and
// name (the index is listed within one namespace). Two apiVersions of one
// group name the same object.
func targetKey(ref *schedulev2.ScaleTargetRef) string {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return targetKeyOf(gv.Group, ref.Kind, ref.Name)
}

// targetKeyOf is TargetIndex's value for a group, kind and name.
func targetKeyOf(group, kind, name string) string { return group + "/" + kind + "/" + name }

// indexTarget is TargetIndex's function.
func indexTarget(obj client.Object) []string {
	tds, ok := obj.(*schedulev2.TDSet)
	if !ok || tds.Spec.ScaleTargetRef == nil {
		return nil
	}
	return []string{targetKey(tds.Spec.ScaleTargetRef)}
}

// needsFinalizer gives the finalizer to TDSets with a scale target only.
func needsFinalizer(tds *schedulev2.TDSet) bool { return tds.Spec.ScaleTargetRef != nil }

// reconcileTarget applies the schedule's count to the scaleTargetRef
// through its scale subresource, writing only when the count differs, and
// sets Ready. It is the last phase of a TDSet with a scaleTargetRef (the
// Deployment, HPA and Service phases are container mode's). A target that
// cannot be scaled (kind not allowed, unknown, missing, without a scale
// subresource, or claimed by an older TDSet) is reported and left alone.
func (r *Reconciler) reconcileTarget(ctx context.Context, s *scope) (reconciler.Result, error) {
	tds := s.tds
	ref := tds.Spec.ScaleTargetRef
	if ref == nil {
		return reconciler.Result{}, nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	what := fmt.Sprintf("%s %s", ref.Kind, ref.Name)
	stop := reconciler.StopAndRequeue(TargetResync)
	if !slices.Contains(r.scalableKinds, gvk.GroupKind()) {
		r.refuse(tds, schedulev2.ReasonTargetKindNotAllowed, fmt.Sprintf("%s is not a kind this manager scales (--tdset-scalable-kinds: %s)", gvk.GroupKind(), kindList(r.scalableKinds)))
		return reconciler.Result{Stop: true}, nil
	}
	if older, err := r.olderClaim(ctx, tds); err != nil {
		return reconciler.Result{}, err
	} else if older != "" {
		r.refuse(tds, schedulev2.ReasonTargetConflict, fmt.Sprintf("TDSet %s, created before this one, already scales %s", older, what))
		return stop, nil
	}
	sc, err := r.getScale(ctx, tds.Namespace, gvk, ref.Name)
	if apierrors.IsForbidden(err) {
		r.refuse(tds, schedulev2.ReasonTargetForbidden, forbiddenMessage(what))
		return stop, nil
	}
	if reason, msg, ok := r.unscalable(ctx, tds.Namespace, gvk, ref.Name, err); ok {
		r.refuse(tds, reason, msg)
		return stop, nil
	} else if err != nil {
		return reconciler.Result{}, err
	}
	target, err := s.target, error(nil)
	if target == nil {
		target, err = r.getTarget(ctx, tds.Namespace, gvk, ref.Name)
	}
	if apierrors.IsForbidden(err) {
		r.refuse(tds, schedulev2.ReasonTargetForbidden, forbiddenMessage(what))
		return stop, nil
	} else if err != nil {
		return reconciler.Result{}, err
	}
	if reason, msg := controlled(target); reason != "" {
		r.refuse(tds, reason, msg)
		return stop, nil
	}

	if hpaRefOf(tds) == "" {
		// Setting the replicas of a target an HPA scales would fight it.
		if refused, err := r.autoscaled(ctx, tds); err != nil {
			return reconciler.Result{}, err
		} else if refused {
			return stop, nil
		}
	}

	if hpaRefOf(tds) != "" {
		// The HPA owns the target's replicas: the schedule is its floor.
		return r.reconcileHPA(ctx, s, sc, target)
	}
	st := targetStatusOf(tds)
	st.ObservedReplicas = ptr.To(sc.Status.Replicas)
	st.EstimatedLeadTime = nil
	if s.estimatedLead != nil {
		st.EstimatedLeadTime = &metav1.Duration{Duration: *s.estimatedLead}
	}
	if st.OriginalReplicas == nil {
		// Recorded, and written to the status, before the first change:
		// a restart between the two would otherwise take the TDSet's own
		// count for the original.
		st.OriginalReplicas = ptr.To(boundReplicas(sc.Spec.Replicas))
		st.Replicas = ptr.To(sc.Spec.Replicas)
		conditions.MarkFalse(tds, conditions.Ready, schedulev2.ReasonTargetProgressing, fmt.Sprintf("Recorded %s's %d replicas before scaling it", what, sc.Spec.Replicas))
		// Told even when the schedule asks for the count the target
		// already has: the user sees which TDSet now drives it.
		r.events.Normal(tds, schedulev2.ReasonTargetAdopted, events.ActionScale, "Scaling %s by the schedule from now on; it had %d replicas", what, sc.Spec.Replicas)
		return reconciler.StopAndRequeue(time.Nanosecond), nil
	}

	want := s.plan.Replicas
	if tds.Spec.Suspend {
		want = sc.Spec.Replicas
	}
	if sc.Spec.Replicas != want {
		if err := r.setScale(ctx, tds.Namespace, gvk, ref.Name, want); apierrors.IsForbidden(err) {
			r.refuse(tds, schedulev2.ReasonTargetForbidden, forbiddenMessage(what))
			return stop, nil
		} else if err != nil {
			countScaleError(tds)
			return reconciler.Result{}, err
		}
		r.events.Normal(tds, schedulev2.ReasonTargetScaled, events.ActionScale, "Scaled %s from %d to %d (%s)", what, sc.Spec.Replicas, want, describe(s.calendar, s.plan.Rule, s.plan.Early))
	}
	if st.Replicas == nil || *st.Replicas != want {
		st.AvailableSince = nil
	}
	st.Replicas = ptr.To(want)
	avail, observed := availableOf(target, sc.Status.Replicas)
	tds.Status.AvailableReplicas = ptr.To(avail)
	recordAvailable(tds)
	msg := fmt.Sprintf("%s has %d/%d replicas available (%d running)", what, avail, want, sc.Status.Replicas)
	if !observed {
		msg += "; its controller has not seen its latest spec yet"
	}
	if tds.Spec.Suspend {
		msg += " (the count kept while suspended)"
	}
	if sc.Spec.Replicas == want && sc.Status.Replicas == want && avail >= want && observed {
		if st.AvailableSince == nil {
			st.AvailableSince = &metav1.Time{Time: s.now.Truncate(time.Second)}
		}
		conditions.MarkTrue(tds, conditions.Ready, schedulev2.ReasonTargetAvailable, msg)
		return stop, nil
	}
	conditions.MarkFalse(tds, conditions.Ready, schedulev2.ReasonTargetProgressing, msg)
	return reconciler.StopAndRequeue(targetProgressRetry), nil
}

// targetStatusOf is status.target for the TDSet's scaleTargetRef, made
// anew when it is of another target.
func targetStatusOf(tds *schedulev2.TDSet) *schedulev2.TargetStatus {
	ref, st := tds.Spec.ScaleTargetRef, tds.Status.Target
	if st == nil || st.APIVersion != ref.APIVersion || st.Kind != ref.Kind || st.Name != ref.Name {
		st = &schedulev2.TargetStatus{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
		tds.Status.Target = st
	}
	return st
}

// refuse reports a target the TDSet does not scale: Ready=False with the
// reason, and a Warning event when the condition changes.
func (r *Reconciler) refuse(tds *schedulev2.TDSet, reason, msg string) {
	msg += "; nothing is written to it"
	if conditions.MarkFalse(tds, conditions.Ready, reason, msg) {
		r.events.Warning(tds, reason, events.ActionReconcile, "%s", msg)
	}
}

// olderClaim returns the name of a TDSet of the namespace that names the
// same target and was created before tds (by creation time, then name), or
// "" when tds is the first.
func (r *Reconciler) olderClaim(ctx context.Context, tds *schedulev2.TDSet) (string, error) {
	list := &schedulev2.TDSetList{}
	if err := r.client.List(ctx, list, client.InNamespace(tds.Namespace), client.MatchingFields{TargetIndex: targetKey(tds.Spec.ScaleTargetRef)}); err != nil {
		return "", err
	}
	for i := range list.Items {
		other := &list.Items[i]
		if other.UID == tds.UID {
			continue
		}
		a, b := other.CreationTimestamp.Time, tds.CreationTimestamp.Time
		if a.Before(b) || (a.Equal(b) && other.Name < tds.Name) {
			return other.Name, nil
		}
	}
	return "", nil
}

// unscalable tells, from getScale's error, why a target cannot be scaled:
// an unknown kind, or a scale subresource that is not found, which is
// either a missing object or a kind without the subresource (a get of the
// object itself tells which). ok is false for success and for errors worth
// a retry.
func (r *Reconciler) unscalable(ctx context.Context, ns string, gvk schema.GroupVersionKind, name string, err error) (reason, msg string, ok bool) {
	what := fmt.Sprintf("%s %s", gvk.Kind, name)
	switch {
	case err == nil:
		return "", "", false
	case meta.IsNoMatchError(err):
		return schedulev2.ReasonTargetKindUnknown, fmt.Sprintf("the API server serves no kind %s in %s", gvk.Kind, gvk.GroupVersion()), true
	case !apierrors.IsNotFound(err):
		return "", "", false
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	switch getErr := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); {
	case apierrors.IsNotFound(getErr):
		return schedulev2.ReasonTargetNotFound, fmt.Sprintf("%s does not exist in namespace %s", what, ns), true
	case getErr == nil:
		return schedulev2.ReasonTargetNotScalable, fmt.Sprintf("%s has no scale subresource", what), true
	case apierrors.IsForbidden(getErr):
		return schedulev2.ReasonTargetForbidden, forbiddenMessage(what), true
	default:
		return "", "", false
	}
}

// controlled tells whether another controller owns the target: one with a
// controller ownerReference (another TDSet's Deployment, a Deployment's
// ReplicaSet) or this operator's managed-by label (a Memcached's
// Deployment, a RedisCluster's StatefulSet). That controller sets the
// count back as soon as the TDSet changes it, and the two would fight
// through the watch, so such a target is refused.
func controlled(target *unstructured.Unstructured) (reason, msg string) {
	what := fmt.Sprintf("%s %s", target.GetKind(), target.GetName())
	if owner := metav1.GetControllerOfNoCopy(target); owner != nil {
		return schedulev2.ReasonTargetControlled, fmt.Sprintf("%s is controlled by %s %s, which sets its replicas", what, owner.Kind, owner.Name)
	}
	if target.GetLabels()[ownership.LabelManagedBy] == ownership.ManagedBy {
		return schedulev2.ReasonTargetControlled, fmt.Sprintf("%s is managed by %s (label %s), which sets its replicas", what, ownership.ManagedBy, ownership.LabelManagedBy)
	}
	return "", ""
}

// getTarget reads the scale target as the targets' cache holds it
// (trimTarget): from that cache, or from the API server for a kind the
// cache does not watch (not served when the manager started) or an object
// it does not hold yet (created a moment ago).
func (r *Reconciler) getTarget(ctx context.Context, ns string, gvk schema.GroupVersionKind, name string) (*unstructured.Unstructured, error) {
	key := types.NamespacedName{Namespace: ns, Name: name}
	if r.targets != nil {
		// The cache watches each kind in its preferred version.
		if mapping, err := r.client.RESTMapper().RESTMapping(gvk.GroupKind()); err == nil {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(mapping.GroupVersionKind)
			err := r.targets.Get(ctx, key, obj)
			if err == nil {
				return obj, nil
			}
			if !apierrors.IsNotFound(err) && !errors.As(err, new(*cache.ErrResourceNotCached)) {
				return nil, err
			}
		}
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := r.reader.Get(ctx, key, obj); err != nil {
		return nil, err
	}
	return trimTarget(obj), nil
}

// zeroOmitted are the kinds whose status leaves availableReplicas out
// when it is 0 (omitempty), so that its absence means none is available.
var zeroOmitted = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}: true,
	{Group: "apps", Kind: "ReplicaSet"}: true,
}

// availableOf is how many of the target's replicas are available
// (docs/tdset.md): its status.availableReplicas where its kind reports it
// (Deployment, ReplicaSet, StatefulSet), else its status.readyReplicas
// where reported (Memcached), else running, the scale subresource's
// status.replicas (RedisCluster, or a kind that reports neither): a
// crash-looping pod runs but is not available. observed is false while
// the target's status.observedGeneration, where it reports one, is older
// than its generation: its counts are of an earlier spec.
func availableOf(target *unstructured.Unstructured, running int32) (available int32, observed bool) {
	observed = true
	if seen, ok := statusCount(target, "observedGeneration"); ok && seen < target.GetGeneration() {
		observed = false
	}
	if n, ok := statusCount(target, "availableReplicas"); ok {
		return boundCount(n), observed
	}
	if zeroOmitted[target.GroupVersionKind().GroupKind()] {
		return 0, observed
	}
	if n, ok := statusCount(target, "readyReplicas"); ok {
		return boundCount(n), observed
	}
	return running, observed
}

// statusCount is a whole number of the target's status, within 0 to an
// int32's range; ok is false when the field is absent or not a number (a
// custom kind's status may hold anything there).
func statusCount(target *unstructured.Unstructured, field string) (int64, bool) {
	n, ok := nestedNumber(target.Object, "status", field)
	if !ok {
		return 0, false
	}
	return int64(min(max(n, 0), math.MaxInt32)), true
}

// boundCount keeps a reported count within an int32's non-negative range.
func boundCount(n int64) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

// forbiddenMessage explains a target the API server does not let the
// manager read or scale: a kind added to --tdset-scalable-kinds without
// the rules of its own Role. Retrying would not help until the RBAC
// changes, which the next resync (or a change of the TDSet) notices.
func forbiddenMessage(what string) string {
	return fmt.Sprintf("the manager's role may not read or scale %s (a kind added to --tdset-scalable-kinds needs get and patch on <resource>/scale and get, list and watch on the resource)", what)
}

// The scale subresource is read and written with the manager's client
// (SubResource("scale") on unstructured objects) rather than
// k8s.io/client-go/scale: it maps any kind, custom resources included,
// with the manager's RESTMapper, shares the manager's rate limits, and
// needs no discovery client and ScaleKindResolver, because every kind and
// every custom resource serves its scale subresource as autoscaling/v1
// Scale. Subresource requests bypass the cache.

// getScale reads the target's scale subresource.
func (r *Reconciler) getScale(ctx context.Context, ns string, gvk schema.GroupVersionKind, name string) (*autoscalingv1.Scale, error) {
	raw := &unstructured.Unstructured{}
	raw.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := r.client.SubResource("scale").Get(ctx, targetObject(ns, gvk, name), raw); err != nil {
		return nil, err
	}
	sc := &autoscalingv1.Scale{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.Object, sc); err != nil {
		return nil, fmt.Errorf("reading the scale of %s %s: %w", gvk.Kind, name, err)
	}
	return sc, nil
}

// setScale sets the target's spec.replicas through its scale subresource,
// with a merge patch of that one field.
func (r *Reconciler) setScale(ctx context.Context, ns string, gvk schema.GroupVersionKind, name string, replicas int32) error {
	p := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	return r.client.SubResource("scale").Patch(ctx, targetObject(ns, gvk, name), client.RawPatch(types.MergePatchType, p))
}

// targetObject is the target as the client addresses it.
func targetObject(ns string, gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}

// handBack is the finalizer's cleanup. With spec.autoscaling.hpaRef it
// gives the HPA its bounds back and leaves the target to it
// (handBackHPA). Otherwise, with onDelete Restore it sets the
// count the target had before the TDSet first scaled it; with Keep (or
// nothing recorded, or a target this TDSet never scaled) it leaves the
// target alone. A target that is gone, or of a kind no longer served or
// allowed, or that the manager's role may not read or scale (a Warning
// event), holds nothing up: the namespace's deletion must not wait on
// RBAC.
func (r *Reconciler) handBack(ctx context.Context, tds *schedulev2.TDSet) error {
	ref, st := tds.Spec.ScaleTargetRef, tds.Status.Target
	if ref == nil {
		return nil
	}
	if hpaRefOf(tds) != "" {
		return r.handBackHPA(ctx, tds)
	}
	what := fmt.Sprintf("%s %s", ref.Kind, ref.Name)
	owned := st != nil && st.OriginalReplicas != nil && st.APIVersion == ref.APIVersion && st.Kind == ref.Kind && st.Name == ref.Name
	if tds.Spec.OnDelete != schedulev2.OnDeleteRestore || !owned {
		if owned {
			r.events.Normal(tds, schedulev2.ReasonTargetKept, events.ActionFinalize, "Left %s at its current replicas (onDelete Keep)", what)
		}
		return nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if !slices.Contains(r.scalableKinds, gvk.GroupKind()) {
		return nil
	}
	want := boundReplicas(*st.OriginalReplicas)
	forbidden := func() error {
		r.events.Warning(tds, schedulev2.ReasonTargetForbidden, events.ActionFinalize, "Left %s as it is instead of restoring its %d replicas: %s", what, want, forbiddenMessage(what))
		return nil
	}
	sc, err := r.getScale(ctx, tds.Namespace, gvk, ref.Name)
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return nil
	case apierrors.IsForbidden(err):
		return forbidden()
	case err != nil:
		return err
	}
	if sc.Spec.Replicas == want {
		return nil
	}
	if err := r.setScale(ctx, tds.Namespace, gvk, ref.Name, want); apierrors.IsNotFound(err) {
		return nil
	} else if apierrors.IsForbidden(err) {
		return forbidden()
	} else if err != nil {
		return err
	}
	r.events.Normal(tds, schedulev2.ReasonTargetRestored, events.ActionFinalize, "Restored %s from %d to the %d replicas it had before (onDelete Restore)", what, sc.Spec.Replicas, want)
	return nil
}

// boundReplicas clamps a count to status.target.originalReplicas' bounds,
// 0 to MaxReplicas: a target's own count can be larger, and a status
// stored before the bound, or written by someone else, may be anything.
func boundReplicas(n int32) int32 { return min(max(n, 0), schedulev2.MaxReplicas) }

// kindList writes kinds as the flag takes them, "Deployment.apps".
func kindList(kinds []schema.GroupKind) string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.String()
	}
	return strings.Join(out, ", ")
}
