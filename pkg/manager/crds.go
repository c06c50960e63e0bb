package manager

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// CheckCRDs verifies that the API server serves the custom resource of every
// enabled controller. A missing CRD gives one line that says what to do,
// instead of a controller that crash-loops on a failed watch.
func CheckCRDs(mapper meta.RESTMapper, scheme *runtime.Scheme, enabled []Descriptor) error {
	for _, d := range enabled {
		gvk, err := apiutil.GVKForObject(d.For, scheme)
		if err != nil {
			return err
		}
		_, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("CRD %s is not installed: apply config/crd or disable the controller with --controllers=-%s", crdName(gvk), d.Name)
		}
		if err != nil {
			return fmt.Errorf("looking up %s for controller %s: %w", gvk, d.Name, err)
		}
	}
	return nil
}

// crdName is the CRD's name as kubebuilder generates it: lower-case plural.group.
func crdName(gvk schema.GroupVersionKind) string {
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return strings.ToLower(plural.Resource) + "." + gvk.Group
}
