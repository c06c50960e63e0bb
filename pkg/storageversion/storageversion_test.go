package storageversion

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// The fixtures are CRDs each test makes for itself: a kind served in v1 and
// v2 without conversion (strategy None), first stored in v1. Only the
// test-only Widget CRD is installed besides, not the product's.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWith(m, testenv.RunOptions{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "test", "framework", "api", "crd")},
	}, apiextensionsv1.AddToScheme))
}

const group = "storageversion.testing.multi-operator.io"

var bg = context.Background()

// fixture is a test's CRD.
type fixture struct {
	env    *testenv.Env
	name   string // plural.group
	plural string
	kind   string
}

// newFixture creates the CRD <plural>.storageversion.testing.multi-operator.io,
// served in v1 and v2 and stored in v1, and waits until it is established.
func newFixture(t *testing.T, g Gomega, plural, kind string) *fixture {
	t.Helper()
	env := testenv.Get(t)
	props := &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec":   {Type: "object", XPreserveUnknownFields: ptr.To(true)},
			"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		},
	}
	version := func(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: storage,
			Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: props},
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = plural + "." + group
	crd.Spec = apiextensionsv1.CustomResourceDefinitionSpec{
		Group: group,
		Names: apiextensionsv1.CustomResourceDefinitionNames{
			Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List",
		},
		Scope:      apiextensionsv1.NamespaceScoped,
		Versions:   []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", true), version("v2", false)},
		Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
	}
	g.Expect(env.Client.Create(bg, crd)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(bg, crd) })
	f := &fixture{env: env, name: crd.Name, plural: plural, kind: kind}
	g.Eventually(func(g Gomega) {
		crd := f.crd(g)
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		g.Expect(established).To(BeTrue())
		// The resource is served once a list works.
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(f.gv("v1").WithKind(kind + "List"))
		g.Expect(env.Client.List(bg, list)).To(Succeed())
	}).Should(Succeed())
	return f
}

// gv is the fixture's group in version.
func (f *fixture) gv(version string) schema.GroupVersion {
	return schema.GroupVersion{Group: group, Version: version}
}

func (f *fixture) crd(g Gomega) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(f.env.Client.Get(bg, client.ObjectKey{Name: f.name}, crd)).To(Succeed())
	return crd
}

// updateCRD changes the CRD's spec with mutate, retrying on conflicts.
func (f *fixture) updateCRD(mutate func(*apiextensionsv1.CustomResourceDefinition)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := f.env.Client.Get(bg, client.ObjectKey{Name: f.name}, crd); err != nil {
			return err
		}
		mutate(crd)
		return f.env.Client.Update(bg, crd)
	})
}

// storeInV2 makes v2 the storage version, as an upgrade does.
func (f *fixture) storeInV2(g Gomega) {
	g.Expect(f.updateCRD(func(crd *apiextensionsv1.CustomResourceDefinition) {
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == "v2"
		}
	})).To(Succeed())
}

// dropV1 removes v1 from the CRD's versions, which the API server allows
// only once status.storedVersions no longer lists it.
func (f *fixture) dropV1() error {
	return f.updateCRD(func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{crd.Spec.Versions[1]}
	})
}

func (f *fixture) object(version, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(f.gv(version).WithKind(f.kind))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// create makes an object through v1, so that etcd holds it in v1.
func (f *fixture) create(g Gomega, ns, name string, n int64) {
	u := f.object("v1", ns, name)
	u.Object["spec"] = map[string]any{"n": n}
	g.Expect(f.env.Client.Create(bg, u)).To(Succeed())
}

// get reads an object in version.
func (f *fixture) get(g Gomega, version, ns, name string) *unstructured.Unstructured {
	u := f.object(version, ns, name)
	g.Expect(f.env.Client.Get(bg, client.ObjectKeyFromObject(u), u)).To(Succeed())
	return u
}

// resourceVersions maps namespace/name to resourceVersion.
func (f *fixture) resourceVersions(g Gomega) map[string]string {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(f.gv("v2").WithKind(f.kind + "List"))
	g.Expect(f.env.Client.List(bg, list)).To(Succeed())
	out := map[string]string{}
	for _, u := range list.Items {
		out[u.GetNamespace()+"/"+u.GetName()] = u.GetResourceVersion()
	}
	return out
}

// smallPages makes Migrate list n objects a page for the test.
func smallPages(t *testing.T, n int64) {
	old := pageSize
	pageSize = n
	t.Cleanup(func() { pageSize = old })
}

// The upgrade: objects stored in v1, then v2 becomes the storage version.
// Migrate rewrites each one (over several pages and namespaces) and trims
// storedVersions, after which the API server lets v1 go; a second run
// writes nothing.
func TestMigrate(t *testing.T) {
	g := NewWithT(t)
	smallPages(t, 3)
	f := newFixture(t, g, "gadgets", "Gadget")
	env := f.env
	nsA, nsB := env.Namespace(t), env.Namespace(t)
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		f.create(g, nsA, name, int64(i))
	}
	f.create(g, nsB, "a", 10)
	f.create(g, nsB, "b", 11)
	g.Expect(f.crd(g).Status.StoredVersions).To(Equal([]string{"v1"}))

	f.storeInV2(g)
	g.Expect(f.crd(g).Status.StoredVersions).To(Equal([]string{"v1", "v2"}))
	g.Expect(f.dropV1()).To(MatchError(ContainSubstring("storedVersions")), "v1 still holds objects")
	before := f.resourceVersions(g)
	g.Expect(before).To(HaveLen(7))

	res, err := Migrate(bg, env.Config, f.name, testr.New(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(Result{
		CRD: f.name, StorageVersion: "v2", Migrated: 7,
		PreviousStoredVersions: []string{"v1", "v2"}, StoredVersions: []string{"v2"},
	}))
	crd := f.crd(g)
	g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v2"}))
	after := f.resourceVersions(g)
	g.Expect(after).To(HaveLen(7))
	for key, rv := range before {
		g.Expect(after[key]).NotTo(Equal(rv), "%s was written back", key)
	}
	g.Expect(f.get(g, "v2", nsB, "b").Object["spec"]).To(Equal(map[string]any{"n": int64(11)}))

	// Again: every object is already stored in v2, so the API server skips
	// every write, and storedVersions is left alone.
	again, err := Migrate(bg, env.Config, f.name, testr.New(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(Result{
		CRD: f.name, StorageVersion: "v2", Migrated: 7, Unchanged: 7,
		PreviousStoredVersions: []string{"v2"}, StoredVersions: []string{"v2"},
	}))
	g.Expect(f.resourceVersions(g)).To(Equal(after))
	g.Expect(f.crd(g).ResourceVersion).To(Equal(crd.ResourceVersion))

	// What the trimmed storedVersions is for: v1 can be removed.
	g.Expect(f.dropV1()).To(Succeed())
	g.Expect(f.get(g, "v2", nsA, "e").Object["spec"]).To(Equal(map[string]any{"n": int64(4)}))
}

// beforeWrite runs a hook before the first write (PUT) of each object it
// names, through the config Migrate is given.
func beforeWrite(cfg *rest.Config, hooks map[string]func()) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	var mu sync.Mutex
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPut {
				name := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
				mu.Lock()
				hook := hooks[name]
				delete(hooks, name)
				mu.Unlock()
				if hook != nil {
					hook()
				}
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// An object changed between the list and its write is read again and
// written, keeping the change; one deleted is counted as gone.
func TestMigrateConflictAndGone(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, g, "gizmos", "Gizmo")
	env := f.env
	ns := env.Namespace(t)
	for i, name := range []string{"changed", "deleted", "plain"} {
		f.create(g, ns, name, int64(i))
	}
	f.storeInV2(g)

	cfg := beforeWrite(env.Config, map[string]func(){
		"changed": func() {
			u := f.get(g, "v1", ns, "changed")
			u.Object["spec"] = map[string]any{"n": int64(100)}
			g.Expect(env.Client.Update(bg, u)).To(Succeed())
		},
		"deleted": func() { g.Expect(env.Client.Delete(bg, f.object("v1", ns, "deleted"))).To(Succeed()) },
	})
	res, err := Migrate(bg, cfg, f.name, testr.New(t))
	g.Expect(err).NotTo(HaveOccurred())
	// The change stored "changed" in v2 already, so its second write is
	// skipped.
	g.Expect(res).To(Equal(Result{
		CRD: f.name, StorageVersion: "v2", Migrated: 2, Unchanged: 1, Gone: 1,
		PreviousStoredVersions: []string{"v1", "v2"}, StoredVersions: []string{"v2"},
	}))
	g.Expect(f.get(g, "v2", ns, "changed").Object["spec"]).To(Equal(map[string]any{"n": int64(100)}))
	g.Expect(f.crd(g).Status.StoredVersions).To(Equal([]string{"v2"}))
}

// A write that fails stops Migrate before storedVersions is trimmed.
func TestMigrateFailureKeepsStoredVersions(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, g, "widgetoids", "Widgetoid")
	env := f.env
	ns := env.Namespace(t)
	f.create(g, ns, "a", 1)
	f.storeInV2(g)

	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPut {
				return &http.Response{
					StatusCode: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"text/plain"}},
					Body: http.NoBody, Request: req,
				}, nil
			}
			return rt.RoundTrip(req)
		})
	})
	_, err := Migrate(bg, cfg, f.name, testr.New(t))
	g.Expect(err).To(MatchError(ContainSubstring("rewriting " + ns + "/a")))
	g.Expect(f.crd(g).Status.StoredVersions).To(Equal([]string{"v1", "v2"}))

	// A later run finishes the job.
	res, err := Migrate(bg, env.Config, f.name, testr.New(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Migrated).To(Equal(1))
	g.Expect(f.crd(g).Status.StoredVersions).To(Equal([]string{"v2"}))
}

func TestMigrateUnknownCRD(t *testing.T) {
	g := NewWithT(t)
	_, err := Migrate(bg, testenv.Get(t).Config, "nothings."+group, testr.New(t))
	g.Expect(err).To(MatchError(ContainSubstring("reading CRD nothings." + group)))
}

// The hash Migrate waits for is the one the API server's discovery gives.
func TestStorageVersionHash(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, g, "doodads", "Doodad")
	dc, err := discovery.NewDiscoveryClientForConfig(f.env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	hash := func(g Gomega, version string) string {
		list, err := dc.ServerResourcesForGroupVersion(f.gv(version).String())
		g.Expect(err).NotTo(HaveOccurred())
		for _, r := range list.APIResources {
			if r.Name == f.plural {
				return r.StorageVersionHash
			}
		}
		return "not listed"
	}
	g.Eventually(hash).WithArguments("v2").Should(Equal(storageVersionHash(group, "v1", "Doodad")))
	f.storeInV2(g)
	g.Eventually(hash).WithArguments("v1").Should(Equal(storageVersionHash(group, "v2", "Doodad")))
}
