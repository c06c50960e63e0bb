package conditions

import (
	"time"

	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// ConflictRetryInterval is how often an owner whose child name is taken
// looks again: the foreign object is not watched, so its removal raises no event.
const ConflictRetryInterval = time.Minute

// ApplyFailureReason is the condition reason for a child that could not be
// applied: ReasonResourceConflict when its name is taken by an object the
// owner does not control, ReasonApplyFailed otherwise.
func ApplyFailureReason(err error) string {
	if ownership.IsConflict(err) {
		return ReasonResourceConflict
	}
	return ReasonApplyFailed
}

// ReportApplyError shows a failed apply of a child on its owner: Ready=False
// with ApplyFailureReason and a Warning event. A conflict is looked at again
// after ConflictRetryInterval and is not returned as an error (backoff would
// not help; a person must act); any other error is returned, so that it is
// retried with backoff.
func ReportApplyError(rec events.Recorder, owner Object, err error) (retryAfter time.Duration, returned error) {
	reason := ApplyFailureReason(err)
	MarkFalse(owner, Ready, reason, err.Error())
	rec.Warning(owner, reason, events.ActionReconcile, "%v", err)
	if reason == ReasonResourceConflict {
		return ConflictRetryInterval, nil
	}
	return 0, err
}
