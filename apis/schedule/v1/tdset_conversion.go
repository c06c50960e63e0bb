package v1

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	sigsjson "sigs.k8s.io/json"

	v2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
)

// AnnotationV2Data is the annotation of a v1 TDSet that holds, as JSON, what
// its v2 form says and v1 cannot, so that reading a v2 object as v1 and
// writing it back loses nothing. Conversion to v2 removes it again; it is
// absent when v1 says everything.
const AnnotationV2Data = "schedule.rs/v2-data"

// The conversion is a webhook's job: catch a missing method at compile time.
var _ conversion.Convertible = (*TDSet)(nil)

// v2Data is the value of AnnotationV2Data. Every field is set only when v1
// cannot say it, so the JSON stays small, and encoding/json writes struct
// fields in declaration order, so it is deterministic.
//
// What v1 showed at conversion time is not stored: it is a function of the
// stored v2 values (visibleWindows, intervalMintFor). On conversion to v2 a
// v1 field that still equals what that function gives is unchanged, and the
// stored v2 value comes back; a v1 field that differs was edited through
// v1 and wins.
//
// +kubebuilder:object:generate=false
type v2Data struct {
	// Windows is the whole v2 list, set when a window has days, minutes or
	// an end day; v1's schedulingConfig shows the windows without them.
	Windows []v2.Window `json:"windows,omitempty"`
	// ActiveWindow is status.activeWindow when Windows is set and it has no
	// index in v1's list (its window is hidden there, or it is out of range).
	ActiveWindow *int32 `json:"activeWindow,omitempty"`
	// ResyncInterval is set when it is not 1 to 1440 whole minutes.
	ResyncInterval *metav1.Duration `json:"resyncInterval,omitempty"`

	// v1 has no field for these, so they come back as they are.
	Exceptions      []v2.Exception   `json:"exceptions,omitempty"`
	Calendars       []v2.CalendarRef `json:"calendars,omitempty"`
	Override        *v2.Override     `json:"override,omitempty"`
	Autoscaling     *v2.Autoscaling  `json:"autoscaling,omitempty"`
	ScaleUpLeadTime *metav1.Duration `json:"scaleUpLeadTime,omitempty"`
	ActiveRule      string           `json:"activeRule,omitempty"`
	// ScaleTargetRef and OnDelete replace v1's container on a TDSet that
	// scales a workload it did not create; Target is its status.
	ScaleTargetRef *v2.ScaleTargetRef `json:"scaleTargetRef,omitempty"`
	OnDelete       v2.OnDeletePolicy  `json:"onDelete,omitempty"`
	Target         *v2.TargetStatus   `json:"target,omitempty"`

	// Annotation is the v2 object's own AnnotationV2Data, which the v1 one
	// replaces; set only if a user put the key on a v2 object.
	Annotation *string `json:"annotation,omitempty"`
}

// empty reports whether v1 says everything, so that no annotation is added.
func (d *v2Data) empty() bool {
	return d.Windows == nil && d.ActiveWindow == nil && d.ResyncInterval == nil &&
		len(d.Exceptions) == 0 && len(d.Calendars) == 0 && d.Override == nil && d.Autoscaling == nil &&
		d.ScaleUpLeadTime == nil && d.ActiveRule == "" && d.Annotation == nil &&
		d.ScaleTargetRef == nil && d.OnDelete == "" && d.Target == nil
}

// MaxV2DataBytes bounds AnnotationV2Data: a larger value is not decoded.
// It is the API server's limit for all annotations together, so no
// storable object loses anything by it.
const MaxV2DataBytes = 256 << 10

// ConvertTo converts this v1 TDSet to the hub, v2. Fields v1 has win; the
// v2-only fields come from AnnotationV2Data. An annotation that cannot be
// applied whole (see V2DataProblem) is applied not at all and kept on the
// v2 object instead, where the validating webhook refuses it: conversion
// never drops it silently, and it does not fail either, because a
// conversion error would make a stored object unreadable. dst's TypeMeta is
// left as the caller set it.
func (src *TDSet) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v2.TDSet)
	if !ok {
		return fmt.Errorf("converting schedule.rs/v1 TDSet: hub is %T, not *v2.TDSet", dstRaw)
	}
	in := src.DeepCopy()

	var data v2Data
	if raw, found := in.Annotations[AnnotationV2Data]; found {
		d, err := decodeV2Data(raw)
		if err == nil && windowsConflict(d.Windows, in.Spec.SchedulingConfig) {
			err = errWindowsLost
		}
		if err == nil {
			data = d
			delete(in.Annotations, AnnotationV2Data)
			if data.Annotation != nil {
				in.Annotations[AnnotationV2Data] = *data.Annotation
			}
			if len(in.Annotations) == 0 {
				in.Annotations = nil
			}
		}
	}
	dst.ObjectMeta = in.ObjectMeta

	windows := make([]v2.Window, 0, len(in.Spec.SchedulingConfig))
	for _, c := range in.Spec.SchedulingConfig {
		windows = append(windows, v2.Window{Start: formatHour(c.StartTime), End: formatHour(c.EndTime), Replicas: c.Replica})
	}
	activeWindow := in.Status.ActiveWindow
	if data.Windows != nil {
		// v1 still shows what it was given (windowsConflict): restore the
		// full list.
		_, index := visibleWindows(data.Windows)
		windows = data.Windows
		switch a := in.Status.ActiveWindow; {
		case a == nil:
			activeWindow = data.ActiveWindow
		case *a >= 0 && int(*a) < len(index):
			activeWindow = &index[*a]
		}
	}
	if len(windows) == 0 {
		windows = nil
	}

	var resync *metav1.Duration
	if m := in.Spec.IntervalMint; m != 0 {
		resync = &metav1.Duration{Duration: minutes(m)}
	}
	if r := data.ResyncInterval; r != nil {
		if shown, _ := intervalMintFor(r); shown == in.Spec.IntervalMint {
			resync = r
		}
	}

	var service *v2.ServiceSpec
	if in.Spec.Service != nil {
		service = &v2.ServiceSpec{Port: in.Spec.Service.Port}
	}
	dst.Spec = v2.TDSetSpec{
		TimeZone:        in.Spec.TimeZone,
		Container:       v2.ContainerSpec{Image: in.Spec.Container.Image, Port: in.Spec.Container.Port},
		Service:         service,
		DefaultReplicas: in.Spec.DefaultReplica,
		Windows:         windows,
		Exceptions:      data.Exceptions,
		Calendars:       data.Calendars,
		Override:        data.Override,
		Autoscaling:     data.Autoscaling,
		ScaleUpLeadTime: data.ScaleUpLeadTime,
		ScaleTargetRef:  data.ScaleTargetRef,
		OnDelete:        data.OnDelete,
		Suspend:         in.Spec.Suspend,
		ResyncInterval:  resync,
		// Both versions have the field: it needs no annotation.
		PodTemplate: in.Spec.PodTemplate,
	}
	dst.Status = v2.TDSetStatus{
		ObservedGeneration: in.Status.ObservedGeneration,
		CurrentReplicas:    in.Status.DesiredReplicas,
		AvailableReplicas:  in.Status.AvailableReplicas,
		ActiveRule:         data.ActiveRule,
		ActiveWindow:       activeWindow,
		NextTransitionTime: in.Status.NextTransitionTime,
		NextReplicas:       in.Status.NextReplicas,
		Target:             data.Target,
		Conditions:         in.Status.Conditions,
	}
	return nil
}

// ConvertFrom converts the hub, v2, to this v1 TDSet. v1 shows what it can
// (the windows on every day at whole hours, a resync interval rounded to
// minutes) and AnnotationV2Data keeps the rest. dst's TypeMeta is left as
// the caller set it.
func (dst *TDSet) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v2.TDSet)
	if !ok {
		return fmt.Errorf("converting to schedule.rs/v1 TDSet: hub is %T, not *v2.TDSet", srcRaw)
	}
	in := src.DeepCopy()

	var data v2Data
	if raw, found := in.Annotations[AnnotationV2Data]; found {
		data.Annotation = &raw
	}

	visible, index := visibleWindows(in.Spec.Windows)
	activeWindow := in.Status.ActiveWindow
	if len(index) != len(in.Spec.Windows) {
		data.Windows = in.Spec.Windows
		// status.activeWindow indexes the list it sits beside: renumber it
		// for v1's shorter list, and keep it when it has no number there.
		activeWindow = nil
		if a := in.Status.ActiveWindow; a != nil {
			if j, found := slices.BinarySearch(index, *a); found {
				v := int32(j)
				activeWindow = &v
			} else {
				data.ActiveWindow = a
			}
		}
	}

	mint, exact := intervalMintFor(in.Spec.ResyncInterval)
	if !exact {
		data.ResyncInterval = in.Spec.ResyncInterval
	}
	if len(in.Spec.Exceptions) > 0 {
		data.Exceptions = in.Spec.Exceptions
	}
	if len(in.Spec.Calendars) > 0 {
		data.Calendars = in.Spec.Calendars
	}
	data.Override = in.Spec.Override
	data.Autoscaling = in.Spec.Autoscaling
	data.ScaleUpLeadTime = in.Spec.ScaleUpLeadTime
	data.ActiveRule = in.Status.ActiveRule
	data.ScaleTargetRef = in.Spec.ScaleTargetRef
	data.OnDelete = in.Spec.OnDelete
	data.Target = in.Status.Target

	delete(in.Annotations, AnnotationV2Data)
	if !data.empty() {
		raw, err := json.Marshal(&data)
		if err != nil {
			return fmt.Errorf("converting to schedule.rs/v1 TDSet: encoding annotation %s: %w", AnnotationV2Data, err)
		}
		if in.Annotations == nil {
			in.Annotations = map[string]string{}
		}
		in.Annotations[AnnotationV2Data] = string(raw)
	}
	dst.ObjectMeta = in.ObjectMeta

	var service *ServiceSpec
	if in.Spec.Service != nil {
		service = &ServiceSpec{Port: in.Spec.Service.Port}
	}
	dst.Spec = TDSetSpec{
		Container:        ContainerSpec{Image: in.Spec.Container.Image, Port: in.Spec.Container.Port},
		Service:          service,
		SchedulingConfig: visible,
		DefaultReplica:   in.Spec.DefaultReplicas,
		IntervalMint:     mint,
		TimeZone:         in.Spec.TimeZone,
		Suspend:          in.Spec.Suspend,
		PodTemplate:      in.Spec.PodTemplate,
	}
	dst.Status = TDSetStatus{
		ObservedGeneration: in.Status.ObservedGeneration,
		DesiredReplicas:    in.Status.CurrentReplicas,
		AvailableReplicas:  in.Status.AvailableReplicas,
		ActiveWindow:       activeWindow,
		NextTransitionTime: in.Status.NextTransitionTime,
		NextReplicas:       in.Status.NextReplicas,
		Conditions:         in.Status.Conditions,
	}
	return nil
}

// errWindowsLost is the conflict windowsConflict finds.
var errWindowsLost = errors.New("spec.schedulingConfig differs from the windows it holds, and applying the change would drop the windows v1 cannot show (with weekdays, minutes or an end day)")

// decodeV2Data decodes AnnotationV2Data strictly: a value over
// MaxV2DataBytes, with an unknown or repeated field, fields in another
// case, or anything after the JSON is an error, so that a typo is not
// taken for an absent field.
func decodeV2Data(raw string) (v2Data, error) {
	var d v2Data
	if len(raw) > MaxV2DataBytes {
		return d, fmt.Errorf("%d bytes, more than %d", len(raw), MaxV2DataBytes)
	}
	strict, err := sigsjson.UnmarshalStrict([]byte(raw), &d, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return v2Data{}, fmt.Errorf("not what schedule.rs/v1 writes: %w", err)
	}
	return d, nil
}

// windowsConflict reports whether applying v1's windows would drop the
// annotation's: it holds the whole list and v1 no longer shows what that
// list shows. Then v1 was edited without the windows it cannot see.
func windowsConflict(held []v2.Window, shown []SchedulingConfig) bool {
	if held == nil {
		return false
	}
	visible, _ := visibleWindows(held)
	return !slices.Equal(visible, shown)
}

// V2DataProblem says why a v2 TDSet carries AnnotationV2Data, which is
// v1's only: a v1 write whose annotation ConvertTo could not apply whole
// (too large, not strictly what ConvertFrom writes, or windows that the
// write would drop), or a v2 write that set it. The error says to write
// the object through schedule.rs/v2. It is nil without the annotation.
func V2DataProblem(tds *v2.TDSet) error {
	raw, found := tds.Annotations[AnnotationV2Data]
	if !found {
		return nil
	}
	const prefix = "metadata.annotations[" + AnnotationV2Data + "]"
	const fix = "write v2-only fields (weekdays, minutes, end days, exceptions, override, autoscaling, lead time, scaleTargetRef, onDelete) through schedule.rs/v2, not schedule.rs/v1"
	d, err := decodeV2Data(raw)
	if err == nil {
		visible, _ := visibleWindows(tds.Spec.Windows)
		if windowsConflict(d.Windows, visible) {
			err = errWindowsLost
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w: %s", prefix, err, fix)
	}
	return fmt.Errorf("%s is schedule.rs/v1's record of the v2-only fields, not part of a v2 object: remove it, and %s", prefix, fix)
}

// visibleWindows returns the windows v1 can show (every day, whole hours,
// within a day)
// in their order, and index[j], the position in windows of visible[j]
// (ascending). It is nil when no window is visible.
func visibleWindows(windows []v2.Window) (visible []SchedulingConfig, index []int32) {
	for i, w := range windows {
		start, okStart := parseHour(w.Start)
		end, okEnd := parseHour(w.End)
		if len(w.Days) > 0 || w.EndDay != "" || !okStart || !okEnd {
			continue
		}
		visible = append(visible, SchedulingConfig{StartTime: start, EndTime: end, Replica: w.Replicas})
		index = append(index, int32(i))
	}
	return visible, index
}

// formatHour writes a v1 hour as v2's "HH:MM".
func formatHour(h int32) string { return fmt.Sprintf("%02d:00", h) }

// parseHour is the inverse of formatHour: it accepts exactly the strings
// formatHour writes, so that every hour converts back to itself, even one
// outside 0-23 that only an unvalidated object can hold.
func parseHour(s string) (int32, bool) {
	digits, ok := strings.CutSuffix(s, ":00")
	if !ok {
		return 0, false
	}
	h, err := strconv.ParseInt(digits, 10, 32)
	if err != nil || formatHour(int32(h)) != s {
		return 0, false
	}
	return int32(h), true
}

// intervalMintFor returns the intervalMint v1 shows for a resync interval,
// and whether it says the interval exactly: nil is 0, and 1 to 1440 whole
// minutes (v1's range) are exact. Otherwise it shows the whole minutes
// within that range, or 0 for an interval that is not positive, so that an
// old reader still gets a usable value.
func intervalMintFor(d *metav1.Duration) (int32, bool) {
	if d == nil {
		return 0, true
	}
	if d.Duration <= 0 {
		return 0, false
	}
	m := min(max(d.Duration/time.Minute, 1), 1440)
	return int32(m), d.Duration == m*time.Minute
}

// minutes converts intervalMint to a duration, saturating instead of
// overflowing for counts no valid object holds.
func minutes(m int32) time.Duration {
	const limit = math.MaxInt64 / int64(time.Minute)
	return time.Duration(min(max(int64(m), -limit), limit)) * time.Minute
}
