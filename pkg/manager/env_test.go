package manager

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestOptionsFromEnv(t *testing.T) {
	g := NewWithT(t)
	d := Descriptor{Name: "test", ImageEnv: "TEST_IMAGE", DefaultImage: "default:1"}
	t.Setenv("TEST_IMAGE", "")
	g.Expect(OptionsFromEnv(d).Image).To(Equal("default:1"))
	t.Setenv("TEST_IMAGE", "mirror.example/app:2")
	g.Expect(OptionsFromEnv(d).Image).To(Equal("mirror.example/app:2"))
	g.Expect(OptionsFromEnv(Descriptor{Name: "no-image"}).Image).To(BeEmpty(), "a controller without an operand image gets none")
}
