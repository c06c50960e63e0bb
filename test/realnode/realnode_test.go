package realnode

import (
	"os"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/test/localcluster"
)

// The constants of this package and the variables of realnode.mk (which
// realnode.sh gets) must say the same.
func TestConstantsMatchTheMakefile(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile("realnode.mk")
	g.Expect(err).NotTo(HaveOccurred())
	mk := string(raw)
	for name, want := range map[string]string{
		"REALNODE_NODE_NAME":    NodeName,
		"REALNODE_BRIDGE":       BridgeDevice,
		"REALNODE_NODE_IP":      NodeIP,
		"REALNODE_POD_CIDR":     PodCIDR,
		"REALNODE_SERVICE_CIDR": ServiceCIDR,
		"REALNODE_DNS_IP":       DNSIP,
		"REALNODE_NODE_LABEL":   LabelRealNode,
	} {
		m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(\S+)\s*$`).FindStringSubmatch(mk)
		g.Expect(m).To(HaveLen(2), "realnode.mk sets %s", name)
		g.Expect(m[1]).To(Equal(want), name)
	}
	script, err := os.ReadFile("realnode.sh")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(script)).To(ContainSubstring(`SIMULATED_TAINT=${REALNODE_SIMULATED_TAINT:-` + SimulatedTaint + `}`))
	g.Expect(string(script)).To(ContainSubstring("UNAVAILABLE=3 "))
}

func TestAllowedIsTheMakefiles(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile("realnode.mk")
	g.Expect(err).NotTo(HaveOccurred())
	m := regexp.MustCompile(`(?m)^REALNODE_ALLOWED\s*:=\s*(.+?)\s*$`).FindStringSubmatch(string(raw))
	g.Expect(m).To(HaveLen(2))
	g.Expect(m[1]).To(Equal("$(REALNODE_BRIDGE) $(REALNODE_SERVICE_CIDR)"))
	parsed, err := localcluster.ParseAllowed(BridgeDevice + " " + ServiceCIDR)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(parsed).To(Equal(Allowed()))
}

func TestLocalPrefixesHoldTheNodeAndItsNetworks(t *testing.T) {
	g := NewWithT(t)
	prefixes := LocalPrefixes()
	g.Expect(prefixes).To(HaveLen(3))
	g.Expect(prefixes[0].String()).To(Equal(NodeIP + "/32"))
	g.Expect(prefixes[1].Contains(prefixes[1].Addr().Next())).To(BeTrue())
	g.Expect(prefixes[2].String()).To(Equal(ServiceCIDR))
}
