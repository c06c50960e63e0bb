package testenv

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNamespacePrefixIsAValidName(t *testing.T) {
	// Subtests' names carry slashes, underscores, commas, spaces and
	// letters a DNS label may not hold; a long one is cut.
	long := "TestAVeryLongNameThatGoesOnAndOn/subtest,with,commas,right,at,the,cut"
	for _, name := range []string{"TestX", "TestApply/a_child,_at_once,_then_again", "TestRolling/Ünïcode and spaces: (1)", long} {
		// generateName gets five random characters appended.
		if errs := validation.IsDNS1123Label(namespacePrefix(name) + "abcde"); len(errs) > 0 {
			t.Errorf("%q: %q is not a valid namespace name: %v", name, namespacePrefix(name), errs)
		}
	}
}
