package filecrypt

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func key(t testing.TB, b byte) []byte {
	t.Helper()
	return bytes.Repeat([]byte{b}, KeySize)
}

func encrypt(t testing.TB, k, plain []byte, segment int) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, k, segment)
	if err != nil {
		t.Fatal(err)
	}
	// Written in uneven pieces, as a stream arrives.
	for rest := plain; len(rest) > 0; {
		n := min(len(rest), 7)
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func decrypt(k, file []byte) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(file), k)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func TestRoundTrip(t *testing.T) {
	const segment = 16
	for _, size := range []int{0, 1, segment - 1, segment, segment + 1, 3 * segment, 3*segment + 5} {
		plain := make([]byte, size)
		_, _ = rand.Read(plain)
		file := encrypt(t, key(t, 1), plain, segment)
		segments := size/segment + 1
		if size > 0 && size%segment == 0 {
			segments = size / segment
		}
		if want := headerSize + size + segments*tagSize; len(file) != want || EncryptedSize(int64(size), segment) != int64(want) {
			t.Errorf("%d bytes: file of %d bytes, EncryptedSize %d, want %d", size, len(file), EncryptedSize(int64(size), segment), want)
		}
		if bytes.Contains(file, plain) && size > 4 {
			t.Errorf("%d bytes: the plaintext shows in the file", size)
		}
		got, err := decrypt(key(t, 1), file)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%d bytes: decrypted %d bytes, %v", size, len(got), err)
		}
		// A reader below that hands out one byte at a time.
		r, _ := NewReader(iotest.OneByteReader(bytes.NewReader(file)), key(t, 1))
		if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%d bytes, read a byte at a time: %d bytes, %v", size, len(got), err)
		}
	}
}

func TestTwoFilesOfOneKeyDiffer(t *testing.T) {
	plain := []byte("the same backup, twice")
	if bytes.Equal(encrypt(t, key(t, 1), plain, 0), encrypt(t, key(t, 1), plain, 0)) {
		t.Fatal("two encryptions of the same bytes are equal: the nonce prefix is not random")
	}
}

func TestDamageIsDetected(t *testing.T) {
	const segment = 16
	plain := bytes.Repeat([]byte("0123456789"), 7) // 70 bytes: 5 segments
	file := encrypt(t, key(t, 1), plain, segment)
	seg := segment + tagSize
	body := func(f []byte) []byte { return f[headerSize:] }
	cases := []struct {
		name  string
		file  func() []byte
		key   []byte
		want  error
		wantS string
	}{
		{name: "wrong key", file: func() []byte { return file }, key: key(t, 2), want: ErrAuth},
		{name: "a flipped byte", file: func() []byte {
			f := bytes.Clone(file)
			f[headerSize+seg+3] ^= 1
			return f
		}, want: ErrAuth},
		{name: "a flipped header byte", file: func() []byte {
			f := bytes.Clone(file)
			f[headerSize-1] ^= 1
			return f
		}, want: ErrAuth},
		{name: "cut at a segment boundary", file: func() []byte { return file[:headerSize+2*seg] }, want: ErrTruncated},
		{name: "cut inside a segment", file: func() []byte { return file[:headerSize+2*seg+20] }, want: ErrAuth},
		{name: "cut leaving less than a tag", file: func() []byte { return file[:headerSize+2*seg+5] }, want: ErrTruncated},
		{name: "cut inside the last tag", file: func() []byte { return file[:len(file)-1] }, want: ErrAuth},
		{name: "only the header", file: func() []byte { return file[:headerSize] }, want: ErrTruncated},
		{name: "bytes appended to a short last segment", file: func() []byte { return append(bytes.Clone(file), make([]byte, seg)...) }, want: ErrAuth},
		{name: "bytes appended to a full last segment", file: func() []byte {
			whole := encrypt(t, key(t, 1), plain[:4*segment], segment)
			return append(whole, 0)
		}, want: ErrTrailing},
		{name: "two segments swapped", file: func() []byte {
			f := bytes.Clone(file)
			b := body(f)
			tmp := bytes.Clone(b[:seg])
			copy(b[:seg], b[seg:2*seg])
			copy(b[seg:2*seg], tmp)
			return f
		}, want: ErrAuth},
		{name: "a segment dropped", file: func() []byte {
			f := bytes.Clone(file[:headerSize+seg])
			return append(f, file[headerSize+2*seg:]...)
		}, want: ErrAuth},
		{name: "not encrypted", file: func() []byte { return []byte("REDIS0011 a plain RDB file, long enough") }, want: ErrNotEncrypted},
		{name: "empty", file: func() []byte { return nil }, want: ErrNotEncrypted},
		{name: "a huge segment size in the header", file: func() []byte {
			f := bytes.Clone(file)
			f[len(magic)] = 0xff
			return f
		}, wantS: "segment size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := c.key
			if k == nil {
				k = key(t, 1)
			}
			got, err := decrypt(k, c.file())
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if c.wantS != "" && (err == nil || !strings.Contains(err.Error(), c.wantS)) {
				t.Fatalf("error %v, want one saying %q", err, c.wantS)
			}
			// Only whole, opened segments come out, and never all of it.
			if !bytes.HasPrefix(plain, got) || len(got) == len(plain) {
				t.Fatalf("handed out %d bytes that are not a prefix of what was opened", len(got))
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	raw := key(t, 7)
	cases := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"raw bytes", raw, true},
		{"base64", []byte(base64.StdEncoding.EncodeToString(raw)), true},
		{"base64 with a newline", []byte(base64.StdEncoding.EncodeToString(raw) + "\n"), true},
		{"too short", raw[:31], false},
		{"base64 of 16 bytes", []byte(base64.StdEncoding.EncodeToString(raw[:16])), false},
		{"a passphrase", []byte("correct horse battery staple"), false},
		{"empty", nil, false},
	}
	for _, c := range cases {
		k, err := ParseKey(c.in)
		if c.ok != (err == nil) {
			t.Errorf("%s: error %v", c.name, err)
			continue
		}
		if c.ok && !bytes.Equal(k, raw) {
			t.Errorf("%s: another key", c.name)
		}
		if err != nil && strings.Contains(err.Error(), string(c.in)) && len(c.in) > 0 {
			t.Errorf("%s: the error quotes the input", c.name)
		}
	}
}

func TestBadOptions(t *testing.T) {
	if _, err := NewWriter(io.Discard, key(t, 1)[:16], 0); err == nil {
		t.Error("a 16-byte key was taken")
	}
	if _, err := NewWriter(io.Discard, key(t, 1), MaxSegmentSize+1); err == nil {
		t.Error("a segment above the bound was taken")
	}
	if _, err := NewReader(bytes.NewReader(nil), nil); err == nil {
		t.Error("a reader without a key was made")
	}
}

// FuzzDecryptNeverPanics feeds arbitrary files to the reader: it returns
// an error or plaintext, never panics, and never more bytes than the file.
func FuzzDecryptNeverPanics(f *testing.F) {
	f.Add(encrypt(f, key(f, 1), []byte("seed"), 4))
	f.Add([]byte(magic + "\x00\x00\x00\x04abcdefg"))
	f.Fuzz(func(t *testing.T, file []byte) {
		got, err := decrypt(key(t, 1), file)
		if err == nil && len(got) > len(file) {
			t.Fatalf("%d bytes out of a %d-byte file", len(got), len(file))
		}
	})
}

// FuzzRoundTrip: whatever the bytes and segment size, they come back.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello"), uint16(3))
	f.Fuzz(func(t *testing.T, plain []byte, segment uint16) {
		size := int(segment%512) + 1
		got, err := decrypt(key(t, 3), encrypt(t, key(t, 3), plain, size))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("round trip of %d bytes in segments of %d: %d bytes, %v", len(plain), size, len(got), err)
		}
	})
}
