package olm

import (
	"testing"

	. "github.com/onsi/gomega"
)

// ch is channel stable with entries name=replaces ("" for none).
func ch(entries ...[2]string) Channel {
	c := Channel{Schema: schemaChannel, Name: ChannelName, Package: PackageName}
	for _, e := range entries {
		c.Entries = append(c.Entries, ChannelEntry{Name: e[0], Replaces: e[1]})
	}
	return c
}

func TestCheckChannel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		channel Channel
		wantErr string
	}{
		{"one bundle", ch([2]string{"a", ""}), ""},
		{"a chain", ch([2]string{"a", ""}, [2]string{"b", "a"}, [2]string{"c", "b"}), ""},
		{"listed out of order", ch([2]string{"c", "b"}, [2]string{"a", ""}, [2]string{"b", "a"}), ""},
		{"empty", ch(), "no entries"},
		{"a duplicate entry", ch([2]string{"a", ""}, [2]string{"a", ""}), "lists a twice"},
		{"replaces a missing bundle", ch([2]string{"a", ""}, [2]string{"b", "x"}), "not in the channel"},
		{"two heads", ch([2]string{"a", ""}, [2]string{"b", ""}), "2 heads"},
		{"a fork", ch([2]string{"a", ""}, [2]string{"b", "a"}, [2]string{"c", "a"}), "both replace a"},
		{"a cycle beside the head", ch([2]string{"h", ""}, [2]string{"a", "b"}, [2]string{"b", "a"}), "lead back"},
		{"only a cycle", ch([2]string{"a", "b"}, [2]string{"b", "a"}), "0 heads"},
		{"replaces itself", ch([2]string{"a", "a"}), "0 heads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckChannel(tc.channel)
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}

func TestUpgradePath(t *testing.T) {
	chain := ch([2]string{"c", "b"}, [2]string{"a", ""}, [2]string{"b", "a"})
	for _, tc := range []struct {
		name, from string
		channel    Channel
		want       []string
		wantErr    string
	}{
		{"from the tail", "a", chain, []string{"a", "b", "c"}, ""},
		{"from the middle", "b", chain, []string{"b", "c"}, ""},
		{"from the head", "c", chain, []string{"c"}, ""},
		{"from a bundle off the channel", "x", chain, nil, "no upgrade path from x"},
		{"an unreachable old bundle", "a", ch([2]string{"a", ""}, [2]string{"b", ""}), nil, "2 heads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			path, err := UpgradePath(tc.channel, tc.from)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(path).To(Equal(tc.want))
		})
	}
}

func TestCheckCatalog(t *testing.T) {
	g := NewWithT(t)
	pkg := Package{Schema: schemaPackage, Name: PackageName, DefaultChannel: ChannelName}
	v1 := fakeBundle(g, "0.1.0", "", "i1")
	v2 := fakeBundle(g, "0.2.0", "multi-operator.v0.1.0", "i2")
	good := ch([2]string{v1.Name, ""}, [2]string{v2.Name, v1.Name})
	misnamed := fakeBundle(g, "0.3.0", "", "i3")
	misnamed.Name = CSVName("0.4.0")
	for _, tc := range []struct {
		name    string
		catalog Catalog
		wantErr string
	}{
		{"valid", Catalog{Package: pkg, Channels: []Channel{good}, Bundles: []CatalogBundle{v1, v2}}, ""},
		{"a bundle in no channel", Catalog{Package: pkg, Channels: []Channel{ch([2]string{v1.Name, ""})}, Bundles: []CatalogBundle{v1, v2}}, "in no channel"},
		{"an entry that is no bundle", Catalog{Package: pkg, Channels: []Channel{good}, Bundles: []CatalogBundle{v2}}, "no bundle of the catalog"},
		{"no default channel", Catalog{Package: Package{Schema: schemaPackage, Name: PackageName, DefaultChannel: "fast"}, Channels: []Channel{good}, Bundles: []CatalogBundle{v1, v2}}, `default channel "fast"`},
		{"another package", Catalog{Package: Package{Schema: schemaPackage, Name: "other", DefaultChannel: ChannelName}, Channels: []Channel{good}, Bundles: []CatalogBundle{v1, v2}}, `package is "other"`},
		{"a name that is not its version", Catalog{Package: pkg, Channels: []Channel{ch([2]string{misnamed.Name, ""})}, Bundles: []CatalogBundle{misnamed}}, "has version 0.3.0"},
		{"a broken channel", Catalog{Package: pkg, Channels: []Channel{ch([2]string{v1.Name, v2.Name}, [2]string{v2.Name, v1.Name})}, Bundles: []CatalogBundle{v1, v2}}, "0 heads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckCatalog(tc.catalog)
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}
