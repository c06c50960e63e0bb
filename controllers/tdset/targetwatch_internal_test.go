package tdset

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// The scale targets' cache keeps of an object only what the TDSet reads:
// identity, generation, the controller ownerReference, the managed-by
// label and the status counts; no other label, annotation, spec, status
// field or managed fields.
func TestTargetCacheKeepsOnlyWhatTheTDSetReads(t *testing.T) {
	g := NewWithT(t)
	g.Expect(targetCacheOptions.DefaultTransform).NotTo(BeNil())
	g.Expect(targetCacheOptions.ReaderFailOnMissingInformer).To(BeTrue(), "a kind not watched is read from the API server, not by a new informer")

	in := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"namespace": "a", "name": "web", "uid": "u1", "resourceVersion": "42", "generation": int64(7),
			"labels":        map[string]any{"app": "web", "app.kubernetes.io/managed-by": "multi-operator"},
			"annotations":   map[string]any{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 1<<16)},
			"finalizers":    []any{"f"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
			"ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "u3"},
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u2", "controller": true},
			},
		},
		"spec": map[string]any{"replicas": int64(5), "template": map[string]any{"spec": map[string]any{"containers": []any{}}}},
		"status": map[string]any{
			"replicas": int64(5), "readyReplicas": int64(4), "availableReplicas": int64(3), "observedGeneration": int64(7),
			"updatedReplicas": int64(5), "conditions": []any{map[string]any{"type": "Available"}},
		},
	}}
	out, err := targetTransform(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*unstructured.Unstructured).Object).To(Equal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"namespace": "a", "name": "web", "uid": "u1", "resourceVersion": "42", "generation": int64(7),
			"labels":          map[string]any{"app.kubernetes.io/managed-by": "multi-operator"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u2", "controller": true}},
		},
		"status": map[string]any{"replicas": int64(5), "readyReplicas": int64(4), "availableReplicas": int64(3), "observedGeneration": int64(7)},
	}))
	g.Expect(in.GetAnnotations()).To(HaveLen(1), "the informer's object is not changed in place")

	// Without labels, owner or status, nothing of them is made up.
	bare := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x"}, "status": map[string]any{"phase": "Up"}}}
	out, err = targetTransform(bare)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*unstructured.Unstructured).Object).To(Equal(map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x"}}))

	// A RedisCluster keeps its measured migration rate, and nothing else
	// of the measurement.
	redis := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cache.example.com/v1", "kind": "RedisCluster", "metadata": map[string]any{"name": "r"},
		"status": map[string]any{"size": int64(3), "migration": map[string]any{"keys": int64(9000), "slotsPerMinute": int64(6000), "keysPerSecond": int64(100)}}}}
	out, err = targetTransform(redis)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*unstructured.Unstructured).Object).To(Equal(map[string]any{"apiVersion": "cache.example.com/v1", "kind": "RedisCluster", "metadata": map[string]any{"name": "r"},
		"status": map[string]any{"migration": map[string]any{"slotsPerMinute": float64(6000)}}}))

	// Anything else (a tombstone) passes unchanged.
	other := "tombstone"
	out, err = targetTransform(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(other))
}

// An update reconciles the TDSet only when what the cache keeps changed,
// not for a new resourceVersion alone (a write of what the cache drops).
func TestTargetChangedIgnoresTheResourceVersion(t *testing.T) {
	g := NewWithT(t)
	target := func(rv string, available int64) *unstructured.Unstructured {
		return trimTarget(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"namespace": "a", "name": "web", "resourceVersion": rv, "generation": int64(2)},
			"status":   map[string]any{"availableReplicas": available},
		}})
	}
	g.Expect(targetChanged.Update(event.UpdateEvent{ObjectOld: target("1", 2), ObjectNew: target("2", 2)})).To(BeFalse())
	g.Expect(targetChanged.Update(event.UpdateEvent{ObjectOld: target("1", 2), ObjectNew: target("2", 3)})).To(BeTrue())
}

// Available is status.availableReplicas where the kind reports it (a
// Deployment leaves a zero out), else status.readyReplicas, else what
// runs; a status of an older generation is not observed.
func TestAvailableOf(t *testing.T) {
	obj := func(apiVersion, kind string, generation int64, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "t", "generation": generation}}}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	for _, tc := range []struct {
		name      string
		target    *unstructured.Unstructured
		available int32
		observed  bool
	}{
		{"deployment", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(5), "availableReplicas": int64(3), "readyReplicas": int64(4), "observedGeneration": int64(2)}), 3, true},
		{"deployment crash-looping", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(5), "observedGeneration": int64(2)}), 0, true},
		{"deployment without status", obj("apps/v1", "Deployment", 1, nil), 0, true},
		{"deployment of an older spec", obj("apps/v1", "Deployment", 3, map[string]any{"availableReplicas": int64(5), "observedGeneration": int64(2)}), 5, false},
		{"statefulset", obj("apps/v1", "StatefulSet", 1, map[string]any{"replicas": int64(5), "availableReplicas": int64(0)}), 0, true},
		{"memcached", obj("cache.example.com/v1alpha1", "Memcached", 1, map[string]any{"replicas": int64(3), "readyReplicas": int64(1)}), 1, true},
		{"rediscluster", obj("cache.example.com/v1", "RedisCluster", 1, map[string]any{"size": int64(6), "readyNodes": int64(2)}), 5, true},
		{"junk counts", obj("example.com/v1", "Widget", 1, map[string]any{"availableReplicas": "many", "readyReplicas": int64(-4)}), 0, true},
		{"huge count", obj("example.com/v1", "Widget", 1, map[string]any{"availableReplicas": int64(1) << 40}), 1<<31 - 1, true},
		{"huge float", obj("example.com/v1", "Widget", 1, map[string]any{"availableReplicas": 1e300}), 1<<31 - 1, true},
		{"fraction", obj("example.com/v1", "Widget", 1, map[string]any{"readyReplicas": 2.5}), 2, true},
	} {
		available, observed := availableOf(tc.target, 5)
		NewWithT(t).Expect([]any{available, observed}).To(Equal([]any{tc.available, tc.observed}), tc.name)
	}
}
