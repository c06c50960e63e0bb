package v2

import (
	"fmt"
	"regexp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The bounds of the schema's markers, for Validate and for code that must
// stop early on objects stored without them.
const (
	// MaxWindows is spec.windows' MaxItems.
	MaxWindows = 64
	// MaxExceptions is spec.exceptions' MaxItems.
	MaxExceptions = 400
	// MaxReplicas bounds every replica count of the spec.
	MaxReplicas = 1000
	// MaxTargetAPIVersion is spec.scaleTargetRef.apiVersion's MaxLength: a
	// group (a DNS subdomain), "/" and a version (a DNS label).
	MaxTargetAPIVersion = 317
	// MaxTargetKind is spec.scaleTargetRef.kind's MaxLength.
	MaxTargetKind = 63
	// MaxTargetName is spec.scaleTargetRef.name's MaxLength.
	MaxTargetName = 253
)

var (
	clockRE    = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	dateRE     = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`)
	dnsLabelRE = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
	// The patterns of spec.scaleTargetRef's markers.
	apiVersionRE = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[0-9]+((alpha|beta)[0-9]+)?$`)
	kindRE       = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	subdomainRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	weekdays     = map[Weekday]bool{"Mon": true, "Tue": true, "Wed": true, "Thu": true, "Fri": true, "Sat": true, "Sun": true}
)

// Validate applies, in Go, every rule of v2's schema and CEL markers to the
// spec and the name. The API server checks a write only against the schema
// of the version it was sent in, so a v1 write converted to v2 reaches
// storage unchecked by v2's schema; the validating webhook calls this to
// hold it to v2's rules. The counts are checked first, and a list over its
// bound is not looked into, so the work stays bounded. Keep it in step
// with the markers in tdset_types.go.
func Validate(tds *TDSet) field.ErrorList {
	var errs field.ErrorList
	spec, p := &tds.Spec, field.NewPath("spec")

	// "" is the absent field: omitempty drops it and the default applies.
	if n := len(spec.TimeZone); n > 64 {
		errs = append(errs, field.TooLong(p.Child("timeZone"), "", 64))
	}
	hasContainer := spec.Container != (ContainerSpec{})
	if hasContainer == (spec.ScaleTargetRef != nil) {
		errs = append(errs, field.Invalid(p, "", "exactly one of spec.container (a Deployment the TDSet creates) or spec.scaleTargetRef (a workload that already runs) must be set"))
	}
	if hasContainer {
		c := p.Child("container")
		if n := len(spec.Container.Image); n == 0 {
			errs = append(errs, field.Required(c.Child("image"), ""))
		} else if n > 512 {
			errs = append(errs, field.TooLong(c.Child("image"), "", 512))
		}
		errs = append(errs, between(c.Child("port"), spec.Container.Port, 1, 65535)...)
	}
	if ref := spec.ScaleTargetRef; ref != nil {
		errs = append(errs, validateScaleTargetRef(p.Child("scaleTargetRef"), ref)...)
		if spec.Service != nil || spec.PodTemplate != nil {
			errs = append(errs, field.Invalid(p, "", "spec.service and spec.podTemplate describe the Deployment the TDSet creates: they go with spec.container, not with spec.scaleTargetRef"))
		}
	}
	switch spec.OnDelete {
	case "":
	case OnDeleteKeep, OnDeleteRestore:
		if spec.ScaleTargetRef == nil {
			errs = append(errs, field.Invalid(p, "", "spec.onDelete says what happens to a spec.scaleTargetRef's replicas when the TDSet is deleted: set it only with spec.scaleTargetRef"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("onDelete"), spec.OnDelete, []OnDeletePolicy{OnDeleteKeep, OnDeleteRestore}))
	}
	if s := spec.Service; s != nil && s.Port != 0 {
		errs = append(errs, between(p.Child("service", "port"), s.Port, 1, 65535)...)
		if !dnsLabelRE.MatchString(tds.Name) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), tds.Name, "with spec.service.port set, the name must be a DNS label (at most 63 lower-case letters, digits and '-', starting with a letter), because the Service is named after the TDSet"))
		}
	}
	errs = append(errs, between(p.Child("defaultReplicas"), spec.DefaultReplicas, 0, MaxReplicas)...)

	if n := len(spec.Windows); n > MaxWindows {
		errs = append(errs, field.TooMany(p.Child("windows"), n, MaxWindows))
	} else {
		for i := range spec.Windows {
			errs = append(errs, validateWindow(p.Child("windows").Index(i), &spec.Windows[i])...)
		}
	}
	if n := len(spec.Exceptions); n > MaxExceptions {
		errs = append(errs, field.TooMany(p.Child("exceptions"), n, MaxExceptions))
	} else {
		for i, e := range spec.Exceptions {
			ep := p.Child("exceptions").Index(i)
			if !dateRE.MatchString(e.Date) {
				errs = append(errs, field.Invalid(ep.Child("date"), e.Date, "must be a date YYYY-MM-DD"))
			}
			errs = append(errs, between(ep.Child("replicas"), e.Replicas, 0, MaxReplicas)...)
		}
	}
	errs = append(errs, validateCalendarRefs(p.Child("calendars"), spec.Calendars)...)
	if o := spec.Override; o != nil {
		errs = append(errs, between(p.Child("override", "replicas"), o.Replicas, 0, MaxReplicas)...)
		if o.Until.IsZero() {
			errs = append(errs, field.Required(p.Child("override", "until"), ""))
		}
	}
	if a := spec.Autoscaling; a != nil {
		errs = append(errs, validateAutoscaling(p, spec, a)...)
	}
	errs = append(errs, duration(p.Child("scaleUpLeadTime"), spec.ScaleUpLeadTime, 0, 24*time.Hour)...)
	errs = append(errs, duration(p.Child("resyncInterval"), spec.ResyncInterval, time.Minute, 24*time.Hour)...)
	return errs
}

// validateScaleTargetRef checks the reference's bounds and patterns, the
// lengths first so that no pattern runs on a long string.
func validateScaleTargetRef(p *field.Path, ref *ScaleTargetRef) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name, value string
		max         int
		re          *regexp.Regexp
		what        string
	}{
		{"apiVersion", ref.APIVersion, MaxTargetAPIVersion, apiVersionRE, "must be an API group and version such as apps/v1"},
		{"kind", ref.Kind, MaxTargetKind, kindRE, "must be a kind such as Deployment"},
		{"name", ref.Name, MaxTargetName, subdomainRE, "must be an object name (lower-case DNS subdomain)"},
	} {
		switch n := len(f.value); {
		case n == 0:
			errs = append(errs, field.Required(p.Child(f.name), ""))
		case n > f.max:
			errs = append(errs, field.TooLong(p.Child(f.name), "", f.max))
		case !f.re.MatchString(f.value):
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, f.what))
		}
	}
	return errs
}

// validateWindow checks one window.
func validateWindow(p *field.Path, w *Window) field.ErrorList {
	var errs field.ErrorList
	if n := len(w.Days); n > 7 {
		errs = append(errs, field.TooMany(p.Child("days"), n, 7))
	} else {
		seen := map[Weekday]bool{}
		for j, d := range w.Days {
			switch {
			case !weekdays[d]:
				errs = append(errs, field.NotSupported(p.Child("days").Index(j), d, []Weekday{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}))
			case seen[d]:
				errs = append(errs, field.Duplicate(p.Child("days").Index(j), d))
			}
			seen[d] = true
		}
	}
	for _, f := range []struct {
		name, value string
	}{{"start", w.Start}, {"end", w.End}} {
		if !clockRE.MatchString(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, "must be a local time HH:MM (00:00-23:59)"))
		}
	}
	if w.EndDay == "" && w.Start == w.End {
		errs = append(errs, field.Invalid(p, w.Start+"-"+w.End, "a window's start and end must differ (for one count all day, use defaultReplicas or an exception)"))
	}
	if w.EndDay != "" {
		switch {
		case !weekdays[w.EndDay]:
			errs = append(errs, field.NotSupported(p.Child("endDay"), w.EndDay, []Weekday{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}))
		case len(w.Days) != 1:
			errs = append(errs, field.Invalid(p, "", "a window with endDay starts on one day: days must list exactly that day (Fri 18:00 to Mon 06:00 is days [Fri], start 18:00, endDay Mon, end 06:00)"))
		case w.EndDay == w.Days[0] && w.Start == w.End:
			errs = append(errs, field.Invalid(p, "", "a window that ends on the day and at the time it starts is empty: a window lasts less than a week (for one count all the time, use defaultReplicas)"))
		}
	}
	return append(errs, between(p.Child("replicas"), w.Replicas, 0, MaxReplicas)...)
}

// validateCalendarRefs is spec.calendars' markers: the count, each
// reference's kind, name and replicas, and no reference twice.
func validateCalendarRefs(p *field.Path, refs []CalendarRef) field.ErrorList {
	if n := len(refs); n > MaxCalendarRefs {
		return field.ErrorList{field.TooMany(p, n, MaxCalendarRefs)}
	}
	var errs field.ErrorList
	seen := map[CalendarRef]bool{}
	for i, ref := range refs {
		rp := p.Index(i)
		switch ref.Kind {
		case "", CalendarKindNamespaced, CalendarKindCluster:
		default:
			errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, []string{string(CalendarKindNamespaced), string(CalendarKindCluster)}))
		}
		if n := len(ref.Name); n == 0 || n > MaxTargetName || !subdomainRE.MatchString(ref.Name) {
			errs = append(errs, field.Invalid(rp.Child("name"), ref.Name, "must be a DNS subdomain of at most 253 characters"))
		}
		if ref.Replicas != nil {
			errs = append(errs, between(rp.Child("replicas"), *ref.Replicas, 0, MaxReplicas)...)
		}
		key := CalendarRef{Kind: ref.Kind, Name: ref.Name}
		if key.Kind == "" {
			key.Kind = CalendarKindNamespaced
		}
		if seen[key] {
			errs = append(errs, field.Duplicate(rp, ref.Name))
		}
		seen[key] = true
	}
	return errs
}

// validateAutoscaling is spec.autoscaling's markers and the spec's CEL
// rules about it: hpaRef exactly with scaleTargetRef, maxReplicas required
// without hpaRef, no CPU target with hpaRef, and the counts' bounds.
func validateAutoscaling(p *field.Path, spec *TDSetSpec, a *Autoscaling) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("autoscaling")
	if (a.HPARef != nil) != (spec.ScaleTargetRef != nil) {
		errs = append(errs, field.Invalid(p, "", MessageHPARefWithTarget))
	}
	if ref := a.HPARef; ref != nil {
		if n := len(ref.Name); n == 0 || n > MaxTargetName || !subdomainRE.MatchString(ref.Name) {
			errs = append(errs, field.Invalid(ap.Child("hpaRef", "name"), ref.Name, "must be a DNS subdomain of at most 253 characters"))
		}
		if a.TargetCPUUtilizationPercentage != nil {
			errs = append(errs, field.Invalid(p, "", MessageHPARefNoCPU))
		}
	} else if a.MaxReplicas == 0 {
		errs = append(errs, field.Invalid(p, "", MessageMaxReplicasRequired))
	}
	if a.MaxReplicas != 0 {
		errs = append(errs, between(ap.Child("maxReplicas"), a.MaxReplicas, 1, MaxReplicas)...)
	}
	if t := a.TargetCPUUtilizationPercentage; t != nil {
		errs = append(errs, between(ap.Child("targetCPUUtilizationPercentage"), *t, 1, 1000)...)
	}
	return append(errs, validateAutoscaled(p, spec)...)
}

// ValidateUpdate is the spec's transition rule about hpaRef: it cannot be
// added, removed or changed, because the TDSet recorded the bounds of one
// HPA to give back.
func ValidateUpdate(old, tds *TDSet) field.ErrorList {
	name := func(t *TDSet) *string {
		if a := t.Spec.Autoscaling; a != nil && a.HPARef != nil {
			return &a.HPARef.Name
		}
		return nil
	}
	o, n := name(old), name(tds)
	if (o == nil) != (n == nil) || (o != nil && *o != *n) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), "", MessageHPARefImmutable)}
	}
	return nil
}

// The messages of the CEL rules about hpaRef, shared by Validate.
const (
	// MessageHPARefWithTarget: hpaRef goes with scaleTargetRef, and
	// autoscaling with scaleTargetRef needs hpaRef.
	MessageHPARefWithTarget = "with spec.scaleTargetRef, spec.autoscaling must name the workload's existing HorizontalPodAutoscaler in spec.autoscaling.hpaRef (the TDSet sets its minReplicas); spec.autoscaling.hpaRef goes only with spec.scaleTargetRef (with spec.container the TDSet creates its own HPA)"
	// MessageMaxReplicasRequired: the HPA the TDSet creates needs a maximum.
	MessageMaxReplicasRequired = "spec.autoscaling.maxReplicas is required for the HorizontalPodAutoscaler the TDSet creates (without spec.autoscaling.hpaRef)"
	// MessageHPARefNoCPU: an existing HPA keeps its own metrics.
	MessageHPARefNoCPU = "spec.autoscaling.targetCPUUtilizationPercentage is for the HPA the TDSet creates; with spec.autoscaling.hpaRef the existing HPA keeps its own metrics"
	// MessageHPARefImmutable: hpaRef is fixed for the TDSet's life.
	MessageHPARefImmutable = "spec.autoscaling.hpaRef cannot be added, removed or changed: delete the TDSet (it gives the HPA its own minReplicas and maxReplicas back) and create another"
)

// validateAutoscaled is the spec's two CEL rules for spec.autoscaling: every
// count becomes the HPA's minReplicas, so it is 1 to maxReplicas.
func validateAutoscaled(p *field.Path, spec *TDSetSpec) field.ErrorList {
	counts := []int32{spec.DefaultReplicas}
	for _, w := range spec.Windows {
		counts = append(counts, w.Replicas)
	}
	for _, e := range spec.Exceptions {
		counts = append(counts, e.Replicas)
	}
	if spec.Override != nil {
		counts = append(counts, spec.Override.Replicas)
	}
	var low, high bool
	for _, n := range counts {
		low = low || n < 1
		high = high || (spec.Autoscaling.MaxReplicas != 0 && n > spec.Autoscaling.MaxReplicas)
	}
	var errs field.ErrorList
	if low {
		errs = append(errs, field.Invalid(p, "", "with spec.autoscaling, every replica count (defaultReplicas, windows, exceptions, override) must be at least 1: it becomes the HorizontalPodAutoscaler's minReplicas"))
	}
	if high {
		errs = append(errs, field.Invalid(p.Child("autoscaling", "maxReplicas"), spec.Autoscaling.MaxReplicas, "spec.autoscaling.maxReplicas must be at least every replica count of the schedule (defaultReplicas, windows, exceptions, override)"))
	}
	return errs
}

// between checks an integer's Minimum and Maximum.
func between(p *field.Path, v, lo, hi int32) field.ErrorList {
	if v < lo || v > hi {
		return field.ErrorList{field.Invalid(p, v, fmt.Sprintf("must be between %d and %d", lo, hi))}
	}
	return nil
}

// duration checks a duration's CEL range; nil is the absent field.
func duration(p *field.Path, d *metav1.Duration, lo, hi time.Duration) field.ErrorList {
	if d != nil && (d.Duration < lo || d.Duration > hi) {
		return field.ErrorList{field.Invalid(p, d.Duration.String(), fmt.Sprintf("%s must be between %s and %s", p.String()[len("spec."):], fmtDuration(lo), fmtDuration(hi)))}
	}
	return nil
}

// fmtDuration writes the bounds as the markers do ("1m", "24h").
func fmtDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	default:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
}
