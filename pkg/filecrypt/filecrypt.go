// Package filecrypt encrypts a stream of unknown length, such as a backup
// file on its way to an object store, with AES-256-GCM in segments, and
// decrypts it while it is read back. Memory is one segment either way.
//
// A file is a header (magic, segment size, a random nonce prefix) and
// segments, each sealed with a nonce of the prefix, the segment's index and
// a flag on the last one, and the header as additional data. A reader so
// detects a wrong key, a changed byte, segments reordered or dropped, a
// file cut at a segment boundary, and bytes added after the end.
package filecrypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

const (
	// Scheme names this format, for a manifest to say how its files are
	// encrypted.
	Scheme = "aes-256-gcm-segments-v1"
	// KeySize is the length of a key: AES-256.
	KeySize = 32
	// DefaultSegmentSize is the plaintext bytes of a segment.
	DefaultSegmentSize = 64 << 10
	// MaxSegmentSize bounds the segment size a reader accepts from a
	// header, and so the memory a file can make it take.
	MaxSegmentSize = 4 << 20

	magic       = "MOENC1\x00\x00"
	prefixSize  = 7
	headerSize  = len(magic) + 4 + prefixSize
	tagSize     = 16
	lastSegment = 1
)

var (
	// ErrNotEncrypted is returned when the stream does not start with this package's header.
	ErrNotEncrypted = errors.New("filecrypt: not an encrypted file (no header)")
	// ErrAuth is returned when a segment does not open with the key: a wrong key, or the
	// file was changed, reordered or cut.
	ErrAuth = errors.New("filecrypt: a segment does not decrypt with the key: wrong key or damaged file")
	// ErrTruncated is returned when the stream ends before its last segment.
	ErrTruncated = errors.New("filecrypt: the file ends before its last segment")
	// ErrTrailing is returned when bytes follow the last segment.
	ErrTrailing = errors.New("filecrypt: bytes follow the file's last segment")
)

// ParseKey reads a key as a Secret holds it: exactly KeySize bytes, or
// their standard base64 (as `openssl rand -base64 32` prints), surrounding
// whitespace ignored. The error never quotes the key.
func ParseKey(b []byte) ([]byte, error) {
	if len(b) == KeySize {
		return bytes.Clone(b), nil
	}
	text := strings.TrimSpace(string(b))
	if k, err := base64.StdEncoding.DecodeString(text); err == nil && len(k) == KeySize {
		return k, nil
	}
	return nil, fmt.Errorf("filecrypt: a key is %d bytes, or their base64; got %d bytes that are neither", KeySize, len(b))
}

// EncryptedSize is the length of the file a Writer makes of n bytes in
// segments of segmentSize (DefaultSegmentSize when 0).
func EncryptedSize(n int64, segmentSize int) int64 {
	if segmentSize == 0 {
		segmentSize = DefaultSegmentSize
	}
	segments := n / int64(segmentSize)
	if n%int64(segmentSize) != 0 || n == 0 {
		segments++
	}
	return int64(headerSize) + n + segments*tagSize
}

// Writer encrypts what is written to it onto another writer. Close writes
// the last segment and must be called; it does not close the writer below.
type Writer struct {
	w       io.Writer
	aead    cipher.AEAD
	header  []byte
	prefix  []byte
	buf     []byte
	out     []byte
	size    int
	index   uint32
	started bool
	closed  bool
	err     error
}

// NewWriter returns a Writer with segments of segmentSize plaintext bytes
// (DefaultSegmentSize when 0), sealing with key.
func NewWriter(w io.Writer, key []byte, segmentSize int) (*Writer, error) {
	if segmentSize == 0 {
		segmentSize = DefaultSegmentSize
	}
	if segmentSize < 1 || segmentSize > MaxSegmentSize {
		return nil, fmt.Errorf("filecrypt: segment size %d is not within 1..%d", segmentSize, MaxSegmentSize)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	header := make([]byte, headerSize)
	copy(header, magic)
	binary.BigEndian.PutUint32(header[len(magic):], uint32(segmentSize))
	if _, err := io.ReadFull(rand.Reader, header[len(magic)+4:]); err != nil {
		return nil, fmt.Errorf("filecrypt: nonce prefix: %w", err)
	}
	return &Writer{
		w: w, aead: aead, header: header, prefix: header[len(magic)+4:], size: segmentSize,
		buf: make([]byte, 0, segmentSize), out: make([]byte, 0, segmentSize+tagSize),
	}, nil
}

// Write buffers p and writes every full segment. A segment is sealed only
// once more bytes follow it, so that the last one is known at Close.
func (e *Writer) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.closed {
		return 0, errors.New("filecrypt: write after Close")
	}
	n := 0
	for len(p) > 0 {
		if len(e.buf) == e.size {
			if e.err = e.seal(false); e.err != nil {
				return n, e.err
			}
		}
		k := copy(e.buf[len(e.buf):e.size], p)
		e.buf = e.buf[:len(e.buf)+k]
		p = p[k:]
		n += k
	}
	return n, nil
}

// Close seals and writes the last segment (empty when the input was empty
// or ended on a segment boundary).
func (e *Writer) Close() error {
	if e.err != nil || e.closed {
		return e.err
	}
	e.closed = true
	e.err = e.seal(true)
	return e.err
}

// seal writes the header before the first segment, then the buffered
// segment.
func (e *Writer) seal(last bool) error {
	if !e.started {
		if _, err := e.w.Write(e.header); err != nil {
			return err
		}
		e.started = true
	}
	if e.index == math.MaxUint32 {
		return errors.New("filecrypt: too many segments for one file")
	}
	e.out = e.aead.Seal(e.out[:0], nonce(e.prefix, e.index, last), e.buf, e.header)
	e.index++
	e.buf = e.buf[:0]
	_, err := e.w.Write(e.out)
	return err
}

// Reader decrypts a stream a Writer made. It returns plaintext only from
// segments that opened, and an error at the end unless the last segment
// was read and nothing follows it.
type Reader struct {
	r      io.Reader
	aead   cipher.AEAD
	header []byte
	prefix []byte
	in     []byte
	plain  []byte
	next   []byte
	index  uint32
	done   bool
	err    error
}

// NewReader returns a Reader of r with key. It reads the header on the
// first Read.
func NewReader(r io.Reader, key []byte) (*Reader, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	return &Reader{r: r, aead: aead}, nil
}

// Read returns decrypted bytes.
func (d *Reader) Read(p []byte) (int, error) {
	for len(d.plain) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		if d.done {
			d.err = io.EOF
			continue
		}
		d.err = d.open()
	}
	n := copy(p, d.plain)
	d.plain = d.plain[n:]
	return n, nil
}

// open reads and opens the next segment. A segment is the last when the
// stream holds no byte after it, which the one-byte look-ahead (next)
// tells without waiting for more input than a segment.
func (d *Reader) open() error {
	if d.header == nil {
		if err := d.readHeader(); err != nil {
			return err
		}
	}
	want := cap(d.in)
	d.in = d.in[:want]
	k := copy(d.in, d.next)
	d.next = d.next[:0]
	n, err := io.ReadFull(d.r, d.in[k:])
	n += k
	d.in = d.in[:n]
	last := false
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		last = true
	case err != nil:
		return err
	default:
		one := make([]byte, 1)
		m, err := io.ReadFull(d.r, one)
		switch {
		case m == 1:
			d.next = append(d.next, one[0])
		case errors.Is(err, io.EOF):
			last = true
		default:
			return err
		}
	}
	if n < tagSize {
		return ErrTruncated
	}
	if d.index == math.MaxUint32 {
		return errors.New("filecrypt: too many segments for one file")
	}
	plain, err := d.aead.Open(d.plain[:0], nonce(d.prefix, d.index, last), d.in, d.header)
	if err != nil {
		// A segment that opens with the other flag tells a file cut at a
		// segment boundary, or one with bytes added after its end, from
		// damage.
		if _, err2 := d.aead.Open(nil, nonce(d.prefix, d.index, !last), d.in, d.header); err2 == nil {
			if last {
				return ErrTruncated
			}
			return ErrTrailing
		}
		return ErrAuth
	}
	d.index++
	d.plain = plain
	d.done = last
	return nil
}

// readHeader reads and checks the header and sizes the buffers.
func (d *Reader) readHeader() error {
	h := make([]byte, headerSize)
	if _, err := io.ReadFull(d.r, h); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return ErrNotEncrypted
		}
		return err
	}
	if string(h[:len(magic)]) != magic {
		return ErrNotEncrypted
	}
	size := binary.BigEndian.Uint32(h[len(magic):])
	if size < 1 || size > MaxSegmentSize {
		return fmt.Errorf("filecrypt: the header's segment size %d is not within 1..%d", size, MaxSegmentSize)
	}
	d.header, d.prefix = h, h[len(magic)+4:]
	d.in = make([]byte, 0, int(size)+tagSize)
	d.plain = make([]byte, 0, int(size))
	d.next = make([]byte, 0, 1)
	return nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("filecrypt: a key is %d bytes, not %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// nonce is the prefix, the segment's index and the last-segment flag.
func nonce(prefix []byte, index uint32, last bool) []byte {
	n := make([]byte, 12)
	copy(n, prefix)
	binary.BigEndian.PutUint32(n[prefixSize:], index)
	if last {
		n[11] = lastSegment
	}
	return n
}
