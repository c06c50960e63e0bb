package stringmaps_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/stringmaps"
)

func TestOverlayPutsTopOverBaseInNewMemory(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, top map[string]string
		want      map[string]string
	}{
		{name: "both nil", want: nil},
		{name: "both empty", base: map[string]string{}, top: map[string]string{}, want: nil},
		{name: "base only", base: map[string]string{"a": "1"}, want: map[string]string{"a": "1"}},
		{name: "top only", top: map[string]string{"b": "2"}, want: map[string]string{"b": "2"}},
		{name: "top wins", base: map[string]string{"a": "1", "c": "3"}, top: map[string]string{"a": "top"}, want: map[string]string{"a": "top", "c": "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			baseBefore := map[string]string{}
			for k, v := range tc.base {
				baseBefore[k] = v
			}
			got := stringmaps.Overlay(tc.base, tc.top)
			g.Expect(got).To(Equal(tc.want))
			if got != nil {
				got["new"] = "x"
			}
			g.Expect(tc.base).To(HaveLen(len(baseBefore)), "base is not changed")
			g.Expect(tc.top).NotTo(HaveKey("new"), "top is not changed")
		})
	}
}
