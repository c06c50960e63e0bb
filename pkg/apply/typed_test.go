package apply

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/randfill"
)

// The kinds the controllers apply, which the typed comparison must judge
// as the unstructured one does.
var appliedKinds = []func() client.Object{
	func() client.Object { return &appsv1.Deployment{} },
	func() client.Object { return &appsv1.StatefulSet{} },
	func() client.Object { return &corev1.Service{} },
	func() client.Object { return &corev1.ConfigMap{} },
	func() client.Object { return &corev1.Secret{} },
	func() client.Object { return &batchv1.Job{} },
	func() client.Object { return &policyv1.PodDisruptionBudget{} },
}

// filler fills objects at random, with the few types whose random values
// the converter cannot write (a Quantity's internals, a time out of
// RFC 3339's range, managed fields that are not JSON) made from valid
// values instead.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.4).NumElements(0, 2).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			// Equal values in several formats, some written alike (100
			// in BinarySI is "100"), some not (1Gi against 1073741824).
			format := []resource.Format{resource.DecimalSI, resource.BinarySI, resource.DecimalExponent}[c.Intn(3)]
			if c.Bool() {
				*q = *resource.NewMilliQuantity(c.Int63n(5000), format)
			} else {
				*q = *resource.NewQuantity(c.Int63n(3)<<c.Intn(31), format)
			}
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(c.Int63n(1<<31), 0))
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			f.SetRawBytes([]byte(`{"f:spec":{}}`))
		},
		func(i *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*i = intstr.FromInt32(c.Int31n(3))
			} else {
				*i = intstr.FromString([]string{"", "http", "80"}[c.Intn(3)])
			}
		},
	)
}

// thinned returns a copy of obj with fields left out at random, as a
// builder's desired object sets fewer fields than the API server's copy.
func thinned(obj client.Object, r *rand.Rand) client.Object {
	out := obj.DeepCopyObject().(client.Object)
	thin(reflect.ValueOf(out).Elem(), r)
	return out
}

func thin(v reflect.Value, r *rand.Rand) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			thin(v.Elem(), r)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			if r.IntN(5) == 0 {
				f.Set(reflect.Zero(f.Type()))
				continue
			}
			thin(f, r)
		}
	case reflect.Slice:
		for i := range v.Len() {
			thin(v.Index(i), r)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if r.IntN(4) == 0 {
				v.SetMapIndex(k, reflect.Value{})
			}
		}
	}
}

// checkAgreement holds typedSubset to the unstructured comparison for
// objects made from seed: a random pair, copies thinned out, and two
// copies thinned out differently.
func checkAgreement(g Gomega, seed int64) {
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	for _, newObject := range appliedKinds {
		existing, other := newObject(), newObject()
		filler(seed).Fill(existing)
		filler(seed + 1).Fill(other)
		pairs := [][2]client.Object{
			{other, existing},
			{existing, existing},
			{thinned(existing, r), existing},
			{thinned(thinned(existing, r), r), existing},
			// Each side lacks fields the other has.
			{thinned(existing, r), thinned(existing, r)},
		}
		for _, pair := range pairs {
			desired, existing := pair[0], pair[1]
			d, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
			g.Expect(err).NotTo(HaveOccurred())
			e, err := runtime.DefaultUnstructuredConverter.ToUnstructured(existing)
			g.Expect(err).NotTo(HaveOccurred())
			same, ok := typedSubset(desired, existing)
			g.Expect(ok).To(BeTrue(), "%T is covered", desired)
			g.Expect(same).To(Equal(unstructuredSubset(d, e)), "seed %d, %T:\ndesired %v\nexisting %v", seed, desired, d, e)
		}
	}
}

// The typed comparison agrees with the unstructured one on random objects
// of every applied kind, and finds thinned copies to be subsets often
// enough for the test to mean something.
func TestTypedSubsetAgreesWithUnstructured(t *testing.T) {
	g := NewWithT(t)
	for seed := range int64(300) {
		checkAgreement(g, seed)
	}
	subsets := 0
	for seed := range int64(300) {
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		existing := &appsv1.Deployment{}
		filler(seed).Fill(existing)
		if same, _ := typedSubset(thinned(existing, r), existing); same {
			subsets++
		}
	}
	g.Expect(subsets).To(BeNumerically(">", 30), "thinned copies are subsets")
}

// FuzzTypedSubsetAgreesWithUnstructured explores more seeds: go test
// -fuzz=FuzzTypedSubset ./pkg/apply.
func FuzzTypedSubsetAgreesWithUnstructured(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(42))
	f.Fuzz(func(t *testing.T, seed int64) {
		checkAgreement(NewWithT(t), seed)
	})
}

// Table cases the random ones may miss: the converter's rules for zero
// values, nil and empty collections, and types with their own converters.
func TestTypedSubset(t *testing.T) {
	port := func(p corev1.ServicePort) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{p}}}
	}
	replicas := func(n *int32) *appsv1.Deployment { return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: n}} }
	resources := func(limits corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: limits}}}}}
	}
	limits := func(cpu string) *corev1.Pod {
		return resources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)})
	}
	memory := func(q *resource.Quantity) *corev1.Pod {
		return resources(corev1.ResourceList{corev1.ResourceMemory: *q})
	}
	zero, one := int32(0), int32(1)
	for _, tc := range []struct {
		name              string
		desired, existing client.Object
		want              bool
	}{
		{"an unset pointer matches anything", replicas(nil), replicas(&one), true},
		{"a pointer to zero is set", replicas(&zero), replicas(nil), false},
		{"a pointer to zero matches zero", replicas(&zero), replicas(&zero), true},
		{"a field without omitempty is set even when zero", port(corev1.ServicePort{Port: 0}), port(corev1.ServicePort{Port: 80}), false},
		{"an omitempty field left empty is not", port(corev1.ServicePort{Port: 80}), port(corev1.ServicePort{Port: 80, Name: "http", Protocol: corev1.ProtocolTCP}), true},
		{"an IntOrString compares in its converted form", port(corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(80)}), port(corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("80")}), false},
		{"a list differs at another length", &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
			&corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}, {Port: 81}}}}, false},
		{"an empty map matches a missing one", &corev1.ConfigMap{Data: map[string]string{}}, &corev1.ConfigMap{}, true},
		{"a map matches key by key", &corev1.ConfigMap{Data: map[string]string{"a": "1"}}, &corev1.ConfigMap{Data: map[string]string{"a": "1", "b": "2"}}, true},
		{"a missing key is a difference", &corev1.ConfigMap{Data: map[string]string{"c": "3"}}, &corev1.ConfigMap{Data: map[string]string{"a": "1"}}, false},
		{"bytes compare whole", &corev1.Secret{Data: map[string][]byte{"k": []byte("v")}}, &corev1.Secret{Data: map[string][]byte{"k": []byte("w")}}, false},
		{"quantities compare in canonical form", limits("1"), limits("1000m"), true},
		{"other quantities differ", limits("1"), limits("999m"), false},
		{"an equal quantity in another format is written otherwise", memory(resource.NewQuantity(1<<30, resource.BinarySI)), memory(resource.NewQuantity(1<<30, resource.DecimalSI)), false},
		{"a small binary quantity is written as a decimal one", memory(resource.NewQuantity(100, resource.BinarySI)), memory(resource.NewQuantity(100, resource.DecimalSI)), true},
		{"a resource list matches name by name", limits("1"), resources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}), true},
		{"a missing resource is a difference", limits("1"), memory(resource.NewQuantity(1, resource.DecimalSI)), false},
		{"an empty resource list matches a missing one", resources(corev1.ResourceList{}), resources(nil), true},
		{"an IntOrString of another type differs", port(corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}), port(corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(0)}), false},
		{"an IntOrString matches its equal", port(corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}), port(corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}), true},
		{"metadata and status are left out", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: appsv1.DeploymentStatus{Replicas: 3}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			same, ok := typedSubset(tc.desired, tc.existing)
			g.Expect(ok).To(BeTrue())
			g.Expect(same).To(Equal(tc.want))
			d, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.desired)
			e, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.existing)
			g.Expect(unstructuredSubset(d, e)).To(Equal(tc.want), "the unstructured comparison agrees")
		})
	}
	_, ok := typedSubset(&corev1.Service{}, &appsv1.Deployment{})
	NewWithT(t).Expect(ok).To(BeFalse(), "objects of two types are left to the unstructured comparison")
}

// A reconcile compares every child with the cache's copy, so comparing a
// pod template that holds quantities, a resource list and named ports must
// not allocate: boxing them, or making their converted forms, was most of
// that comparison's cost.
func TestComparingAPodTemplateAllocatesNothing(t *testing.T) {
	g := NewWithT(t)
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("memcached")}}, PeriodSeconds: 10}
	desired := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "memcached", Image: "memcached:1.6", ReadinessProbe: probe, LivenessProbe: probe.DeepCopy(),
			Ports: []corev1.ContainerPort{{Name: "memcached", ContainerPort: 11211}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
		}},
	}}}}
	existing := desired.DeepCopy()
	var same, ok bool
	g.Expect(testing.AllocsPerRun(100, func() { same, ok = typedSubset(desired, existing) })).To(BeZero())
	g.Expect(ok).To(BeTrue())
	g.Expect(same).To(BeTrue())
	existing.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("256Mi")
	same, _ = typedSubset(desired, existing)
	g.Expect(same).To(BeFalse(), "a changed limit is a difference")
}
