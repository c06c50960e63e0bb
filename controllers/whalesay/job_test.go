package whalesay_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/controllers/whalesay"
	"github.com/multi-operator/multi-operator/pkg/naming"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// A WhaleSay without podTemplate, or with an empty one, keeps the Job
// name it had before the field existed, so that an upgrade (or a tool that
// empties the field) runs no finished Job again; each podTemplate that
// sets something gets a name of its own, the same one every time.
func TestJobNameFollowsThePodTemplate(t *testing.T) {
	g := NewWithT(t)
	ws := builders.WhaleSay("ns", "hello").Message("hi").Obj()
	unset := naming.WithSuffix("hello", naming.Hash(testImage, "hi"), naming.MaxLabelValueLength)
	g.Expect(whalesay.JobName(ws, testImage)).To(Equal(unset))
	ws.Spec.PodTemplate = &shared.PodTemplate{}
	g.Expect(whalesay.JobName(ws, testImage)).To(Equal(unset), "an empty podTemplate")

	names := map[string]bool{unset: true}
	for _, pt := range []*shared.PodTemplate{
		{NodeSelector: map[string]string{"pool": "a"}},
		{NodeSelector: map[string]string{"pool": "b"}},
		builders.PodTemplate(),
	} {
		ws.Spec.PodTemplate = pt
		name := whalesay.JobName(ws, testImage)
		g.Expect(names).NotTo(HaveKey(name), "%+v", pt)
		names[name] = true
		ws.Spec.PodTemplate = pt.DeepCopy()
		g.Expect(whalesay.JobName(ws, testImage)).To(Equal(name), "deterministic")
	}
}

func TestDesiredJobPlacement(t *testing.T) {
	g := NewWithT(t)
	ws := builders.WhaleSay("ns", "hello").Message("hi").Obj()
	ws.Spec.PodTemplate = builders.PodTemplate()
	job := whalesay.DesiredJob(ws, testImage)
	builders.ExpectPodTemplate(g, job.Spec.Template, job.Labels)
}
