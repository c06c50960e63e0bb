package naming

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestWithSuffix(t *testing.T) {
	for _, tc := range []struct {
		base, suffix string
		max          int
		want         string
	}{
		{"short", "abc", 63, "short-abc"},
		{strings.Repeat("a", 70), "0123456789", 63, strings.Repeat("a", 52) + "-0123456789"},
		{strings.Repeat("a", 51) + "-b", "0123456789", 63, strings.Repeat("a", 51) + "-0123456789"},
		{strings.Repeat("a", 50) + ".-bc", "0123456789", 63, strings.Repeat("a", 50) + "-0123456789"},
	} {
		NewWithT(t).Expect(WithSuffix(tc.base, tc.suffix, tc.max)).To(Equal(tc.want))
	}
}

func TestHashIsStableAndSeparatesParts(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Hash("a", "b")).To(Equal(Hash("a", "b")))
	g.Expect(Hash("ab", "c")).NotTo(Equal(Hash("a", "bc")))
	g.Expect(Hash("x")).To(HaveLen(HashLength))
}

func FuzzNamesStayValid(f *testing.F) {
	for _, seed := range []string{"a", "example-whalesay", strings.Repeat("w", 250), strings.Repeat("ab-", 30) + "c", "a.b.c"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		// Owners' names are DNS subdomains; others cannot occur.
		if len(validation.IsDNS1123Subdomain(name)) > 0 {
			t.Skip()
		}
		if v := LabelValue(name); len(validation.IsValidLabelValue(v)) > 0 {
			t.Fatalf("LabelValue(%q) = %q is not a label value", name, v)
		}
		if len(name) > MaxLabelValueLength && LabelValue(name) == LabelValue(name+"x") {
			t.Fatalf("long names %q and %q+x share a label value", name, name)
		}
		if strings.Contains(name, ".") {
			return // DNS labels (Job names) come from owners without dots here
		}
		if v := WithSuffix(name, Hash(name), MaxLabelValueLength); len(validation.IsDNS1123Label(v)) > 0 {
			t.Fatalf("WithSuffix(%q) = %q is not a DNS label", name, v)
		}
	})
}
