package main

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1alpha1 "github.com/multi-operator/multi-operator/apis/cache/v1alpha1"
)

func TestNewDeployment(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int32
		port     int32
		image    string
		wantPort int32
	}{
		{name: "tutorial defaults", size: 1, port: 11211, image: defaultImage, wantPort: 11211},
		{name: "three servers, another port and image", size: 3, port: 12345, image: "memcached:1.6.45-alpine", wantPort: 12345},
		{name: "port never defaulted by the API server", size: 2, port: 0, image: defaultImage, wantPort: 11211},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			mc := &cachev1alpha1.Memcached{
				ObjectMeta: metav1.ObjectMeta{Name: "memcached-sample", Namespace: "ns"},
				Spec:       cachev1alpha1.MemcachedSpec{Size: tc.size, ContainerPort: tc.port},
			}
			dep := newDeployment(mc, tc.image)

			g.Expect(dep.Name).To(Equal("memcached-sample"))
			g.Expect(dep.Namespace).To(Equal("ns"))
			g.Expect(dep.Labels).To(BeEmpty(), "the tutorial labels only the selector and the pods")
			g.Expect(dep.OwnerReferences).To(BeEmpty(), "deploymentForMemcached sets the owner")

			want := map[string]string{"app.kubernetes.io/name": "project"}
			g.Expect(dep.Spec.Selector.MatchLabels).To(Equal(want))
			g.Expect(dep.Spec.Template.Labels).To(Equal(want))
			g.Expect(dep.Spec.Replicas).To(HaveValue(Equal(tc.size)))

			pod := dep.Spec.Template.Spec
			g.Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
			g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))

			g.Expect(pod.Containers).To(HaveLen(1))
			ctr := pod.Containers[0]
			g.Expect(ctr.Name).To(Equal("memcached"))
			g.Expect(ctr.Image).To(Equal(tc.image))
			g.Expect(ctr.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
			g.Expect(ctr.Command).To(Equal([]string{"memcached", "--memory-limit=64", "-o", "modern", "-v"}))
			g.Expect(ctr.Args).To(BeEmpty())
			g.Expect(ctr.Ports).To(Equal([]corev1.ContainerPort{{Name: "memcached", ContainerPort: tc.wantPort}}))

			sc := ctr.SecurityContext
			g.Expect(sc.RunAsNonRoot).To(HaveValue(BeTrue()))
			g.Expect(sc.RunAsUser).To(HaveValue(Equal(int64(1001))))
			g.Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
			g.Expect(sc.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
		})
	}
}

func TestDeploymentForMemcachedSetsController(t *testing.T) {
	g := NewWithT(t)
	mc := &cachev1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "memcached-sample", Namespace: "ns", UID: "uid-1"},
		Spec:       cachev1alpha1.MemcachedSpec{Size: 1, ContainerPort: 11211},
	}
	r := &MemcachedReconciler{Scheme: newScheme(), Image: defaultImage}
	dep, err := r.deploymentForMemcached(mc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dep.OwnerReferences).To(HaveLen(1))
	ref := dep.OwnerReferences[0]
	g.Expect(ref.APIVersion).To(Equal("cache.example.com/v1alpha1"))
	g.Expect(ref.Kind).To(Equal("Memcached"))
	g.Expect(ref.Name).To(Equal("memcached-sample"))
	g.Expect(ref.Controller).To(HaveValue(BeTrue()))
	g.Expect(ref.BlockOwnerDeletion).To(HaveValue(BeTrue()))
}

func TestImageFromEnv(t *testing.T) {
	g := NewWithT(t)
	t.Setenv(imageEnv, "")
	g.Expect(imageFromEnv()).To(Equal("memcached:1.6.26-alpine3.19"))
	t.Setenv(imageEnv, "registry.example/memcached:1")
	g.Expect(imageFromEnv()).To(Equal("registry.example/memcached:1"))
}
