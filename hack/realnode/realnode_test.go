package realnode

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
)

// The constants of this package and the variables of hack/make/realnode.mk (which
// realnode.sh gets) must say the same.
func TestConstantsMatchTheMakefile(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join("..", "make", "realnode.mk"))
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

func TestAllowedIsTheBridgeAndTheServiceRange(t *testing.T) {
	g := NewWithT(t)
	a := Allowed()
	g.Expect(a.Devices).To(Equal([]string{BridgeDevice}))
	g.Expect(a.Prefixes).To(HaveLen(1))
	g.Expect(a.Prefixes[0].String()).To(Equal(ServiceCIDR))
}
