package tdset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// This file drives an existing HorizontalPodAutoscaler
// (spec.autoscaling.hpaRef): the schedule's count becomes its minReplicas,
// and the TDSet never writes the target's replicas, which the HPA owns.
// Without hpaRef, a TDSet whose target an HPA scales writes nothing
// (TargetAutoscaled): the two would fight.

// HPARefIndex is the field index of TDSets by the name of the HPA their
// spec.autoscaling.hpaRef names, which finds the TDSets an HPA's change
// concerns.
const HPARefIndex = "spec.autoscaling.hpaRef"

// HPATargetIndex is the field index of the autoscalers' cache
// (hpawatch.go) of HPAs by their scaleTargetRef (targetKeyOf), which
// finds the HPAs that scale a TDSet's target.
const HPATargetIndex = "spec.scaleTargetRef"

// hpaRefOf is the name spec.autoscaling.hpaRef names, "" without one.
func hpaRefOf(tds *schedulev2.TDSet) string {
	if a := tds.Spec.Autoscaling; a != nil && a.HPARef != nil {
		return a.HPARef.Name
	}
	return ""
}

// indexHPARef is HPARefIndex's function.
func indexHPARef(obj client.Object) []string {
	tds, ok := obj.(*schedulev2.TDSet)
	if !ok || tds.Spec.ScaleTargetRef == nil || hpaRefOf(tds) == "" {
		return nil
	}
	return []string{hpaRefOf(tds)}
}

// hpaTargetKey is the targetKeyOf of what an HPA scales.
func hpaTargetKey(hpa *autoscalingv2.HorizontalPodAutoscaler) string {
	ref := hpa.Spec.ScaleTargetRef
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return targetKeyOf(gv.Group, ref.Kind, ref.Name)
}

// indexHPATarget is HPATargetIndex's function.
func indexHPATarget(obj client.Object) []string {
	hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return nil
	}
	return []string{hpaTargetKey(hpa)}
}

// getHPA reads an HPA from the autoscalers' cache, or from the API server
// when there is none (a reconciler on an uncached client).
func (r *Reconciler) getHPA(ctx context.Context, ns, name string) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	reader := r.autoscalers
	if reader == nil {
		reader = r.reader
	}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, hpa); err != nil {
		return nil, err
	}
	return hpa, nil
}

// autoscalersOf lists the names of the HPAs of a namespace that scale the
// target of key (targetKeyOf).
func (r *Reconciler) autoscalersOf(ctx context.Context, ns, key string) ([]string, error) {
	list := &autoscalingv2.HorizontalPodAutoscalerList{}
	if r.autoscalers != nil {
		if err := r.autoscalers.List(ctx, list, client.InNamespace(ns), client.MatchingFields{HPATargetIndex: key}); err != nil {
			return nil, err
		}
	} else if err := r.reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var names []string
	for i := range list.Items {
		if hpaTargetKey(&list.Items[i]) == key {
			names = append(names, list.Items[i].Name)
		}
	}
	return names, nil
}

// autoscaled refuses a target that an HPA scales while the TDSet has no
// hpaRef: ok is true when it did.
func (r *Reconciler) autoscaled(ctx context.Context, tds *schedulev2.TDSet) (ok bool, err error) {
	ref := tds.Spec.ScaleTargetRef
	names, err := r.autoscalersOf(ctx, tds.Namespace, targetKey(ref))
	if err != nil || len(names) == 0 {
		return false, err
	}
	r.refuse(tds, schedulev2.ReasonTargetAutoscaled, fmt.Sprintf(
		"HorizontalPodAutoscaler %s scales %s %s, and setting its replicas would fight it: set spec.autoscaling.hpaRef.name to %s to make the schedule its minReplicas",
		names[0], ref.Kind, ref.Name, names[0]))
	return true, nil
}

// otherAutoscalers lists the HPAs of ns other than name that scale ref,
// sorted.
func (r *Reconciler) otherAutoscalers(ctx context.Context, ns string, ref *schedulev2.ScaleTargetRef, name string) ([]string, error) {
	names, err := r.autoscalersOf(ctx, ns, targetKey(ref))
	if err != nil {
		return nil, err
	}
	others := slices.DeleteFunc(names, func(n string) bool { return n == name })
	slices.Sort(others)
	return others, nil
}

// hpaTargets tells whether an HPA scales ref (the same group, kind and
// name; any version of the group).
func hpaTargets(hpa *autoscalingv2.HorizontalPodAutoscaler, ref *schedulev2.ScaleTargetRef) bool {
	return hpaTargetKey(hpa) == targetKey(ref)
}

// HPABounds is what the TDSet sets on a driven HPA, and why.
type HPABounds struct {
	// Min and Max are the minReplicas and maxReplicas.
	Min, Max int32
	// Capped is true when the schedule's count was above the HPA's own
	// maxReplicas (spec.autoscaling.maxReplicas unset) and Min is that
	// maximum instead.
	Capped bool
}

// DesiredHPABounds is what a TDSet sets on the HPA it drives: the
// schedule's count as minReplicas, and spec.autoscaling.maxReplicas, when
// set, as maxReplicas, else the HPA's own maxReplicas (curMax), which
// then caps the count. Suspended, the recorded original bounds.
func DesiredHPABounds(a *schedulev2.Autoscaling, count, curMax int32, suspended bool, st *schedulev2.AutoscalerStatus) HPABounds {
	if suspended {
		return HPABounds{Min: ptr.Deref(st.OriginalMinReplicas, 1), Max: ptr.Deref(st.OriginalMaxReplicas, curMax)}
	}
	b := HPABounds{Min: max(count, 1), Max: curMax}
	if a != nil && a.MaxReplicas != 0 {
		b.Max = a.MaxReplicas
	}
	if b.Min > b.Max {
		b.Min, b.Capped = b.Max, true
	}
	return b
}

// boundHPA clamps an HPA's bound to status.target.autoscaler's, 1 to
// MaxReplicas.
func boundHPA(n int32) int32 { return min(max(n, 1), schedulev2.MaxReplicas) }

// reconcileHPA sets the minReplicas (and maxReplicas) of the HPA of
// spec.autoscaling.hpaRef, which must scale spec.scaleTargetRef, and sets
// Ready. It records the HPA's bounds once before its first change, and
// while suspended gives them back. sc is the target's scale subresource
// and target the target's scale and the target as cached.
func (r *Reconciler) reconcileHPA(ctx context.Context, s *scope, sc *autoscalingv1.Scale, target *unstructured.Unstructured) (reconciler.Result, error) {
	tds, ref, name := s.tds, s.tds.Spec.ScaleTargetRef, hpaRefOf(s.tds)
	stop := reconciler.StopAndRequeue(TargetResync)
	what := "HorizontalPodAutoscaler " + name
	hpa, err := r.getHPA(ctx, tds.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		r.refuse(tds, schedulev2.ReasonAutoscalerNotFound, fmt.Sprintf("%s (spec.autoscaling.hpaRef) does not exist in namespace %s; the TDSet sets its minReplicas once it is created", what, tds.Namespace))
		return stop, nil
	case apierrors.IsForbidden(err):
		r.refuse(tds, schedulev2.ReasonAutoscalerForbidden, fmt.Sprintf("the manager's role may not read %s", what))
		return stop, nil
	case err != nil:
		return reconciler.Result{}, err
	}
	if !hpaTargets(hpa, ref) {
		t := hpa.Spec.ScaleTargetRef
		r.refuse(tds, schedulev2.ReasonAutoscalerTargetMismatch, fmt.Sprintf("%s scales %s %s (%s), not spec.scaleTargetRef %s %s (%s)", what, t.Kind, t.Name, t.APIVersion, ref.Kind, ref.Name, ref.APIVersion))
		return stop, nil
	}
	others, err := r.otherAutoscalers(ctx, tds.Namespace, ref, name)
	if err != nil {
		return reconciler.Result{}, err
	}
	st := targetStatusOf(tds)
	running := sc.Status.Replicas
	avail, observed := availableOf(target, running)
	st.Replicas, st.ObservedReplicas = ptr.To(sc.Spec.Replicas), ptr.To(running)
	as := st.Autoscaler
	if as == nil || as.Name != name {
		as = &schedulev2.AutoscalerStatus{Name: name}
		st.Autoscaler = as
	}
	curMin, curMax := ptr.Deref(hpa.Spec.MinReplicas, 1), hpa.Spec.MaxReplicas
	if as.OriginalMinReplicas == nil || as.OriginalMaxReplicas == nil {
		// Recorded, and written to the status, before the first change,
		// as the target's original replicas are (reconcileTarget).
		as.OriginalMinReplicas, as.OriginalMaxReplicas = ptr.To(boundHPA(curMin)), ptr.To(boundHPA(curMax))
		as.MinReplicas, as.MaxReplicas = ptr.To(curMin), ptr.To(curMax)
		conditions.MarkFalse(tds, conditions.Ready, schedulev2.ReasonAutoscalerProgressing, fmt.Sprintf("Recorded %s's minReplicas %d and maxReplicas %d before changing them", what, curMin, curMax))
		r.events.Normal(tds, schedulev2.ReasonAutoscalerAdopted, events.ActionScale, "Setting the minReplicas of %s by the schedule from now on; it had minReplicas %d and maxReplicas %d", what, curMin, curMax)
		return reconciler.StopAndRequeue(1), nil
	}

	b := DesiredHPABounds(tds.Spec.Autoscaling, s.plan.Replicas, curMax, tds.Spec.Suspend, as)
	why := describe(s.calendar, s.plan.Rule, s.plan.Early)
	capped := ""
	if b.Capped {
		capped = fmt.Sprintf("; the schedule's %d replicas are capped at the HPA's maxReplicas %d (spec.autoscaling.maxReplicas is not set)", s.plan.Replicas, b.Max)
	}
	if curMin != b.Min || curMax != b.Max {
		patch := fmt.Appendf(nil, `{"spec":{"minReplicas":%d,"maxReplicas":%d}}`, b.Min, b.Max)
		obj := &autoscalingv2.HorizontalPodAutoscaler{}
		obj.Namespace, obj.Name = tds.Namespace, name
		if err := r.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); apierrors.IsForbidden(err) {
			r.refuse(tds, schedulev2.ReasonAutoscalerForbidden, fmt.Sprintf("the manager's role may not patch %s", what))
			return stop, nil
		} else if apierrors.IsNotFound(err) {
			return reconciler.StopAndRequeue(1), nil
		} else if err != nil {
			countScaleError(tds)
			return reconciler.Result{}, err
		}
		if tds.Spec.Suspend {
			r.events.Normal(tds, schedulev2.ReasonAutoscalerRestored, events.ActionScale, "Gave %s back its own minReplicas %d and maxReplicas %d (suspended; it had %d and %d)", what, b.Min, b.Max, curMin, curMax)
		} else {
			maxNote := ""
			if curMax != b.Max {
				maxNote = fmt.Sprintf(" and maxReplicas from %d to %d (spec.autoscaling.maxReplicas)", curMax, b.Max)
			}
			r.events.Normal(tds, schedulev2.ReasonAutoscalerBounded, events.ActionScale, "Set %s's minReplicas from %d to %d (%s)%s%s", what, curMin, b.Min, why, maxNote, capped)
		}
	}
	as.MinReplicas, as.MaxReplicas = ptr.To(b.Min), ptr.To(b.Max)
	tds.Status.AvailableReplicas = ptr.To(avail)
	recordAvailable(tds)

	msg := fmt.Sprintf("%s has minReplicas %d (%s) and maxReplicas %d%s; %s %s has %d available (%d running)", what, b.Min, why, b.Max, capped, ref.Kind, ref.Name, avail, running)
	if tds.Spec.Suspend {
		msg = fmt.Sprintf("suspended: %s has its own minReplicas %d and maxReplicas %d back; %s %s has %d available (%d running)", what, b.Min, b.Max, ref.Kind, ref.Name, avail, running)
	}
	if !observed {
		msg += "; its controller has not seen its latest spec yet"
	}
	if len(others) > 0 {
		msg = fmt.Sprintf("HorizontalPodAutoscaler %s also scales %s %s: two HPAs on one workload fight over its replicas, so the schedule's floor on %s holds only while %s wins; delete %s or move its metrics into %s. Meanwhile %s",
			strings.Join(others, ", "), ref.Kind, ref.Name, name, name, others[0], name, msg)
		// One event when the conflict starts, not one per change of the
		// counts the message ends with.
		started := true
		if prev := conditions.Get(tds, conditions.Ready); prev != nil {
			started = prev.Reason != schedulev2.ReasonAutoscalerAmbiguous
		}
		conditions.MarkFalse(tds, conditions.Ready, schedulev2.ReasonAutoscalerAmbiguous, msg)
		if started {
			r.events.Warning(tds, schedulev2.ReasonAutoscalerAmbiguous, events.ActionReconcile, "%s", msg)
		}
		return stop, nil
	}
	if avail >= b.Min && observed {
		conditions.MarkTrue(tds, conditions.Ready, schedulev2.ReasonAutoscalerAvailable, msg)
		return stop, nil
	}
	conditions.MarkFalse(tds, conditions.Ready, schedulev2.ReasonAutoscalerProgressing, msg)
	return reconciler.StopAndRequeue(targetProgressRetry), nil
}

// handBackHPA is the finalizer's cleanup with hpaRef: the HPA gets its
// recorded minReplicas and maxReplicas back, whatever spec.onDelete says
// (a calendar's floor left on someone else's HPA would surprise its
// owner), and the target's replicas, which the HPA owns, are not written.
// An HPA that is gone, or that the manager may not read or patch (a
// Warning event), holds nothing up.
func (r *Reconciler) handBackHPA(ctx context.Context, tds *schedulev2.TDSet) error {
	name := hpaRefOf(tds)
	var as *schedulev2.AutoscalerStatus
	if st := tds.Status.Target; st != nil {
		as = st.Autoscaler
	}
	if as == nil || as.Name != name || as.OriginalMinReplicas == nil || as.OriginalMaxReplicas == nil {
		return nil
	}
	what := "HorizontalPodAutoscaler " + name
	wantMin, wantMax := boundHPA(*as.OriginalMinReplicas), boundHPA(*as.OriginalMaxReplicas)
	wantMin = min(wantMin, wantMax)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: tds.Namespace, Name: name}, hpa)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsForbidden(err):
		r.events.Warning(tds, schedulev2.ReasonAutoscalerForbidden, events.ActionFinalize, "Left %s as it is instead of giving back its minReplicas %d and maxReplicas %d: the manager's role may not read it", what, wantMin, wantMax)
		return nil
	case err != nil:
		return err
	}
	curMin, curMax := ptr.Deref(hpa.Spec.MinReplicas, 1), hpa.Spec.MaxReplicas
	if curMin == wantMin && curMax == wantMax {
		return nil
	}
	patch := fmt.Appendf(nil, `{"spec":{"minReplicas":%d,"maxReplicas":%d}}`, wantMin, wantMax)
	if err := r.client.Patch(ctx, hpa, client.RawPatch(types.MergePatchType, patch)); apierrors.IsNotFound(err) {
		return nil
	} else if apierrors.IsForbidden(err) {
		r.events.Warning(tds, schedulev2.ReasonAutoscalerForbidden, events.ActionFinalize, "Left %s as it is instead of giving back its minReplicas %d and maxReplicas %d: the manager's role may not patch it", what, wantMin, wantMax)
		return nil
	} else if err != nil {
		return err
	}
	r.events.Normal(tds, schedulev2.ReasonAutoscalerRestored, events.ActionFinalize, "Gave %s back its own minReplicas %d and maxReplicas %d (the TDSet was deleted; it had %d and %d)", what, wantMin, wantMax, curMin, curMax)
	return nil
}
