package deploy

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/hack/release/helmchart"
	"github.com/multi-operator/multi-operator/hack/release/overlay"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/test/framework/apf"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// flowcontrolGroup is the API group of FlowSchemas and priority levels.
const flowcontrolGroup = "flowcontrol.apiserver.k8s.io"

// classification is the FlowSchema and the priority level that the API
// server classified a GET of apiPath by cfg's user in (test/framework/apf).
func classification(g Gomega, cfg *rest.Config, apiPath string) (flowSchema, priorityLevel string) {
	fs, pl, err := apf.Classify(context.Background(), cfg, apiPath)
	g.Expect(err).NotTo(HaveOccurred())
	return fs, pl
}

// TestAPIPriorityComponentClassifiesTheManager applies the api-priority
// component, added to config/default as its comment shows, to a real API
// server: the manager's requests go to its priority level, its Lease's to
// the built-in leader-election level, and another service account's to
// neither. The chart's apiPriority.enabled renders the same objects.
func TestAPIPriorityComponentClassifiesTheManager(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ctx := context.Background()
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	defaults, err := overlay.Components(filepath.Join(root, "config", "default"))
	g.Expect(err).NotTo(HaveOccurred())
	k := overlay.Kustomization{Resources: []string{"config/manager"}}
	for _, c := range append(defaults, "api-priority") {
		k.Components = append(k.Components, filepath.Join("config", "components", c))
	}
	objs, err := k.Build(root)
	g.Expect(err).NotTo(HaveOccurred())

	uids := map[string]string{}
	var priority []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GroupVersionKind().Group != flowcontrolGroup {
			continue
		}
		g.Expect(obj.GetNamespace()).To(BeEmpty(), "%s %s is cluster-scoped", obj.GetKind(), obj.GetName())
		priority = append(priority, obj)
		g.Expect(env.Client.Create(ctx, obj.DeepCopy())).To(Succeed())
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
		uids[obj.GetKind()+"/"+obj.GetName()] = string(live.GetUID())
		t.Cleanup(func() { _ = env.Client.Delete(ctx, live) })
	}
	ours := uids["FlowSchema/"+serviceAcount]
	ourLevel := uids["PriorityLevelConfiguration/"+serviceAcount]
	lease := uids["FlowSchema/"+serviceAcount+"-leader-election"]
	g.Expect(ours).NotTo(BeEmpty())
	g.Expect(ourLevel).NotTo(BeEmpty())
	g.Expect(lease).NotTo(BeEmpty())

	mgr := asManager(env.Config)
	// The API server reads new FlowSchemas a moment after they are stored.
	g.Eventually(func(g Gomega) {
		fs, pl := classification(g, mgr, "/api/v1/namespaces/team-a/configmaps")
		g.Expect(fs).To(Equal(ours))
		g.Expect(pl).To(Equal(ourLevel))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		fs, _ := classification(g, mgr, "/apis/coordination.k8s.io/v1/namespaces/"+namespace+"/leases/multi-operator.devsectim.io")
		g.Expect(fs).To(Equal(lease))
	}).Should(Succeed())
	fs, _ := classification(g, asUser(env.Config, "system:serviceaccount:team-a:default"), "/api/v1/namespaces/team-a/configmaps")
	g.Expect(fs).NotTo(BeEmpty())
	g.Expect(fs).NotTo(BeElementOf(ours, lease), "another service account keeps the built-in schemas")

	rendered, err := helmchart.Template(helmchart.Binary(root), filepath.Join(root, "dist", "chart"), namespace,
		map[string]string{"apiPriority.enabled": "true"})
	g.Expect(err).NotTo(HaveOccurred())
	var chartPriority []*unstructured.Unstructured
	for _, obj := range rendered {
		if obj.GroupVersionKind().Group == flowcontrolGroup {
			chartPriority = append(chartPriority, obj)
		}
	}
	g.Expect(specs(chartPriority)).To(Equal(specs(priority)), "the chart renders the component's objects")
}

// specs maps each object's kind and name to its spec.
func specs(objs []*unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for _, obj := range objs {
		out[obj.GetKind()+"/"+obj.GetName()] = obj.Object["spec"]
	}
	return out
}
