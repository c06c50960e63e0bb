// Package conditions sets status conditions the way every controller of this
// project reports them: each condition carries the generation it was computed
// from, and Ready summarises the object for `kubectl wait --for=condition=Ready`.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/events"
)

// Ready is the summary condition type every kind of this project carries.
const Ready = "Ready"

// Reasons shared by several controllers.
const (
	// ReasonResourceConflict: a child's name is taken by an object this owner does not control.
	ReasonResourceConflict = "ResourceConflict"
	// ReasonCleanupFailed: the cleanup that must run before deletion failed; it is retried.
	ReasonCleanupFailed = "CleanupFailed"
	// ReasonApplyFailed: a child could not be created or updated.
	ReasonApplyFailed = "ApplyFailed"
)

// Object is an API object whose status holds a list of conditions.
type Object interface {
	client.Object
	// StatusConditions returns a pointer to the object's status.conditions.
	StatusConditions() *[]metav1.Condition
}

// MaxMessageBytes caps every condition message set through this package. A
// message may carry what a tenant controls (an error its Redis returned,
// every node of a large cluster), and the API refuses a condition message
// over 32 KiB, which would make every status write of the object fail; the
// cap leaves room for several conditions and is still ample for a person
// to read.
const MaxMessageBytes = 4096

// Set sets one condition on obj, stamped with obj's current generation. It
// reports whether anything changed; lastTransitionTime moves only when the
// status does. A message longer than MaxMessageBytes is cut there, between
// characters, and says how much was left out.
func Set(obj Object, conditionType string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(obj.StatusConditions(), metav1.Condition{
		Type:               conditionType,
		Status:             status,
		Reason:             reason,
		Message:            events.Truncate(message, MaxMessageBytes),
		ObservedGeneration: obj.GetGeneration(),
	})
}

// MarkTrue sets conditionType to True.
func MarkTrue(obj Object, conditionType, reason, message string) bool {
	return Set(obj, conditionType, metav1.ConditionTrue, reason, message)
}

// MarkFalse sets conditionType to False.
func MarkFalse(obj Object, conditionType, reason, message string) bool {
	return Set(obj, conditionType, metav1.ConditionFalse, reason, message)
}

// Get returns the condition of the given type, or nil.
func Get(obj Object, conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(*obj.StatusConditions(), conditionType)
}

// IsTrue reports whether the condition is present, True, and computed from
// the object's current generation.
func IsTrue(obj Object, conditionType string) bool {
	c := Get(obj, conditionType)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration()
}

// Remove deletes the condition of the given type and reports whether it was there.
func Remove(obj Object, conditionType string) bool {
	return meta.RemoveStatusCondition(obj.StatusConditions(), conditionType)
}
