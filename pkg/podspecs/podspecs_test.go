package podspecs_test

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/multi-operator/multi-operator/pkg/podspecs"
)

// podSpec is a pod spec with every kind of part a spec can share: slices,
// maps, pointers and resource quantities.
func podSpec(image string) corev1.PodSpec {
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
		NodeSelector:    map[string]string{"b": "2", "a": "1"},
		Containers: []corev1.Container{{
			Name: "app", Image: image, Args: []string{"-m", "64"},
			Ports: []corev1.ContainerPort{{Name: "tcp", ContainerPort: 11211}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("100m"),
			}},
		}},
	}
}

func deployment(name, image string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(image)}},
	}
}

// withAntiAffinity keeps d's pods apart from each other, as a part of the
// spec that differs from object to object.
func withAntiAffinity(d *appsv1.Deployment) *appsv1.Deployment {
	d.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey:   "kubernetes.io/hostname",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"instance": d.Name}},
		}},
	}}
	return d
}

// shares reports whether a and b hold the same containers, not equal copies.
func shares(a, b *corev1.PodSpec) bool { return &a.Containers[0] == &b.Containers[0] }

func TestEqualPodSpecsShareTheirParts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		first     any
		second    any
		specOf    func(any) *corev1.PodSpec
		wantShare bool
	}{
		{
			name: "two Deployments with equal specs", first: deployment("a", "memcached:1"), second: deployment("b", "memcached:1"),
			specOf: func(o any) *corev1.PodSpec { return &o.(*appsv1.Deployment).Spec.Template.Spec }, wantShare: true,
		},
		{
			name: "different images", first: deployment("a", "memcached:1"), second: deployment("b", "memcached:2"),
			specOf: func(o any) *corev1.PodSpec { return &o.(*appsv1.Deployment).Spec.Template.Spec },
		},
		{
			name:  "equal containers, an anti-affinity of each object's own",
			first: withAntiAffinity(deployment("a", "memcached:1")), second: withAntiAffinity(deployment("b", "memcached:1")),
			specOf: func(o any) *corev1.PodSpec { return &o.(*appsv1.Deployment).Spec.Template.Spec }, wantShare: true,
		},
		{
			name:   "a Job and a StatefulSet running the same pods",
			first:  &batchv1.Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec("x:1")}}},
			second: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{Spec: podSpec("x:1")}}},
			specOf: func(o any) *corev1.PodSpec {
				if j, ok := o.(*batchv1.Job); ok {
					return &j.Spec.Template.Spec
				}
				return &o.(*appsv1.StatefulSet).Spec.Template.Spec
			},
			wantShare: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			table := podspecs.New(podspecs.DefaultSize)
			want := tc.specOf(tc.second).DeepCopy()
			table.InternObject(tc.first)
			table.InternObject(tc.second)
			g.Expect(shares(tc.specOf(tc.first), tc.specOf(tc.second))).To(Equal(tc.wantShare))
			g.Expect(equality.Semantic.DeepEqual(tc.specOf(tc.second), want)).To(BeTrue(), "an interned spec is equal to what it was")
		})
	}
}

func TestOtherObjectsAreLeftAlone(t *testing.T) {
	g := NewWithT(t)
	table := podspecs.New(podspecs.DefaultSize)
	pod := &corev1.Pod{Spec: podSpec("x:1")}
	table.InternObject(pod)
	table.InternObject(&corev1.Service{})
	g.Expect(table.Len()).To(BeZero(), "a pod's spec is its own (node, hostname): not remembered")
}

func TestTheTableRemembersTheMostRecentParts(t *testing.T) {
	g := NewWithT(t)
	table := podspecs.New(2)
	containers := func(image string) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}
	}
	one, two, three := containers("x:1"), containers("x:2"), containers("x:3")
	g.Expect(table.Intern(&one)).To(Equal(0))
	g.Expect(table.Intern(&two)).To(Equal(0))
	again := containers("x:1")
	g.Expect(table.Intern(&again)).To(Equal(1), "x:1 seen again")
	g.Expect(shares(&one, &again)).To(BeTrue())
	g.Expect(table.Intern(&three)).To(Equal(0))
	g.Expect(table.Len()).To(Equal(2))
	twoAgain := containers("x:2")
	g.Expect(table.Intern(&twoAgain)).To(Equal(0), "x:2, the least recently seen, was forgotten")
	g.Expect(shares(&two, &twoAgain)).To(BeFalse())
	oneAgain := containers("x:1")
	g.Expect(table.Intern(&oneAgain)).To(Equal(0), "x:1 was forgotten once x:2 came back")
	g.Expect(equality.Semantic.DeepEqual(oneAgain, containers("x:1"))).To(BeTrue())
}

func TestEachPartIsSharedOnItsOwn(t *testing.T) {
	g := NewWithT(t)
	table := podspecs.New(podspecs.DefaultSize)
	first, second := podSpec("x:1"), podSpec("x:2")
	g.Expect(table.Intern(&first)).To(Equal(0))
	g.Expect(table.Intern(&second)).To(Equal(1), "the security context, not the containers")
	g.Expect(second.SecurityContext).To(BeIdenticalTo(first.SecurityContext))
	g.Expect(shares(&first, &second)).To(BeFalse())
	g.Expect(second.NodeSelector).To(Equal(map[string]string{"a": "1", "b": "2"}), "a part not interned is kept")
}
