package manager

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

func TestOptionsFromEnv(t *testing.T) {
	g := NewWithT(t)
	d := reconciler.Descriptor{Name: "test", ImageEnv: "TEST_IMAGE", DefaultImage: "default:1"}
	t.Setenv("TEST_IMAGE", "")
	g.Expect(OptionsFromEnv(d).Image).To(Equal("default:1"))
	t.Setenv("TEST_IMAGE", "mirror.example/app:2")
	g.Expect(OptionsFromEnv(d).Image).To(Equal("mirror.example/app:2"))
	g.Expect(OptionsFromEnv(reconciler.Descriptor{Name: "no-image"}).Image).To(BeEmpty(), "a controller without an operand image gets none")
	e := reconciler.Descriptor{Name: "test", ExporterImageEnv: "TEST_EXPORTER_IMAGE", DefaultExporterImage: "exporter:1",
		ExporterScrapersEnv: "TEST_SCRAPERS", DefaultExporterScrapers: "metrics=enabled"}
	t.Setenv("TEST_EXPORTER_IMAGE", "")
	t.Setenv("TEST_SCRAPERS", "")
	g.Expect(OptionsFromEnv(e)).To(And(HaveField("ExporterImage", "exporter:1"), HaveField("ExporterScrapers", "metrics=enabled")))
	t.Setenv("TEST_EXPORTER_IMAGE", "mirror.example/exporter:2")
	t.Setenv("TEST_SCRAPERS", "team=monitoring")
	g.Expect(OptionsFromEnv(e)).To(And(HaveField("ExporterImage", "mirror.example/exporter:2"), HaveField("ExporterScrapers", "team=monitoring")))
	g.Expect(OptionsFromEnv(d).ExporterScrapers).To(BeEmpty(), "a controller without a NetworkPolicy gets none")
	g.Expect(OptionsFromEnv(d).ExporterImage).To(BeEmpty(), "a controller without an exporter gets no exporter image")
	g.Expect(OptionsFromEnv(d).StartupGrace).To(Equal(reconciler.DefaultStartupGrace), "the manager holds first statuses as the controllers' tests do not")

	t.Setenv("TEST_EXPORTER_IMAGE", "")
	d.ExporterImageEnv = "TEST_EXPORTER_IMAGE"
	g.Expect(OptionsFromEnv(d).ExporterImage).To(BeEmpty(), "unset: the controller's default")
	t.Setenv("TEST_EXPORTER_IMAGE", "mirror.example/manager:3")
	g.Expect(OptionsFromEnv(d).ExporterImage).To(Equal("mirror.example/manager:3"))
	g.Expect(OptionsFromEnv(d).Image).To(Equal("mirror.example/app:2"), "apart from the operand's")
}
