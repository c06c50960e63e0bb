package images

import (
	"context"
	"os/exec"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseLdd(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		want []string
		err  string
	}{
		{
			name: "libraries and the loader, without the vDSO",
			out: "\tlinux-vdso.so.1 (0x00007ffc1d3f2000)\n" +
				"\tlibevent-2.1.so.7 => /lib/x86_64-linux-gnu/libevent-2.1.so.7 (0x00007f6060db3000)\n" +
				"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f606061e000)\n" +
				"\t/lib64/ld-linux-x86-64.so.2 (0x00007f6060e7a000)\n",
			want: []string{"/lib/x86_64-linux-gnu/libevent-2.1.so.7", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"},
		},
		{
			name: "a 32-bit vDSO",
			out:  "\tlinux-gate.so.1 (0xf7f1a000)\n\tlibc.so.6 => /lib/i386-linux-gnu/libc.so.6 (0xf7c00000)\n",
			want: []string{"/lib/i386-linux-gnu/libc.so.6"},
		},
		{
			name: "a path with no address",
			out:  "\tlibfoo.so.1 => /usr/lib/libfoo.so.1\n",
			want: []string{"/usr/lib/libfoo.so.1"},
		},
		{name: "a static binary", out: "\tstatically linked\n"},
		{name: "a static Go binary", out: "\tnot a dynamic executable\n"},
		{name: "nothing", out: ""},
		{
			name: "a library ldd cannot find",
			out:  "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n\tlibmissing.so.3 => not found\n",
			err:  "libmissing.so.3 => not found",
		},
		{name: "a line it does not know", out: "\tsomething odd\n", err: "unexpected line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := ParseLdd(tc.out)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestParsePerlInventory(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		want []string
		err  string
	}{
		{
			name: "modules and XS objects, sorted and once each",
			out: "INC\t/usr/share/perl/5.36/Getopt/Std.pm\n" +
				"INC\t/usr/lib/x86_64-linux-gnu/perl-base/strict.pm\n" +
				"SO\t/usr/lib/x86_64-linux-gnu/perl-base/auto/re/re.so\n" +
				"INC\t/usr/share/perl/5.36/Getopt/Std.pm\n",
			want: []string{
				"/usr/lib/x86_64-linux-gnu/perl-base/auto/re/re.so",
				"/usr/lib/x86_64-linux-gnu/perl-base/strict.pm",
				"/usr/share/perl/5.36/Getopt/Std.pm",
			},
		},
		{name: "empty", out: "\n", want: []string{}},
		{name: "a relative path", out: "INC\tlib/Foo.pm\n", err: "relative path"},
		{name: "an unknown kind", out: "XS\t/x.so\n", err: "unexpected line"},
		{name: "no tab", out: "INC /x.pm\n", err: "unexpected line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := ParsePerlInventory(tc.out)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestParseShebang(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		err        bool
	}{
		{line: "#!/usr/bin/perl\n", want: "/usr/bin/perl"},
		{line: "#!/usr/bin/perl -w\n", want: "/usr/bin/perl"},
		{line: "#! /bin/sh\r\n", want: "/bin/sh"},
		{line: "#!perl\n", err: true},
		{line: "#!\n", err: true},
		{line: "use strict;\n", err: true},
	} {
		got, err := ParseShebang(tc.line)
		if tc.err {
			NewWithT(t).Expect(err).To(HaveOccurred(), "%q", tc.line)
			continue
		}
		NewWithT(t).Expect(err).NotTo(HaveOccurred(), "%q", tc.line)
		NewWithT(t).Expect(got).To(Equal(tc.want), "%q", tc.line)
	}
}

func TestPasswdAndGroup(t *testing.T) {
	g := NewWithT(t)
	accounts := []Account{rootAccount, {Name: "nonroot", ID: 65532, Home: "/home/nonroot"}}
	g.Expect(string(Passwd(accounts))).To(Equal(
		"root:x:0:0:root:/root:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"))
	g.Expect(string(Group(accounts))).To(Equal("root:x:0:\nnonroot:x:65532:\n"))
}

// TestSharedLibrariesOfThisMachine runs the real ldd: a dynamic binary
// lists the C library and the loader; a missing file is an error.
func TestSharedLibrariesOfThisMachine(t *testing.T) {
	if _, err := exec.LookPath("ldd"); err != nil {
		t.Skip("ldd is not installed (Debian's libc-bin)")
	}
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls to look at")
	}
	g := NewWithT(t)
	libs, err := SharedLibraries(context.Background(), ls)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(libs).To(ContainElement(MatchRegexp(`/libc\.so\.6$`)))
	g.Expect(libs).To(ContainElement(MatchRegexp(`/ld-linux.*\.so\.\d$`)))
	_, err = SharedLibraries(context.Background(), "/nonexistent/binary")
	g.Expect(err).To(HaveOccurred())
}
