package manager

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestImageFromEnv(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("TEST_IMAGE", "")
	g.Expect(ImageFromEnv("TEST_IMAGE", "default:1")).To(Equal("default:1"))
	t.Setenv("TEST_IMAGE", "mirror.example/app:2")
	g.Expect(ImageFromEnv("TEST_IMAGE", "default:1")).To(Equal("mirror.example/app:2"))
}
