package v2

// Reasons of the events about a TDSet. The reasons of its conditions are
// below, beside the condition types. Both API versions share them: the
// controller reconciles v2 only.
const (
	// ReasonDeploymentCreated: the Deployment was created.
	ReasonDeploymentCreated = "DeploymentCreated"
	// ReasonDeploymentScaled: the Deployment's replica count was set to the schedule's.
	ReasonDeploymentScaled = "DeploymentScaled"
	// ReasonDeploymentUpdated: the Deployment's pod template was set to the TDSet's container.
	ReasonDeploymentUpdated = "DeploymentUpdated"
	// ReasonServiceCreated: the Service was created.
	ReasonServiceCreated = "ServiceCreated"
	// ReasonServiceUpdated: the Service was corrected to the TDSet's port.
	ReasonServiceUpdated = "ServiceUpdated"
	// ReasonServiceDeleted: the Service was deleted because spec.service.port is not set.
	ReasonServiceDeleted = "ServiceDeleted"
	// ReasonTargetAdopted: the TDSet recorded its scaleTargetRef's replicas
	// and from now on sets them by its schedule.
	ReasonTargetAdopted = "TargetAdopted"
	// ReasonTargetScaled: the scaleTargetRef's replicas were set to the schedule's.
	ReasonTargetScaled = "TargetScaled"
	// ReasonTargetRestored: the TDSet was deleted with onDelete Restore and
	// gave its target back the count it had before.
	ReasonTargetRestored = "TargetRestored"
	// ReasonAutoscalerAdopted: the TDSet recorded the minReplicas and
	// maxReplicas of the HPA of spec.autoscaling.hpaRef and from now on
	// sets them by its schedule.
	ReasonAutoscalerAdopted = "AutoscalerAdopted"
	// ReasonAutoscalerBounded: the TDSet set the minReplicas (and
	// maxReplicas) of the HPA of spec.autoscaling.hpaRef, by the schedule.
	ReasonAutoscalerBounded = "AutoscalerBounded"
	// ReasonAutoscalerRestored: the TDSet, suspended or deleted, gave the
	// HPA of spec.autoscaling.hpaRef back its original minReplicas and
	// maxReplicas.
	ReasonAutoscalerRestored = "AutoscalerRestored"
	// ReasonTargetKept: the TDSet was deleted and left its target at the
	// count it has (onDelete Keep, or Restore with no count to restore).
	ReasonTargetKept = "TargetKept"
)

// Condition types of a TDSet, beside Ready.
const (
	// ConditionScheduled is True while the schedule is applied to the
	// Deployment; its message says which window applies and until when.
	ConditionScheduled = "Scheduled"
	// ConditionSuspended is True while spec.suspend holds the replica count.
	ConditionSuspended = "Suspended"
)

// Condition reasons a TDSet reports.
const (
	// ReasonInvalidTimeZone: spec.timeZone is not a zone the controller
	// knows; the Deployment is left as it is.
	ReasonInvalidTimeZone = "InvalidTimeZone"
	// ReasonInvalidSchedule: the windows overlap, an exception date repeats
	// or is no date (only possible for objects stored before admission
	// checked them, or while the validating webhook was not installed).
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonWindowActive: a window sets the count.
	ReasonWindowActive = "WindowActive"
	// ReasonDefaultReplicas: no override, exception or window applies;
	// defaultReplicas sets the count.
	ReasonDefaultReplicas = "DefaultReplicas"
	// ReasonExceptionActive: an exception sets the count for the local date.
	ReasonExceptionActive = "ExceptionActive"
	// ReasonOverrideActive: spec.override sets the count until its instant.
	ReasonOverrideActive = "OverrideActive"
	// ReasonSuspended: spec.suspend is true.
	ReasonSuspended = "Suspended"
	// ReasonNotSuspended: spec.suspend is false.
	ReasonNotSuspended = "NotSuspended"
	// ReasonAvailable: the Deployment has its count of available replicas.
	ReasonAvailable = "Available"
	// ReasonProgressing: the Deployment is still scaling or rolling out.
	ReasonProgressing = "Progressing"
	// ReasonAutoscalerCreated (event): the HorizontalPodAutoscaler was created.
	ReasonAutoscalerCreated = "AutoscalerCreated"
	// ReasonAutoscalerUpdated (event): the HPA's minReplicas, maxReplicas or
	// target was set to the TDSet's.
	ReasonAutoscalerUpdated = "AutoscalerUpdated"
	// ReasonTargetAvailable: the scale target runs the count the TDSet set.
	ReasonTargetAvailable = "TargetAvailable"
	// ReasonTargetProgressing: the scale target does not run the count the
	// TDSet set yet.
	ReasonTargetProgressing = "TargetProgressing"
	// ReasonTargetKindNotAllowed (also an event): the scaleTargetRef's kind
	// is not one of the manager's --tdset-scalable-kinds; nothing is written.
	ReasonTargetKindNotAllowed = "TargetKindNotAllowed"
	// ReasonTargetKindUnknown (also an event): the API server serves no such
	// apiVersion and kind; nothing is written.
	ReasonTargetKindUnknown = "TargetKindUnknown"
	// ReasonTargetNotFound (also an event): no object of that kind and name
	// exists in the namespace; nothing is written.
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonTargetNotScalable (also an event): the target exists but has no
	// scale subresource; nothing is written.
	ReasonTargetNotScalable = "TargetNotScalable"
	// ReasonTargetConflict (also an event): an older TDSet (by creation
	// time, then name) names the same target; this one writes nothing.
	ReasonTargetConflict = "TargetConflict"
	// ReasonTargetControlled (also an event): another controller owns the
	// target (a controller ownerReference, or this operator's managed-by
	// label) and would set its count back; the TDSet does not scale it.
	ReasonTargetControlled = "TargetControlled"
	// ReasonTargetForbidden (also an event, and the finalizer's when it
	// cannot restore the target): the API server does not let the manager
	// read or scale the target, a kind added to --tdset-scalable-kinds
	// without the rules of its own Role.
	ReasonTargetForbidden = "TargetForbidden"
	// ReasonCalendarDateActive: a date of a referenced calendar sets the
	// count for the local date.
	ReasonCalendarDateActive = "CalendarDateActive"
	// ReasonCalendarNotFound (also an event): a calendar of spec.calendars
	// does not exist (a Calendar is looked up in the TDSet's namespace
	// only), or the ConfigMap its spec.source names does not exist or
	// lacks the label multi-operator.dev/watch=true; the replicas are left
	// as they are.
	ReasonCalendarNotFound = "CalendarNotFound"
	// ReasonCalendarsNotInstalled (also an event): a calendar of
	// spec.calendars is of a kind whose CRD the API server did not serve
	// when the manager started; the manager neither watches nor reads that
	// kind until it is restarted after the CRD is installed. The replicas
	// are left as they are.
	ReasonCalendarsNotInstalled = "CalendarsNotInstalled"
	// ReasonInvalidCalendar (also an event): a referenced calendar has a
	// date that does not exist or more entries than the bound, or (with
	// spec.autoscaling) a count below 1 or above maxReplicas (when set:
	// with hpaRef it may not be), or the iCalendar
	// file of its spec.source is missing from the ConfigMap, over its
	// bounds or has an event that cannot be imported; the replicas are
	// left as they are.
	ReasonInvalidCalendar = "InvalidCalendar"
	// ReasonAutoscalerNotFound (also an event): the HPA of
	// spec.autoscaling.hpaRef does not exist in the TDSet's namespace;
	// nothing is written. The TDSet looks again when the HPA is created.
	ReasonAutoscalerNotFound = "AutoscalerNotFound"
	// ReasonAutoscalerTargetMismatch (also an event): the HPA of
	// spec.autoscaling.hpaRef scales another workload than
	// spec.scaleTargetRef; nothing is written.
	ReasonAutoscalerTargetMismatch = "AutoscalerTargetMismatch"
	// ReasonAutoscalerForbidden (also an event): the manager's role may not
	// read or patch the HPA of spec.autoscaling.hpaRef.
	ReasonAutoscalerForbidden = "AutoscalerForbidden"
	// ReasonAutoscalerAvailable: the TDSet set the floor (and bound) of the
	// HPA of spec.autoscaling.hpaRef, and the target runs at least the
	// floor.
	ReasonAutoscalerAvailable = "AutoscalerAvailable"
	// ReasonAutoscalerProgressing: the HPA of spec.autoscaling.hpaRef has
	// the TDSet's floor, and its target does not run that many available
	// replicas yet.
	ReasonAutoscalerProgressing = "AutoscalerProgressing"
	// ReasonAutoscalerAmbiguous (also an event): besides the HPA of
	// spec.autoscaling.hpaRef, another HorizontalPodAutoscaler scales the
	// spec.scaleTargetRef. Two HPAs on one workload fight over its
	// replicas, so the schedule's floor holds only while the named one
	// wins: the TDSet still sets the named HPA's bounds, and Ready stays
	// False until the other HPA is deleted.
	ReasonAutoscalerAmbiguous = "AutoscalerAmbiguous"
	// ReasonTargetAutoscaled (also an event): without
	// spec.autoscaling.hpaRef, a HorizontalPodAutoscaler of the namespace
	// scales the spec.scaleTargetRef, and setting its replicas would fight
	// that HPA; nothing is written. Naming the HPA in
	// spec.autoscaling.hpaRef makes the schedule its minReplicas.
	ReasonTargetAutoscaled = "TargetAutoscaled"
	// ReasonAutoscalerDeleted (event): the HPA was deleted because
	// spec.autoscaling is not set.
	ReasonAutoscalerDeleted = "AutoscalerDeleted"
)
