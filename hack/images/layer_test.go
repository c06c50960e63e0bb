package images

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []File
		want  []string // "path mode uid" of each entry, in order
		err   string
	}{
		{
			name:  "parents are added, root-owned 0755, before their children",
			files: []File{Content("/etc/ssl/certs/ca.crt", 0o644, []byte("x"))},
			want:  []string{"/etc 755 0", "/etc/ssl 755 0", "/etc/ssl/certs 755 0", "/etc/ssl/certs/ca.crt 644 0"},
		},
		{
			name: "sorted whatever the caller's order",
			files: []File{
				Content("/usr/bin/b", 0o755, []byte("b")),
				Content("/manager", 0o755, []byte("m")),
				Content("/usr/bin/a", 0o755, []byte("a")),
			},
			want: []string{"/manager 755 0", "/usr 755 0", "/usr/bin 755 0", "/usr/bin/a 755 0", "/usr/bin/b 755 0"},
		},
		{
			name:  "a given directory keeps its mode and owner",
			files: []File{Dir("/tmp", 0o1777, 0, 0), Dir("/home/nonroot", 0o700, 65532, 65532)},
			want:  []string{"/home 755 0", "/home/nonroot 700 65532", "/tmp 1777 0"},
		},
		{
			name:  "paths are cleaned and exact duplicates dropped",
			files: []File{Content("/etc//passwd", 0o644, []byte("x")), Content("/etc/./passwd", 0o644, []byte("x"))},
			want:  []string{"/etc 755 0", "/etc/passwd 644 0"},
		},
		{
			name:  "an empty file given in memory is a file",
			files: []File{Content("/empty", 0o644, []byte{})},
			want:  []string{"/empty 644 0"},
		},
		{
			name:  "two different entries for one path",
			files: []File{Content("/etc/passwd", 0o644, []byte("a")), Content("/etc/passwd", 0o644, []byte("b"))},
			err:   "two different entries for /etc/passwd",
		},
		{
			name:  "a file under a file",
			files: []File{Content("/etc", 0o644, []byte("a")), Content("/etc/passwd", 0o644, []byte("b"))},
			err:   "/etc is a file",
		},
		{
			name:  "a relative path",
			files: []File{Content("etc/passwd", 0o644, []byte("a"))},
			err:   "not absolute",
		},
		{
			name:  "the root directory",
			files: []File{Dir("/", 0o755, 0, 0)},
			err:   "root directory",
		},
		{
			name:  "a file with no content",
			files: []File{{Path: "/x", Mode: 0o644}},
			err:   "needs Data or Source",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := Normalize(tc.files)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var desc []string
			for _, f := range got {
				desc = append(desc, f.Path+" "+strconv.FormatInt(f.Mode, 8)+" "+strconv.Itoa(f.UID))
			}
			g.Expect(desc).To(Equal(tc.want))
		})
	}
}

// TestWriteTarDependsOnContentsOnly: the host files' times and the order
// they are given in do not change a byte of the layer.
func TestWriteTarDependsOnContentsOnly(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "bin")
	g.Expect(os.WriteFile(src, []byte("#!/bin/false\n"), 0o755)).To(Succeed())
	files := func() []File {
		f, err := HostFile(src, "/usr/bin/tool")
		g.Expect(err).NotTo(HaveOccurred())
		return []File{f, Content("/etc/passwd", 0o644, []byte("root:x:0:0::/:/sbin/nologin\n"))}
	}

	var first, second bytes.Buffer
	g.Expect(WriteTar(&first, files(), testEpoch)).To(Succeed())
	later := time.Now().Add(time.Hour)
	g.Expect(os.Chtimes(src, later, later)).To(Succeed())
	reversed := files()
	reversed[0], reversed[1] = reversed[1], reversed[0]
	g.Expect(WriteTar(&second, reversed, testEpoch)).To(Succeed())
	g.Expect(second.Bytes()).To(Equal(first.Bytes()))

	tr := tar.NewReader(&first)
	var names []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		names = append(names, hdr.Name)
		g.Expect(hdr.ModTime.Equal(testEpoch)).To(BeTrue(), "%s: %s", hdr.Name, hdr.ModTime)
		g.Expect(hdr.Uname).To(BeEmpty())
		g.Expect(hdr.Gname).To(BeEmpty())
		if hdr.Name == "usr/bin/tool" {
			g.Expect(hdr.Mode).To(Equal(int64(0o755)), "the host file's mode")
		}
	}
	g.Expect(names).To(Equal([]string{"etc/", "etc/passwd", "usr/", "usr/bin/", "usr/bin/tool"}))
}

func TestHostFileRefusesADirectory(t *testing.T) {
	_, err := HostFile(t.TempDir(), "/x")
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("not a regular file")))
}

func TestParseEpoch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{in: "", want: time.Unix(0, 0)},
		{in: "0", want: time.Unix(0, 0)},
		{in: "1700000000", want: time.Unix(1700000000, 0)},
		{in: " 1700000000\n", want: time.Unix(1700000000, 0)},
		{in: "-1", err: true},
		{in: "2023-11-14", err: true},
		{in: "1.5", err: true},
	} {
		g := NewWithT(t)
		got, err := ParseEpoch(tc.in)
		if tc.err {
			g.Expect(err).To(HaveOccurred(), "%q", tc.in)
			continue
		}
		g.Expect(err).NotTo(HaveOccurred(), "%q", tc.in)
		g.Expect(got.Equal(tc.want)).To(BeTrue(), "%q: %s", tc.in, got)
		g.Expect(got.Location()).To(Equal(time.UTC))
	}
}

func TestImageNameNeedsATag(t *testing.T) {
	for _, tc := range []struct {
		ref string
		err string
	}{
		{ref: "localhost/redis:7.0.15-1_deb12u10"},
		{ref: "localhost/multi-operator:aa94836-dirty"},
		{ref: "localhost/redis", err: "has no tag"},
		{ref: "localhost/redis:7.0.15~1", err: "image name"},
	} {
		_, err := parseTag(tc.ref)
		if tc.err == "" {
			NewWithT(t).Expect(err).NotTo(HaveOccurred(), tc.ref)
		} else {
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.err)), tc.ref)
		}
	}
}
