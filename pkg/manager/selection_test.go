package manager

import (
	"github.com/multi-operator/multi-operator/pkg/reconciler"

	"testing"

	. "github.com/onsi/gomega"
)

func TestSelect(t *testing.T) {
	all := []reconciler.Descriptor{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	for _, tc := range []struct {
		name    string
		flags   []string
		enabled []string
		err     string
	}{
		{name: "default star", flags: []string{"*"}, enabled: []string{"a", "b", "c"}},
		{name: "one", flags: []string{"b"}, enabled: []string{"b"}},
		{name: "star minus one", flags: []string{"*", "-b"}, enabled: []string{"a", "c"}},
		{name: "minus before star", flags: []string{"-a", "*"}, enabled: []string{"b", "c"}},
		{name: "first mention wins", flags: []string{"a", "-a"}, enabled: []string{"a"}},
		{name: "disable wins when first", flags: []string{"-a", "a", "*"}, enabled: []string{"b", "c"}},
		{name: "components append", flags: []string{"a", "c"}, enabled: []string{"a", "c"}},
		{name: "nothing", flags: []string{}, enabled: nil},
		{name: "only disables", flags: []string{"-a"}, enabled: nil},
		{name: "unknown", flags: []string{"a", "zz"}, err: `unknown controller "zz" in --controllers; valid controllers: a, b, c`},
		{name: "unknown disabled", flags: []string{"-zz"}, err: `unknown controller "-zz"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			enabled, disabled, err := Select(all, tc.flags)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tc.enabled == nil {
				g.Expect(enabled).To(BeEmpty())
			} else {
				g.Expect(Names(enabled)).To(Equal(tc.enabled))
			}
			g.Expect(len(enabled) + len(disabled)).To(Equal(len(all)))
		})
	}
}
