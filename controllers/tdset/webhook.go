package tdset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
)

// The validating webhook covers what the schema's CEL rules cannot say
// clearly, and v2's whole schema again for v1 writes. matchPolicy
// Equivalent sends v1 requests too, converted to v2.
// +kubebuilder:webhook:path=/validate-schedule-rs-v2-tdset,mutating=false,failurePolicy=fail,sideEffects=None,groups=schedule.rs,resources=tdsets,verbs=create;update,versions=v2,name=vtdset-v2.schedule.rs,admissionReviewVersions=v1,matchPolicy=Equivalent

// SetupWebhooks registers the TDSet's webhooks with the manager's webhook
// server: /convert (v1 to and from the hub v2) and the v2 validator.
func SetupWebhooks(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &schedulev2.TDSet{}).
		WithValidator(&Validator{Clock: clock.RealClock{}}).
		Complete()
}

// Validator rejects TDSets whose schedule cannot be computed: an unknown
// time zone, windows that overlap on a weekday, a repeated exception date,
// and an override that has already ended when it is set; and TDSets that
// break a rule of v2's schema or carry v1's annotation schedule.rs/v2-data,
// which only a v1 write can get past the API server.
type Validator struct {
	// Clock says what time it is, to judge spec.override.until.
	Clock clock.PassiveClock
}

var _ admission.Validator[*schedulev2.TDSet] = &Validator{}

// ValidateCreate checks a new TDSet.
func (v *Validator) ValidateCreate(_ context.Context, tds *schedulev2.TDSet) (admission.Warnings, error) {
	if problems := v.problems(tds, nil); len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return nil, nil
}

// ValidateUpdate checks a changed TDSet. A problem the object already had
// is let through with a warning, so that an object stored before the
// webhook existed can still be edited (to fix it, suspend it or remove
// its finalizers); the controller reports it as Ready=False. Any problem
// it did not have is rejected, also beside kept ones.
func (v *Validator) ValidateUpdate(_ context.Context, old, tds *schedulev2.TDSet) (admission.Warnings, error) {
	had := map[string]bool{}
	for _, p := range v.problems(old, old) {
		had[p] = true
	}
	var warnings admission.Warnings
	var fresh []string
	for _, p := range v.problems(tds, old) {
		if had[p] {
			warnings = append(warnings, p+" (kept: the object had this problem before)")
		} else {
			fresh = append(fresh, p)
		}
	}
	if len(fresh) > 0 {
		return nil, errors.New(strings.Join(fresh, "\n"))
	}
	return warnings, nil
}

// ValidateDelete allows every deletion.
func (v *Validator) ValidateDelete(context.Context, *schedulev2.TDSet) (admission.Warnings, error) {
	return nil, nil
}

// problems lists what is wrong with tds, one message each, so that an
// update can tell the problems it keeps from new ones. The override's end
// is judged only when the override is new or changed (old is nil at
// create).
//
// A v1 write reaches storage checked only against v1's schema, so the
// whole object is held to v2's schema here (schedulev2.Validate), and a
// v1 annotation that conversion could not apply is refused
// (schedulev1.V2DataProblem): v1 and v2 admit the same objects.
func (v *Validator) problems(tds, old *schedulev2.TDSet) []string {
	var out []string
	if err := schedulev1.V2DataProblem(tds); err != nil {
		out = append(out, err.Error())
	}
	for _, e := range schedulev2.Validate(tds) {
		out = append(out, e.Error())
	}
	_, err := Calendar(tds)
	var spec *SpecError
	if errors.As(err, &spec) && spec.Reason == schedulev2.ReasonInvalidTimeZone {
		// Calendar stops at the zone: check the rest in UTC, so that a
		// problem of the schedule does not hide behind the zone's.
		out = append(out, err.Error())
		inUTC := tds.DeepCopy()
		inUTC.Spec.TimeZone = "UTC"
		_, err = Calendar(inUTC)
	}
	if err != nil {
		for _, e := range leaves(err) {
			out = append(out, e.Error())
		}
	}
	// The schema's transition rules, for v1 writes, which v2's schema does
	// not see.
	if old != nil && old.Spec.ScaleTargetRef != nil && tds.Spec.ScaleTargetRef != nil && *old.Spec.ScaleTargetRef != *tds.Spec.ScaleTargetRef {
		out = append(out, "spec.scaleTargetRef is immutable: delete the TDSet (spec.onDelete says what the target keeps) and create another")
	}
	if old != nil && (old.Spec.ScaleTargetRef == nil) != (tds.Spec.ScaleTargetRef == nil) {
		out = append(out, "spec.scaleTargetRef cannot be added or removed: a TDSet either creates its own Deployment (spec.container) or scales an existing workload for its whole life; delete it and create another")
	}
	if old != nil {
		for _, e := range schedulev2.ValidateUpdate(old, tds) {
			out = append(out, e.Error())
		}
	}
	o := tds.Spec.Override
	changed := old == nil || !apiequality.Semantic.DeepEqual(o, old.Spec.Override)
	if o != nil && changed && !o.Until.After(v.Clock.Now()) {
		out = append(out, fmt.Sprintf("spec.override.until %s is in the past: an override applies until a future instant", o.Until.UTC().Format(time.RFC3339)))
	}
	return out
}

// leaves splits an error made with errors.Join, at any depth, into the
// errors it joins.
func leaves(err error) []error {
	if s, ok := err.(*SpecError); ok {
		err = s.Err
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}
