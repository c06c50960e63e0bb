package shared_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/randfill"

	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// podSpecJSON is what a Pod spec reads from podTemplate's JSON, strictly:
// a field of podTemplate that the Pod spec (or its metadata) does not
// have under the same name is an error, so the names stay pasteable.
type podSpecJSON struct {
	corev1.PodSpec
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// viaJSON decodes pt's JSON as a Pod spec.
func viaJSON(t *testing.T, pt *shared.PodTemplate) podSpecJSON {
	t.Helper()
	raw, err := json.Marshal(pt)
	if err != nil {
		t.Fatal(err)
	}
	var out podSpecJSON
	strict, err := sigsjson.UnmarshalStrict(raw, &out, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		t.Fatalf("podTemplate's JSON is no Pod spec: %v\n%s", err, raw)
	}
	return out
}

// converted is pt through the conversion functions, as a Pod spec.
func converted(pt *shared.PodTemplate) podSpecJSON {
	return podSpecJSON{
		PodSpec: corev1.PodSpec{
			NodeSelector:              pt.NodeSelector,
			Tolerations:               pt.CoreTolerations(),
			Affinity:                  pt.Affinity.Core(),
			TopologySpreadConstraints: pt.CoreTopologySpreadConstraints(),
			PriorityClassName:         pt.PriorityClassName,
			ImagePullSecrets:          pt.CoreImagePullSecrets(),
		},
		Labels:      pt.Labels,
		Annotations: pt.Annotations,
	}
}

func TestConversionsMatchThePodSpecsJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		pt   *shared.PodTemplate
	}{
		{name: "every field", pt: builders.PodTemplate()},
		{name: "empty", pt: &shared.PodTemplate{}},
		{name: "an empty affinity", pt: &shared.PodTemplate{Affinity: &shared.Affinity{}}},
		{name: "a toleration of every taint", pt: &shared.PodTemplate{Tolerations: []shared.Toleration{{Operator: "Exists"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			want := viaJSON(t, tc.pt)
			got := converted(tc.pt)
			g.Expect(equality.Semantic.DeepEqual(got, want)).To(BeTrue(), "converted %+v\nvia JSON  %+v", got, want)
		})
	}
}

func TestConversionsOfEveryField(t *testing.T) {
	g := NewWithT(t)
	pt := builders.PodTemplate()
	g.Expect(pt.CoreTolerations()).To(Equal([]corev1.Toleration{{
		Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "cache", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60),
	}}))
	g.Expect(pt.CoreImagePullSecrets()).To(Equal([]corev1.LocalObjectReference{{Name: "registry"}}))
	spread := pt.CoreTopologySpreadConstraints()
	g.Expect(spread).To(HaveLen(1))
	g.Expect(spread[0].WhenUnsatisfiable).To(Equal(corev1.DoNotSchedule))
	g.Expect(*spread[0].NodeTaintsPolicy).To(Equal(corev1.NodeInclusionPolicyIgnore))
	g.Expect(spread[0].LabelSelector.MatchExpressions).To(Equal([]metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"cache"}}}))

	a := pt.Affinity.Core()
	g.Expect(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Operator).To(Equal(corev1.NodeSelectorOpNotIn))
	g.Expect(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey).To(Equal("kubernetes.io/hostname"))
	g.Expect(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight).To(Equal(int32(50)))

	// The results share no memory with the custom resource: a builder may
	// change them without changing the object in the cache.
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels["app"] = "changed"
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].Namespaces[0] = "changed"
	spread[0].MatchLabelKeys[0] = "changed"
	*spread[0].MinDomains = 9
	g.Expect(pt).To(Equal(builders.PodTemplate()))

	var none *shared.PodTemplate
	g.Expect(none.CoreTolerations()).To(BeNil())
	g.Expect(none.CoreTopologySpreadConstraints()).To(BeNil())
	g.Expect(none.CoreImagePullSecrets()).To(BeNil())
	g.Expect((*shared.Affinity)(nil).Core()).To(BeNil())
	g.Expect((*shared.LabelSelector)(nil).Core()).To(BeNil())
}

// FuzzConversionsMatchThePodSpecsJSON fills a podTemplate at random and
// checks that the conversions give what a Pod spec decodes from its JSON:
// no field is lost, renamed or mistranslated.
func FuzzConversionsMatchThePodSpecsJSON(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(binary.LittleEndian.AppendUint64(nil, seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var seed [8]byte
		copy(seed[:], data)
		fill := randfill.NewWithSeed(int64(binary.LittleEndian.Uint64(seed[:]))).NilChance(0.3).NumElements(0, 3)
		pt := &shared.PodTemplate{}
		fill.Fill(pt)
		if !equality.Semantic.DeepEqual(converted(pt), viaJSON(t, pt)) {
			t.Fatalf("the conversions differ from the Pod spec's JSON for %+v", pt)
		}
	})
}
