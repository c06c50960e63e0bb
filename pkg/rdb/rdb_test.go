package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/multi-operator/multi-operator/pkg/crc64jones"
)

// parseAll reads every entry of raw, returning the keys and the error that
// ended the file (nil at a verified end).
func parseAll(raw []byte, opts Options) (int, error) {
	n := 0
	err := NewParser(bytes.NewReader(raw), opts).Each(func(e Entry) error {
		if _, ok := e.(*Key); ok {
			n++
		}
		return nil
	})
	return n, err
}

func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/*.rdb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.rdb: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = raw
	}
	return out
}

// file builds an RDB file of version 10 from body, with its checksum.
func file(body ...[]byte) []byte {
	raw := append([]byte("REDIS0010"), bytes.Join(body, nil)...)
	raw = append(raw, opEOF)
	return binary.LittleEndian.AppendUint64(raw, crc64jones.Checksum(raw))
}

func TestCorpusParses(t *testing.T) {
	want := map[string]int{"empty.rdb": 0, "types.rdb": 28, "uncompressed.rdb": 28}
	for name, raw := range corpus(t) {
		n, err := parseAll(raw, Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if n != want[name] {
			t.Errorf("%s: %d keys, want %d", name, n, want[name])
		}
	}
}

// TestTruncatedOrCorruptFilesAreRefused cuts the corpus at every byte and
// flips every byte: each must end in an error, never a clean end (the
// checksum catches what the structure does not) and never a panic.
func TestTruncatedOrCorruptFilesAreRefused(t *testing.T) {
	for name, raw := range corpus(t) {
		for cut := 0; cut < len(raw); cut++ {
			_, err := parseAll(raw[:cut], Options{})
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%s cut at %d: %v, want a FormatError", name, cut, err)
			}
			if cut >= 9 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s cut at %d: %v, want a truncated file", name, cut, err)
			}
		}
		for i := 9; i < len(raw); i++ {
			bad := bytes.Clone(raw)
			bad[i] ^= 0x5a
			if _, err := parseAll(bad, Options{}); err == nil {
				t.Errorf("%s with byte %d flipped parsed cleanly", name, i)
			}
		}
		bad := bytes.Clone(raw)
		bad[len(bad)-1] ^= 1
		if _, err := parseAll(bad, Options{}); !errors.Is(err, ErrChecksum) {
			t.Errorf("%s with its checksum flipped: %v, want ErrChecksum", name, err)
		}
	}
}

func TestNoChecksum(t *testing.T) {
	raw := file()
	binary.LittleEndian.PutUint64(raw[len(raw)-8:], 0)
	if _, err := parseAll(raw, Options{}); !errors.Is(err, ErrChecksum) {
		t.Errorf("a file without checksum: %v, want ErrChecksum", err)
	}
	if _, err := parseAll(raw, Options{AllowNoChecksum: true}); err != nil {
		t.Errorf("a file without checksum, allowed: %v", err)
	}
}

// TestDeclaredLengthsAreBounded feeds lengths far beyond the limits, and
// lengths within them with nothing behind: each is refused with memory
// nowhere near the declared size.
func TestDeclaredLengthsAreBounded(t *testing.T) {
	len64 := func(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{0x81}, n) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	for _, tc := range []struct {
		name string
		raw  []byte
		opts Options
		want error
	}{
		{"huge AUX name", file([]byte{opAux}, len64(1<<62)), Options{}, ErrTooLarge},
		{"huge key", file([]byte{typeString}, len64(1<<40)), Options{}, ErrTooLarge},
		{"huge string value", file([]byte{typeString}, str("k"), len64(1<<40)), Options{}, ErrTooLarge},
		{"value over a small limit", file([]byte{typeString}, str("k"), len64(2000)), Options{MaxValueBytes: 1000}, ErrTooLarge},
		{"huge LZF length", file([]byte{typeString}, str("k"), []byte{0xc3}, len64(10), len64(1<<40)), Options{}, ErrTooLarge},
		{"too many list elements", file([]byte{typeList}, str("k"), len64(1<<40)), Options{MaxElements: 1000}, ErrTooLarge},
		{"too many stream groups", file([]byte{typeStream2}, str("k"), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0}, len64(1<<50)), Options{MaxElements: 1 << 20}, ErrTooLarge},
		{"huge function", file([]byte{opFunction2}, len64(1<<40)), Options{}, ErrTooLarge},
		// Within the limits but absent: the file ends early.
		{"400 MiB string, 3 bytes of it", append([]byte("REDIS0010"), append(append([]byte{typeString}, str("k")...), append(len64(400<<20), "abc"...)...)...), Options{}, io.ErrUnexpectedEOF},
		{"a list of 2^32-1 elements, 2 of them", append([]byte("REDIS0010"), append(append([]byte{typeList}, str("k")...), append(len64(1<<32-1), 1, 'a', 1, 'b')...)...), Options{}, io.ErrUnexpectedEOF},
		{"module data", file([]byte{typeModule2}, str("k"), []byte{1, 2, 3}), Options{}, ErrUnsupported},
		{"module AUX", file([]byte{opModuleAux}, []byte{1, 2, 3}), Options{}, ErrUnsupported},
		{"unknown type", file([]byte{100}, str("k")), Options{}, ErrCorrupt},
		{"newer version", []byte("REDIS0012\xff"), Options{}, ErrUnsupported},
		{"not RDB", []byte("HELLO0010"), Options{}, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := parseAll(tc.raw, tc.opts)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
				t.Errorf("allocated %d bytes", grown)
			}
		})
	}
}

func TestLZF(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		size int
		want string
		ok   bool
	}{
		{"literal", []byte{2, 'a', 'b', 'c'}, 3, "abc", true},
		// "ab" then a back reference of length 2+2 at distance 2.
		{"back reference", []byte{1, 'a', 'b', 2 << 5, 1}, 6, "ababab", true},
		{"reference before the start", []byte{1, 'a', 'b', 2 << 5, 5}, 6, "", false},
		{"short output", []byte{2, 'a', 'b', 'c'}, 4, "", false},
		{"literal past the input", []byte{5, 'a'}, 6, "", false},
		{"truncated reference", []byte{1, 'a', 'b', 7 << 5}, 6, "", false},
		{"implausible size", []byte{0, 'a'}, 1 << 30, "", false},
	} {
		got, err := lzfDecompress(tc.in, tc.size)
		if (err == nil) != tc.ok || string(got) != tc.want {
			t.Errorf("%s: %q, %v; want %q, ok %v", tc.name, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParse feeds arbitrary bytes, seeded with real files: the parser may
// refuse them but must not panic, and stays within small limits. Without
// payloads (KeysOnly) it finds the same keys and refuses the same files.
func FuzzParse(f *testing.F) {
	for _, raw := range corpus(f) {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		opts := Options{MaxKeyBytes: 1 << 10, MaxValueBytes: 1 << 16, MaxElements: 1 << 12}
		full, fullErr := fuzzKeys(t, raw, opts)
		opts.KeysOnly = true
		keysOnly, keysOnlyErr := fuzzKeys(t, raw, opts)
		if (fullErr == nil) != (keysOnlyErr == nil) {
			t.Fatalf("with payloads: %v; keys only: %v", fullErr, keysOnlyErr)
		}
		if !slices.Equal(full, keysOnly) {
			t.Fatalf("with payloads: keys %q; keys only: %q", full, keysOnly)
		}
	})
}

// fuzzKeys parses raw and returns each key's database, name, type and
// expiry, up to the parser's error (nil at a verified end).
func fuzzKeys(t *testing.T, raw []byte, opts Options) ([]string, error) {
	p := NewParser(bytes.NewReader(raw), opts)
	var keys []string
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			return keys, nil
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a FormatError", err)
			}
			return keys, err
		}
		k, ok := e.(*Key)
		if !ok {
			continue
		}
		if int64(len(k.Payload)) > opts.withDefaults().MaxValueBytes {
			t.Fatalf("payload of %d bytes, over the limit", len(k.Payload))
		}
		if opts.KeysOnly && k.Payload != nil {
			t.Fatalf("key %q has a payload with KeysOnly", k.Key)
		}
		keys = append(keys, fmt.Sprintf("%d/%q/%d/%v/%d", k.DB, k.Key, k.Type, k.Expires, k.ExpireAtMs))
	}
}

// TestReadsOfAnySize parses every real file through readers that return a
// byte at a time, half of what is asked, or nothing several times before
// each byte: the parser buffers for itself, so each finds the same keys.
// A reader that only ever returns nothing is an error, not a hang.
func TestReadsOfAnySize(t *testing.T) {
	for name, raw := range corpus(t) {
		want, err := fuzzKeys(t, raw, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for how, r := range map[string]io.Reader{
			"one byte":        iotest.OneByteReader(bytes.NewReader(raw)),
			"half":            iotest.HalfReader(bytes.NewReader(raw)),
			"empty reads":     &emptyReads{r: bytes.NewReader(raw), before: maxEmptyReads - 1},
			"error with data": iotest.DataErrReader(bytes.NewReader(raw)),
		} {
			var got []string
			err := NewParser(r, Options{}).Each(func(e Entry) error {
				if k, ok := e.(*Key); ok {
					got = append(got, fmt.Sprintf("%d/%q/%d/%v/%d", k.DB, k.Key, k.Type, k.Expires, k.ExpireAtMs))
				}
				return nil
			})
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("%s, %s: %d keys, %v; want %d keys", name, how, len(got), err, len(want))
			}
		}
	}
	err := NewParser(&emptyReads{r: bytes.NewReader([]byte("REDIS0011")), before: 1 << 30}, Options{}).Each(func(Entry) error { return nil })
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("a reader that returns nothing: %v, want io.ErrNoProgress", err)
	}
}

// emptyReads returns nothing, and no error, before times before each byte.
type emptyReads struct {
	r      io.Reader
	before int
	empty  int
}

func (e *emptyReads) Read(p []byte) (int, error) {
	if e.empty < e.before {
		e.empty++
		return 0, nil
	}
	e.empty = 0
	return e.r.Read(p[:min(len(p), 1)])
}

// TestValueSizeLimitIsTheSameWithoutPayloads parses values at the size
// limit and one byte over it, with and without payloads: a backup's count
// (KeysOnly) must refuse exactly what a restore would, or a Complete
// backup could hold a value its restore refuses.
func TestValueSizeLimitIsTheSameWithoutPayloads(t *testing.T) {
	const limit = 64
	// A payload is the type byte, the value (here its length byte and its
	// bytes) and 10 bytes of version and checksum.
	const fits = limit - 10 - 1 - 1
	for _, tc := range []struct {
		size int
		want error
	}{
		{fits, nil},
		{fits + 1, ErrTooLarge},
	} {
		value := bytes.Repeat([]byte{'v'}, tc.size)
		raw := file([]byte{typeString, 1, 'k', byte(len(value))}, value)
		for _, keysOnly := range []bool{false, true} {
			_, err := parseAll(raw, Options{MaxValueBytes: limit, KeysOnly: keysOnly})
			if !errors.Is(err, tc.want) && (err != nil || tc.want != nil) {
				t.Errorf("a value of %d bytes, KeysOnly %v: %v, want %v", tc.size, keysOnly, err, tc.want)
			}
		}
	}
}
