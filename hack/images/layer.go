package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// File is one entry of an image's single layer: a directory, or a regular
// file whose content is Data or, when Data is nil, the host file Source.
// Every entry gets the same modification time, so that the layer depends
// only on the contents, the modes and the owners.
type File struct {
	// Path is the absolute path inside the image, such as /etc/passwd.
	Path string
	// Mode holds the permission bits, including the sticky bit (0o1777).
	Mode int64
	// UID and GID own the entry.
	UID, GID int
	// Dir makes the entry a directory; Data and Source are then unused.
	Dir bool
	// Data is the content of a file given in memory.
	Data []byte
	// Source is the host file whose content is copied, symbolic links
	// followed, when Data is nil.
	Source string
}

// Dir is a directory entry at p owned by uid:gid.
func Dir(p string, mode int64, uid, gid int) File {
	return File{Path: p, Mode: mode, UID: uid, GID: gid, Dir: true}
}

// Content is a root-owned file at p with the given content.
func Content(p string, mode int64, data []byte) File {
	return File{Path: p, Mode: mode, Data: data}
}

// TreeFiles are the entries copying the host directory src, its
// subdirectories and regular files, to dst in the image, owned by root,
// with the host's permission bits.
func TreeFiles(src, dst string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		in := path.Join(dst, filepath.ToSlash(rel))
		if d.IsDir() {
			files = append(files, Dir(in, 0o755, 0, 0))
			return nil
		}
		f, err := HostFile(p, in)
		files = append(files, f)
		return err
	})
	return files, err
}

// HostFile copies the host file src to dst in the image, owned by root, with
// the host file's permission bits less setuid, setgid and sticky. src may
// be a symbolic link: the file it points to is copied.
func HostFile(src, dst string) (File, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return File{}, err
	}
	if !fi.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s is not a regular file", src)
	}
	return File{Path: dst, Mode: int64(fi.Mode().Perm()), Source: src}, nil
}

// sameEntry tells whether a and b describe the same entry, so that one of
// them can be dropped.
func sameEntry(a, b File) bool {
	return a.Path == b.Path && a.Mode == b.Mode && a.UID == b.UID && a.GID == b.GID &&
		a.Dir == b.Dir && a.Source == b.Source && bytes.Equal(a.Data, b.Data) && (a.Data == nil) == (b.Data == nil)
}

// Normalize returns the entries of a layer in the order they are written:
// paths cleaned, exact duplicates dropped, every missing parent directory
// added (0755, root), and sorted by path, so that parents come first and
// the order never depends on the caller's. Two different entries for one
// path, a relative path, or a file used as a parent are errors.
func Normalize(files []File) ([]File, error) {
	byPath := make(map[string]File, len(files))
	for _, f := range files {
		if !path.IsAbs(f.Path) {
			return nil, fmt.Errorf("path %q is not absolute", f.Path)
		}
		f.Path = path.Clean(f.Path)
		if f.Path == "/" {
			return nil, fmt.Errorf("the root directory cannot be an entry")
		}
		if !f.Dir && f.Data == nil && f.Source == "" {
			return nil, fmt.Errorf("%s: a file needs Data or Source", f.Path)
		}
		if old, ok := byPath[f.Path]; ok {
			if !sameEntry(old, f) {
				return nil, fmt.Errorf("two different entries for %s", f.Path)
			}
			continue
		}
		byPath[f.Path] = f
	}
	for p, f := range byPath {
		for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
			parent, ok := byPath[dir]
			if !ok {
				byPath[dir] = Dir(dir, 0o755, 0, 0)
				continue
			}
			if !parent.Dir {
				return nil, fmt.Errorf("%s is a file, but %s is under it", dir, f.Path)
			}
		}
	}
	out := make([]File, 0, len(byPath))
	for _, f := range byPath {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// WriteTar writes files as an uncompressed tar stream, normalized (see
// Normalize), every entry with modification time mtime and no user or
// group names, so that the same files always give the same bytes.
func WriteTar(w io.Writer, files []File, mtime time.Time) error {
	entries, err := Normalize(files)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, f := range entries {
		hdr := &tar.Header{
			Name:    strings.TrimPrefix(f.Path, "/"),
			Mode:    f.Mode,
			Uid:     f.UID,
			Gid:     f.GID,
			ModTime: mtime.UTC().Truncate(time.Second),
		}
		var data []byte
		switch {
		case f.Dir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case f.Data != nil:
			hdr.Typeflag = tar.TypeReg
			data = f.Data
		default:
			hdr.Typeflag = tar.TypeReg
			if data, err = os.ReadFile(f.Source); err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
		}
		hdr.Size = int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return tw.Close()
}

// NewLayer builds the gzip-compressed layer holding files (see WriteTar).
// It compresses once, in memory, with the standard library at its fastest
// level: the same files and the same Go release give the same digest.
func NewLayer(files []File, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if err := WriteTar(zw, files, mtime); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}
