package ownership

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
)

// ConflictRetryInterval is how often an owner whose child name is taken
// looks again: the foreign object is not watched, so its removal raises no event.
const ConflictRetryInterval = time.Minute

// ReportApplyError shows a failed Apply on the owner: Ready=False with
// reason ResourceConflict or ApplyFailed and a Warning event. A conflict is
// retried after ConflictRetryInterval; any other error is returned, so it is
// retried with backoff.
func ReportApplyError(rec events.Recorder, owner conditions.Object, err error) (ctrl.Result, error) {
	if IsConflict(err) {
		conditions.MarkFalse(owner, conditions.Ready, conditions.ReasonResourceConflict, err.Error())
		rec.Warning(owner, conditions.ReasonResourceConflict, events.ActionReconcile, "%v", err)
		return ctrl.Result{RequeueAfter: ConflictRetryInterval}, nil
	}
	conditions.MarkFalse(owner, conditions.Ready, conditions.ReasonApplyFailed, err.Error())
	rec.Warning(owner, conditions.ReasonApplyFailed, events.ActionReconcile, "%v", err)
	return ctrl.Result{}, err
}
