// Package localcluster_test checks the local cluster's addresses against a
// real kube-apiserver: hack/localcluster's own tests need no control plane.
package localcluster_test

import (
	"context"
	"net/netip"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/multi-operator/multi-operator/hack/localcluster"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// A Service over simulated pods must get its endpoints, as on a real
// cluster: the API server rejects loopback endpoint addresses, and the
// endpoint controllers then retry every such Service with a Warning event
// each time.
func TestEndpointSlicesAcceptRoutedPodAddresses(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	for _, tc := range []struct {
		ranges netip.Prefix
		ok     bool
	}{
		{localcluster.RoutedPodRanges, true},
		{localcluster.LoopbackPodRanges, false},
	} {
		g := NewWithT(t)
		cidr, err := localcluster.PodCIDR(tc.ranges, 7)
		g.Expect(err).NotTo(HaveOccurred())
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{GenerateName: "pods-", Namespace: ns},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{netip.MustParsePrefix(cidr).Addr().Next().String()}}},
		}
		err = env.Client.Create(context.Background(), slice)
		if tc.ok {
			g.Expect(err).NotTo(HaveOccurred(), "%s", tc.ranges)
		} else {
			g.Expect(err).To(MatchError(ContainSubstring("loopback")), "%s", tc.ranges)
		}
	}
}
