package manager

import (
	"github.com/multi-operator/multi-operator/pkg/reconciler"

	"fmt"
	"strings"

	"github.com/gobuffalo/flect"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// CheckCRDs verifies that the API server serves the custom resource of every
// enabled controller. A missing CRD gives one line that says what to do,
// instead of a controller that crash-loops on a failed watch.
func CheckCRDs(mapper meta.RESTMapper, scheme *runtime.Scheme, enabled []reconciler.Descriptor) error {
	for _, d := range enabled {
		gvk, err := apiutil.GVKForObject(d.For, scheme)
		if err != nil {
			return err
		}
		served, err := ServesKind(mapper, scheme, d.For)
		if err != nil {
			return fmt.Errorf("looking up %s for controller %s: %w", gvk, d.Name, err)
		}
		if !served {
			name, _ := CRDName(d.For, scheme)
			return fmt.Errorf("CRD %s is not installed: apply config/crd or disable the controller with --controllers=-%s", name, d.Name)
		}
	}
	return nil
}

// ServesKind asks mapper whether the API server serves obj's kind in its
// version. A kind it does not know is an answer (false), not an error.
func ServesKind(mapper meta.RESTMapper, scheme *runtime.Scheme, obj runtime.Object) (bool, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return false, err
	}
	_, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// Serves is ServesKind on mgr's REST mapper and scheme, for a controller
// that reads a kind of another component (Descriptor.Read) only where its
// CRD is installed. The answer holds for the process: the manager's
// mapper is asked once, at set-up.
func Serves(mgr ctrl.Manager, obj runtime.Object) (bool, error) {
	return ServesKind(mgr.GetRESTMapper(), mgr.GetScheme(), obj)
}

// CRDName is the name of obj's CRD as controller-gen generates it:
// lower-case plural.group, pluralised by the library controller-gen uses.
func CRDName(obj runtime.Object, scheme *runtime.Scheme) (string, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return "", err
	}
	return flect.Pluralize(strings.ToLower(gvk.Kind)) + "." + gvk.Group, nil
}
