package apis_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/discovery"

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
	want := map[string]string{"TDSet": "tds", "Memcached": "mc", "RedisCluster": "rdc", "RedisClusterBackup": "rdcb", "RedisClusterBackupSchedule": "rdcbs", "WhaleSay": "wsay"}
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

// A request to schedule.rs/v1 gets a warning that names v2; one to v2
// gets none.
func TestTDSetV1IsDeprecatedWithAWarningThatNamesV2(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	v1Client, v1Warnings := env.ClientWithWarnings(t)
	v1 := tdsetV1(func(*schedulev1.TDSetSpec) {})
	v1.SetNamespace(ns)
	v1.SetName("old")
	g.Expect(v1Client.Create(context.Background(), v1)).To(Succeed())
	g.Expect(v1Warnings.Take()).To(ContainElement(And(ContainSubstring("schedule.rs/v1 TDSet is deprecated"), ContainSubstring("schedule.rs/v2"))))

	v2Client, v2Warnings := env.ClientWithWarnings(t)
	v2 := builders.TDSet(ns, "new").Obj()
	g.Expect(v2Client.Create(context.Background(), v2)).To(Succeed())
	g.Expect(v2Warnings.Take()).To(BeEmpty())
}
