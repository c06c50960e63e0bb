package intern_test

import (
	"fmt"
	"maps"
	"testing"
	"unsafe"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/multi-operator/multi-operator/pkg/intern"
	testapi "github.com/multi-operator/multi-operator/test/framework/api/v1alpha1"
)

// sameString reports whether a and b share their bytes, not equal copies.
func sameString(a, b string) bool {
	return len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}

// sameMap reports whether a and b are the same map, not equal copies.
func sameMap(a, b map[string]string) bool {
	return a != nil && fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b)
}

// copied returns a string equal to s in memory of its own, as a decoder
// allocates each string it reads.
func copied(s string) string { return string([]byte(s)) }

// labels returns a new map of the labels of instance, in new strings.
func labels(instance string) map[string]string {
	return map[string]string{
		copied("app.kubernetes.io/name"):       copied("memcached"),
		copied("app.kubernetes.io/instance"):   copied(instance),
		copied("app.kubernetes.io/managed-by"): copied("multi-operator"),
	}
}

// deployment is a Deployment as the Memcached controller builds it, every
// string and map allocated on its own as a decoded one is.
func deployment(instance string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: copied(instance), Namespace: copied("ns"), Labels: labels(instance),
			Annotations: map[string]string{copied("deployment.kubernetes.io/revision"): copied("1")},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: copied("cache.example.com/v1alpha1"), Kind: copied("Memcached"), Name: copied(instance),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels(instance)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(instance)},
				Spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
						Weight: 100,
						PodAffinityTerm: corev1.PodAffinityTerm{
							TopologyKey:   copied("kubernetes.io/hostname"),
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels(instance)},
						},
					}},
				}}},
			},
		},
		Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentConditionType(copied("Available")), Status: corev1.ConditionStatus(copied("True")),
			Reason: copied("MinimumReplicasAvailable"), Message: copied("Deployment has minimum availability."),
		}}},
	}
}

func TestEqualLabelMapsAreOneMap(t *testing.T) {
	g := NewWithT(t)
	table := intern.New(intern.DefaultSize)
	d := deployment("a")
	want := d.DeepCopy()
	table.Object(d)

	g.Expect(equality.Semantic.DeepEqual(d, want)).To(BeTrue(), "interning changes no value")
	g.Expect(sameMap(d.Labels, d.Spec.Template.Labels)).To(BeTrue(), "the pods' labels are the Deployment's")
	g.Expect(sameMap(d.Spec.Selector.MatchLabels, d.Labels)).To(BeTrue(), "the selector is the same map as the equal labels")
	affinity := d.Spec.Template.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	g.Expect(sameMap(affinity.LabelSelector.MatchLabels, d.Spec.Selector.MatchLabels)).To(BeTrue(), "the anti-affinity selector is the selector")

	// A Service of the same instance, decoded on its own, shares the map too.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: labels("a")}, Spec: corev1.ServiceSpec{Selector: labels("a")}}
	table.Object(svc)
	g.Expect(sameMap(svc.Labels, d.Labels)).To(BeTrue())
	g.Expect(sameMap(svc.Spec.Selector, d.Labels)).To(BeTrue())
}

func TestObjectsShareTheirRecurringStrings(t *testing.T) {
	g := NewWithT(t)
	table := intern.New(intern.DefaultSize)
	a, b := deployment("a"), deployment("b")
	table.Object(a)
	table.Object(b)

	g.Expect(sameMap(a.Labels, b.Labels)).To(BeFalse(), "the instances' labels differ")
	key := func(d *appsv1.Deployment, name string) string {
		for k := range d.Labels {
			if k == name {
				return k
			}
		}
		return ""
	}
	g.Expect(sameString(key(a, "app.kubernetes.io/name"), key(b, "app.kubernetes.io/name"))).To(BeTrue(), "label keys")
	g.Expect(sameString(a.Labels["app.kubernetes.io/managed-by"], b.Labels["app.kubernetes.io/managed-by"])).To(BeTrue(), "label values")
	g.Expect(sameMap(a.Annotations, b.Annotations)).To(BeTrue(), "equal annotations are one map")
	g.Expect(sameString(a.Namespace, b.Namespace)).To(BeTrue(), "namespace")
	ra, rb := a.OwnerReferences[0], b.OwnerReferences[0]
	g.Expect(sameString(ra.APIVersion, rb.APIVersion) && sameString(ra.Kind, rb.Kind)).To(BeTrue(), "owner kinds")
	g.Expect(ra.Controller).To(BeIdenticalTo(rb.Controller), "owner flags")
	g.Expect(*ra.Controller).To(BeTrue())
	ca, cb := a.Status.Conditions[0], b.Status.Conditions[0]
	g.Expect(sameString(string(ca.Type), string(cb.Type)) && sameString(ca.Reason, cb.Reason) && sameString(ca.Message, cb.Message)).To(BeTrue(), "conditions")
	g.Expect(sameString(a.Name, b.Name)).To(BeFalse())
}

func TestOtherKindsShareTheirStrings(t *testing.T) {
	condition := func() metav1.Condition {
		return metav1.Condition{Type: copied("Ready"), Status: metav1.ConditionStatus(copied("True")), Reason: copied("Ready"), Message: copied("1 of 1 servers available")}
	}
	job := func() *batchv1.Job {
		return &batchv1.Job{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels("w")}}},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{
				Type: batchv1.JobConditionType(copied("Complete")), Status: corev1.ConditionStatus(copied("True")), Reason: copied("CompletionsReached"),
			}}},
		}
	}
	widget := func() *testapi.Widget {
		return &testapi.Widget{Status: testapi.WidgetStatus{Conditions: []metav1.Condition{condition()}}}
	}
	for _, tc := range []struct {
		name   string
		first  func() any
		shared func(a, b any) bool
	}{
		{"Job template labels", func() any { return job() }, func(a, b any) bool {
			return sameMap(a.(*batchv1.Job).Spec.Template.Labels, b.(*batchv1.Job).Spec.Template.Labels)
		}},
		{"Job conditions", func() any { return job() }, func(a, b any) bool {
			return sameString(a.(*batchv1.Job).Status.Conditions[0].Reason, b.(*batchv1.Job).Status.Conditions[0].Reason)
		}},
		{"custom resource conditions", func() any { return widget() }, func(a, b any) bool {
			ca, cb := a.(*testapi.Widget).Status.Conditions[0], b.(*testapi.Widget).Status.Conditions[0]
			return sameString(ca.Message, cb.Message) && sameString(ca.Type, cb.Type) && sameString(string(ca.Status), string(cb.Status))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			table := intern.New(intern.DefaultSize)
			a, b := tc.first(), tc.first()
			table.Object(a)
			table.Object(b)
			g.Expect(tc.shared(a, b)).To(BeTrue())
		})
	}
}

func TestTheTableStaysBounded(t *testing.T) {
	g := NewWithT(t)
	const size = 8
	table := intern.New(size)
	for i := range 10 * size {
		d := deployment(fmt.Sprintf("instance-%d", i))
		table.Object(d)
		g.Expect(d.Labels["app.kubernetes.io/instance"]).To(Equal(fmt.Sprintf("instance-%d", i)), "a full table still returns equal values")
		strs, maps := table.Len()
		g.Expect(strs).To(BeNumerically("<=", size))
		g.Expect(maps).To(BeNumerically("<=", size))
	}
	// Started over, it remembers again what recurs.
	a, b := deployment("x"), deployment("y")
	table.Object(a)
	table.Object(b)
	g.Expect(sameMap(a.Annotations, b.Annotations)).To(BeTrue())
}

func TestEmptyMapsAndStringsStayEmpty(t *testing.T) {
	g := NewWithT(t)
	table := intern.New(intern.DefaultSize)
	g.Expect(table.Map(map[string]string{})).To(BeNil())
	g.Expect(table.String("")).To(BeEmpty())
	d := &appsv1.Deployment{}
	table.Object(d)
	g.Expect(equality.Semantic.DeepEqual(d, &appsv1.Deployment{})).To(BeTrue())
	table.Object("not an object")
}

// FuzzMapsKeepTheirContent: however keys and values are chosen, the map
// Map returns is equal to the one it was given, equal maps are one, and
// maps that differ are never one (a value may hold any byte).
func FuzzMapsKeepTheirContent(f *testing.F) {
	f.Add("a", "1", "b", "2", "a", "1\x00b\x002")
	f.Add("a\x00b", "", "a", "\x00b", "a", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		table := intern.New(4)
		m := map[string]string{k1: v1, k2: v2}
		got := table.Map(m)
		if !maps.Equal(got, m) {
			t.Fatalf("Map(%q) = %q", m, got)
		}
		if again := table.Map(maps.Clone(m)); !sameMap(got, again) {
			t.Fatalf("an equal map was not shared: %q", m)
		}
		other := map[string]string{k3: v3}
		if got3 := table.Map(other); !maps.Equal(got3, other) || (sameMap(got3, got) && !maps.Equal(m, other)) {
			t.Fatalf("Map(%q) = %q after Map(%q)", other, got3, m)
		}
	})
}

// A label map the table already has is found without an allocation: the
// transform looks up every label map of every object the watches deliver.
func TestARememberedMapIsFoundWithoutAllocating(t *testing.T) {
	g := NewWithT(t)
	table := intern.New(intern.DefaultSize)
	labels := map[string]string{
		"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": "memcached-sample",
		"app.kubernetes.io/managed-by": "multi-operator", "app.kubernetes.io/part-of": "multi-operator",
	}
	first := table.Map(labels)
	var got map[string]string
	g.Expect(testing.AllocsPerRun(100, func() { got = table.Map(labels) })).To(BeZero())
	g.Expect(sameMap(got, first)).To(BeTrue())
}
