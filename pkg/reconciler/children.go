package reconciler

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
)

// Children applies a controller's children the one way every controller of
// this project does: through apply.Children (which remembers its own
// creates until the cache shows them), with the event of each create and
// update recorded on the owner, and a child that cannot be applied shown on
// the owner and stopping the reconcile. A controller keeps one, with Client
// and Events set, and applies every child through it.
type Children struct {
	// Client applies the children.
	Client client.Client
	// Events records their creates, updates and failures on their owners.
	Events events.Recorder

	// applied remembers the children created until the cache shows them.
	applied apply.Children
}

// Child is a desired child and the events its create and update record on
// its owner: "Created <Kind> <name><CreatedNote>" with the reason Created,
// and "Updated <Kind> <name><UpdatedNote>" with the reason Updated, the kind
// as the scheme names it (such as "Deployment"), so that every controller
// words them alike. An empty reason records no event, for a controller that
// tells the change its own way, such as a scale of a Deployment.
type Child struct {
	// Object is the child as a pure builder computed it. Once applied, it
	// holds the child as the API server has it.
	Object client.Object
	// Created and Updated are the events' reasons.
	Created, Updated string
	// CreatedNote and UpdatedNote follow the child's name in the events'
	// messages, such as " with 3 replicas". Optional.
	CreatedNote, UpdatedNote string
}

// Applied is what Children.Apply did to a child.
type Applied struct {
	// Result says whether the child was created, updated or left alone.
	Result apply.Result
	// Previous is the child as it was before an update, nil unless Result
	// is apply.Updated: a controller that tells a scale reads it.
	Previous client.Object
}

// Apply creates or corrects child.Object as owner's child (apply.Apply)
// and records the event of its create or update.
//
// A child that cannot be applied stops the reconcile: the error is shown on
// owner (StopOnApplyError) and the Result has Stop set, which it has only
// then; the phase returns that Result and the error as they are. Otherwise
// the Result is zero and the error nil.
func (ch *Children) Apply(ctx context.Context, owner conditions.Object, child Child) (Applied, Result, error) {
	result, previous, err := ch.applied.ApplyWithPrevious(ctx, ch.Client, owner, child.Object)
	if err != nil {
		stop, err := StopOnApplyError(ch.Events, owner, err)
		return Applied{Result: result}, stop, err
	}
	switch {
	case result == apply.Created && child.Created != "":
		ch.Events.Normal(owner, child.Created, events.ActionCreate, "Created %s %s%s", apply.KindOf(ch.Client, child.Object), child.Object.GetName(), child.CreatedNote)
	case result == apply.Updated && child.Updated != "":
		ch.Events.Normal(owner, child.Updated, events.ActionUpdate, "Updated %s %s%s", apply.KindOf(ch.Client, child.Object), child.Object.GetName(), child.UpdatedNote)
	}
	return Applied{Result: result, Previous: previous}, Result{}, nil
}

// StopOnApplyError shows on owner that a child could not be applied
// (conditions.ReportApplyError: Ready=False and a Warning event) and
// returns what the phase that applied it returns: a Result that stops the
// reconcile, looking again after conditions.ConflictRetryInterval at a
// name taken by someone else's object, which backoff would not fix, and
// any other error, which is retried with backoff. Children.Apply calls it;
// a phase calls it itself for a failure of its own apply, such as a Secret
// it writes in several steps.
func StopOnApplyError(rec events.Recorder, owner conditions.Object, err error) (Result, error) {
	retryAfter, err := conditions.ReportApplyError(rec, owner, err)
	return StopAndRequeue(retryAfter), err
}
