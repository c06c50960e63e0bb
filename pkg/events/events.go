// Package events records Kubernetes events (events.k8s.io/v1) for the
// actions a user wants to see in `kubectl describe`.
package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Actions name what the controller did, in the event's action field.
const (
	ActionCreate    = "Create"
	ActionUpdate    = "Update"
	ActionDelete    = "Delete"
	ActionScale     = "Scale"
	ActionReconcile = "Reconcile"
	ActionFinalize  = "Finalize"
)

// Recorder emits events about one kind of object for one controller. The
// zero value drops every event, which suits callers that need none.
type Recorder struct {
	rec recorder.EventRecorder
}

// NewRecorder wraps the manager's recorder, obtained with
// mgr.GetEventRecorder(controllerName).
func NewRecorder(rec recorder.EventRecorder) Recorder { return Recorder{rec: rec} }

// Normal records a Normal event about regarding.
func (r Recorder) Normal(regarding runtime.Object, reason, action, format string, args ...any) {
	r.emit(regarding, nil, corev1.EventTypeNormal, reason, action, format, args...)
}

// NormalRelated records a Normal event about regarding that acts on
// related, such as a pod the controller restarted. The events API counts
// a second event with the same reason about the same object version as a
// repeat of the first, shown with the first one's note: related keeps
// events about different objects apart.
func (r Recorder) NormalRelated(regarding, related runtime.Object, reason, action, format string, args ...any) {
	r.emit(regarding, related, corev1.EventTypeNormal, reason, action, format, args...)
}

// Warning records a Warning event about regarding.
func (r Recorder) Warning(regarding runtime.Object, reason, action, format string, args ...any) {
	r.emit(regarding, nil, corev1.EventTypeWarning, reason, action, format, args...)
}

func (r Recorder) emit(regarding, related runtime.Object, eventType, reason, action, format string, args ...any) {
	if r.rec == nil {
		return
	}
	// The note is formatted here so that a '%' in user data is never read as
	// a verb, and capped: it may carry what a tenant controls, and the API
	// server refuses an event whose note is too long.
	note := Truncate(fmt.Sprintf(format, args...), MaxNoteBytes)
	r.rec.Eventf(regarding, related, eventType, reason, action, "%s", note)
}
