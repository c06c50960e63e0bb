package redisadmin

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestMasterAuth(t *testing.T) {
	for _, tc := range []struct {
		name, conf string
		want       string
		found      bool
		wantErr    bool
	}{
		{name: "the users file", found: true, want: "s3cret",
			conf: Access{Passwords: []string{"s3cret", "old"}, OperatorPassword: "op"}.ConfigFile()},
		{name: "no authentication: no masterauth",
			conf: Access{OperatorPassword: "op"}.ConfigFile()},
		{name: "empty file"},
		{name: "escapes", found: true, want: "a\"b\\c\nd\re\tf\x00\xffg", conf: `masterauth "a\"b\\c\nd\re\tf\x00\xffg"` + "\n"},
		{name: "upper-case hex", found: true, want: "\xab", conf: `masterauth "\xAB"`},
		{name: "an empty password", found: true, want: "", conf: `masterauth ""`},
		{name: "spaces kept", found: true, want: " a b ", conf: `masterauth " a b "`},
		{name: "an earlier line that only mentions it", found: true, want: "x", conf: "# masterauth \"y\"\nmasterauth \"x\"\n"},

		{name: "unquoted", found: true, wantErr: true, conf: "masterauth plain"},
		{name: "no closing quote", found: true, wantErr: true, conf: `masterauth "abc`},
		{name: "a lone quote", found: true, wantErr: true, conf: `masterauth "`},
		{name: "text after the quote", found: true, wantErr: true, conf: `masterauth "abc" extra`},
		{name: "a quote inside", found: true, wantErr: true, conf: `masterauth "a"b"`},
		{name: "an escape Quote never writes", found: true, wantErr: true, conf: `masterauth "\b"`},
		{name: "a cut-off hex escape", found: true, wantErr: true, conf: `masterauth "\x4"`},
		{name: "a bad hex digit", found: true, wantErr: true, conf: `masterauth "\xzz"`},
		{name: "a trailing backslash", found: true, wantErr: true, conf: `masterauth "abc\"`},
		{name: "a raw control byte", found: true, wantErr: true, conf: "masterauth \"a\tb\""},
		{name: "a raw non-ASCII byte", found: true, wantErr: true, conf: "masterauth \"ü\""},
		{name: "a carriage return ending the line", found: true, wantErr: true, conf: "masterauth \"x\"\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, found, err := MasterAuth(tc.conf)
			g.Expect(found).To(Equal(tc.found))
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// FuzzMasterAuth checks that the parser inverts Quote, on
// its own line and in the users file ConfigFile writes.
func FuzzMasterAuth(f *testing.F) {
	for _, seed := range []string{"", "a", `"`, `\`, `\x41`, "\n", "\r\n", "\t", "\x00", "\xff", "masterauth \"x\"\n", "ünïcödé 🔑"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, conf := range []string{
			"masterauth " + Quote(s),
			Access{Passwords: []string{s, "previous"}, OperatorPassword: s}.ConfigFile(),
		} {
			got, found, err := MasterAuth(conf)
			if err != nil || !found || got != s {
				t.Fatalf("MasterAuth(%q) = %q, %v, %v; want %q", conf, got, found, err, s)
			}
		}
	})
}

func TestKeysInKeyspace(t *testing.T) {
	for _, tc := range []struct {
		name, info string
		want       int64
		wantErr    bool
	}{
		{name: "no key", info: "# Keyspace\r\n"},
		{name: "keys", info: "# Keyspace\r\ndb0:keys=42,expires=1,avg_ttl=0\r\n", want: 42},
		{name: "no count", info: "# Keyspace\r\ndb0:expires=1\r\n", wantErr: true},
		{name: "not a number", info: "# Keyspace\r\ndb0:keys=x,expires=0\r\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := keysInKeyspace(tc.info)
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestConfigFileTurnsReplicaMigrationOff(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Access{OperatorPassword: "op"}.ConfigFile()).To(ContainSubstring("\n" + ReplicaMigration + " no\n"))
}
