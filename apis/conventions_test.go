package apis_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// TestKubectlConventions checks what kubectl shows of the kinds: every one
// is in the category multi-operator (kubectl get multi-operator lists them
// all) and has a short name.
func TestKubectlConventions(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	want := map[string]string{"TDSet": "tds", "Memcached": "mc", "RedisCluster": "rdc", "WhaleSay": "wsay"}
	_, lists, err := dc.ServerGroupsAndResources()
	g.Expect(err).NotTo(HaveOccurred())
	found := map[string]bool{}
	for _, list := range lists {
		for _, r := range list.APIResources {
			short, ours := want[r.Kind]
			if !ours || strings.Contains(r.Name, "/") {
				continue // not ours, or a subresource
			}
			g.Expect(r.Categories).To(ContainElement("multi-operator"), "%s in %s", r.Kind, list.GroupVersion)
			g.Expect(r.ShortNames).To(ContainElement(short), "%s in %s", r.Kind, list.GroupVersion)
			found[r.Kind] = true
		}
	}
	g.Expect(found).To(HaveLen(len(want)), "every kind is served")
}

// warnings collects the API server's warnings a client receives.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

// HandleWarningHeader records one warning.
func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// A request to schedule.rs/v1 gets a warning that names v2; one to v2
// gets none.
func TestTDSetV1IsDeprecatedWithAWarningThatNamesV2(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	clientWith := func(w *warnings) client.Client {
		cfg := rest.CopyConfig(env.Config)
		cfg.WarningHandler = w
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	v1Warnings := &warnings{}
	v1 := tdsetV1(func(*schedulev1.TDSetSpec) {})
	v1.SetNamespace(ns)
	v1.SetName("old")
	g.Expect(clientWith(v1Warnings).Create(context.Background(), v1)).To(Succeed())
	g.Expect(v1Warnings.all()).To(ContainElement(And(ContainSubstring("schedule.rs/v1 TDSet is deprecated"), ContainSubstring("schedule.rs/v2"))))

	v2Warnings := &warnings{}
	v2 := builders.TDSet(ns, "new").Obj()
	g.Expect(clientWith(v2Warnings).Create(context.Background(), v2)).To(Succeed())
	g.Expect(v2Warnings.all()).To(BeEmpty())
}
