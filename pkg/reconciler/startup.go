package reconciler

import (
	"time"

	"github.com/multi-operator/multi-operator/pkg/conditions"
)

// DefaultStartupGrace is how long the manager lets a new custom resource's
// first status wait for its child to settle: a pod of a pulled image is
// ready, and a short Job done, within a second or two.
const DefaultStartupGrace = 10 * time.Second

// HoldFirstStatus holds the first status of a new obj (one without a Ready
// condition yet) while its child, created childAge ago, has not settled,
// for up to grace after the child's creation. A status written before the
// child settles (servers starting, a Job running) is replaced by the
// child's next report a moment later, so a child that settles within the
// grace gives obj one status write instead of two; a failure counts as
// settled, so it is shown at once. The Result holds the status and asks
// for a reconcile at the grace's end, which writes the status of a child
// that is still starting; it is the zero Result when the status is to be
// written now.
func HoldFirstStatus(obj conditions.Object, childAge, grace time.Duration, settled bool) Result {
	if settled || childAge >= grace || conditions.Get(obj, conditions.Ready) != nil {
		return Result{}
	}
	return Result{HoldStatus: true, RequeueAfter: grace - childAge}
}
