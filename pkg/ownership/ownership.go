// Package ownership says which objects belong to which custom resource: the
// standard labels every child carries (the manager's caches select by them)
// and the error for an object of a child's name that its owner does not
// control.
package ownership

import (
	"errors"
	"fmt"

	"github.com/multi-operator/multi-operator/pkg/naming"
)

// Standard label keys (https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/).
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelPartOf    = "app.kubernetes.io/part-of"
)

// LabelWatch, set to WatchValue, marks an object that a custom resource
// references but the operator does not make, such as a RedisCluster's
// password Secret: the manager's cache holds only such objects of a
// Referenced kind, so their changes reach the controller. The objects of
// that kind which the operator makes carry it too.
const (
	LabelWatch = "multi-operator.dev/watch"
	WatchValue = "true"
)

// ManagedBy is the value of app.kubernetes.io/managed-by on every object this
// project creates. The manager's caches select child kinds by it.
const ManagedBy = "multi-operator"

// SelectorLabels are the labels that identify the children of one owner
// instance. They never change for the owner's lifetime, so they are safe to
// use in immutable selectors (Deployment, StatefulSet). An instance name
// longer than a label value may be is shortened with a hash.
func SelectorLabels(app, instance string) map[string]string {
	return map[string]string{
		LabelName:      app,
		LabelInstance:  naming.LabelValue(instance),
		LabelManagedBy: ManagedBy,
	}
}

// Labels are the standard labels of a child: SelectorLabels plus part-of.
func Labels(app, instance string) map[string]string {
	l := SelectorLabels(app, instance)
	l[LabelPartOf] = ManagedBy
	return l
}

// ConflictError says that an object with a child's name exists and is not
// controlled by the owner, so the owner must not touch it.
type ConflictError struct {
	// Kind and Name identify the existing object.
	Kind, Name string
	// Controller names the object's current controller, or is empty when it has none.
	Controller string
}

func (e *ConflictError) Error() string {
	by := "is not controlled by this resource"
	if e.Controller != "" {
		by = "is controlled by " + e.Controller
	}
	return fmt.Sprintf("%s %q already exists and %s; delete or rename it", e.Kind, e.Name, by)
}

// IsConflict reports whether err is, or wraps, a ConflictError.
func IsConflict(err error) bool {
	var c *ConflictError
	return errors.As(err, &c)
}
