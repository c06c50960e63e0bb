package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/multi-operator/multi-operator/pkg/crc64jones"
)

// chunk is how much a bulk read moves at a time, so that a declared length
// never sizes an allocation: memory grows only with bytes that arrived.
const chunk = 32 << 10

// maxEmptyReads is how many reads in a row may return nothing and no
// error, as bufio allows, before the input is given up.
const maxEmptyReads = 100

// reader reads the file through a buffer of its own, keeping its offset and
// running checksum, and copies what it reads into rec while a value is
// being recorded. The checksum and the recording see the buffer's consumed
// bytes in bulk, when it is refilled or when asked (sum, stopRecording),
// rather than a few bytes at a time: most reads are of one to eight bytes.
type reader struct {
	src io.Reader
	// buf[pos:end] is read and not yet consumed; buf[:pos] is consumed, of
	// which buf[crcFrom:pos] is not yet in crc and buf[recFrom:pos] not yet
	// in rec.
	buf      []byte
	pos, end int
	crcFrom  int
	recFrom  int
	off      int64
	crc      uint64
	srcErr   error
	rec      *bytes.Buffer
	recLimit int64
}

func newReader(r io.Reader) *reader {
	return &reader{src: r, buf: make([]byte, 2*chunk)}
}

// errorf returns a FormatError at the current offset.
func (r *reader) errorf(kind error, format string, args ...any) error {
	return &FormatError{Offset: r.off, Err: kind, Msg: fmt.Sprintf(format, args...)}
}

// wrap turns a read error into a FormatError; an early end of the input is
// a truncated file.
func (r *reader) wrap(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	return &FormatError{Offset: r.off, Err: err, Msg: "reading"}
}

// flushCRC moves the consumed bytes into the checksum.
func (r *reader) flushCRC() {
	r.crc = crc64jones.Update(r.crc, r.buf[r.crcFrom:r.pos])
	r.crcFrom = r.pos
}

// flushRecording moves the consumed bytes into the recording, if any.
func (r *reader) flushRecording() error {
	if r.rec == nil {
		return nil
	}
	p := r.buf[r.recFrom:r.pos]
	r.recFrom = r.pos
	if int64(r.rec.Len())+int64(len(p)) > r.recLimit {
		return r.errorf(ErrTooLarge, "value is larger than %d bytes", r.recLimit)
	}
	r.rec.Write(p)
	return nil
}

// sum is the checksum of every byte consumed so far.
func (r *reader) sum() uint64 {
	r.flushCRC()
	return r.crc
}

// recorded returns how many bytes the recording holds, with those
// consumed and not yet flushed into it.
func (r *reader) recorded() int64 {
	return int64(r.rec.Len()) + int64(r.pos-r.recFrom)
}

// startRecording copies every byte consumed from now on into rec, up to
// limit bytes in all.
func (r *reader) startRecording(rec *bytes.Buffer, limit int64) {
	r.rec, r.recLimit, r.recFrom = rec, limit, r.pos
}

// stopRecording flushes the recording and ends it.
func (r *reader) stopRecording() error {
	err := r.flushRecording()
	r.rec = nil
	return err
}

// fill makes at least n (at most chunk) unconsumed bytes buffered, moving
// the consumed ones into the checksum and the recording first.
func (r *reader) fill(n int) error {
	r.flushCRC()
	if err := r.flushRecording(); err != nil {
		return err
	}
	copy(r.buf, r.buf[r.pos:r.end])
	r.end -= r.pos
	r.pos, r.crcFrom, r.recFrom = 0, 0, 0
	for empty := 0; r.end < n; {
		if r.srcErr != nil {
			return r.wrap(r.srcErr)
		}
		m, err := r.src.Read(r.buf[r.end:])
		r.end += m
		switch {
		case err != nil:
			r.srcErr = err
		case m > 0:
			empty = 0
		default:
			// A reader that keeps returning nothing must not spin.
			if empty++; empty == maxEmptyReads {
				r.srcErr = io.ErrNoProgress
			}
		}
	}
	return nil
}

// fixed consumes exactly n (at most chunk) bytes; the slice is valid until
// the next read.
func (r *reader) fixed(n int) ([]byte, error) {
	if r.end-r.pos < n {
		if err := r.fill(n); err != nil {
			return nil, err
		}
	}
	p := r.buf[r.pos : r.pos+n]
	r.pos += n
	r.off += int64(n)
	if r.rec != nil && r.recorded() > r.recLimit {
		return nil, r.errorf(ErrTooLarge, "value is larger than %d bytes", r.recLimit)
	}
	return p, nil
}

func (r *reader) byte() (byte, error) {
	if r.pos < r.end {
		b := r.buf[r.pos]
		r.pos++
		r.off++
		if r.rec != nil && r.recorded() > r.recLimit {
			return 0, r.errorf(ErrTooLarge, "value is larger than %d bytes", r.recLimit)
		}
		return b, nil
	}
	p, err := r.fixed(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// bulk reads n bytes into dst (nil: only through the checksum and the
// recording), in chunks.
func (r *reader) bulk(n uint64, dst *bytes.Buffer) error {
	if r.rec != nil && r.recorded()+int64(min(n, 1<<62)) > r.recLimit {
		return r.errorf(ErrTooLarge, "value is larger than %d bytes", r.recLimit)
	}
	for n > 0 {
		p, err := r.fixed(int(min(n, chunk)))
		if err != nil {
			return err
		}
		if dst != nil {
			dst.Write(p)
		}
		n -= uint64(len(p))
	}
	return nil
}

// Length encodings (rdb.h).
const (
	len6bit   = 0
	len14bit  = 1
	len32or64 = 2
	lenEnc    = 3

	len32 = 0x80
	len64 = 0x81

	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// length reads a length; encoded is set when it is a string encoding
// (integer or LZF) rather than a length.
func (r *reader) length() (n uint64, encoded bool, err error) {
	b, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case len6bit:
		return uint64(b & 0x3f), false, nil
	case len14bit:
		c, err := r.byte()
		if err != nil {
			return 0, false, err
		}
		return uint64(b&0x3f)<<8 | uint64(c), false, nil
	case lenEnc:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case len32:
		p, err := r.fixed(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case len64:
		p, err := r.fixed(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, r.errorf(ErrCorrupt, "unknown length encoding %#x", b)
}

// plainLength reads a length that may not be a string encoding.
func (r *reader) plainLength() (uint64, error) {
	n, encoded, err := r.length()
	if err == nil && encoded {
		err = r.errorf(ErrCorrupt, "string encoding where a length belongs")
	}
	return n, err
}

// count reads a number of elements and checks it against limit.
func (r *reader) count(limit uint64) (uint64, error) {
	n, err := r.plainLength()
	if err == nil && n > limit {
		err = r.errorf(ErrTooLarge, "%d elements, more than %d", n, limit)
	}
	return n, err
}

// skipString passes over a string of at most limit bytes in its stored
// form (LZF stays compressed): only the checksum and the recording see it.
func (r *reader) skipString(limit uint64) error {
	n, encoded, err := r.length()
	if err != nil {
		return err
	}
	if !encoded {
		if n > limit {
			return r.errorf(ErrTooLarge, "string of %d bytes, more than %d", n, limit)
		}
		return r.bulk(n, nil)
	}
	switch n {
	case encInt8:
		return r.bulk(1, nil)
	case encInt16:
		return r.bulk(2, nil)
	case encInt32:
		return r.bulk(4, nil)
	case encLZF:
		clen, ulen, err := r.lzfLengths(limit)
		if err != nil {
			return err
		}
		_ = ulen
		return r.bulk(clen, nil)
	}
	return r.errorf(ErrCorrupt, "unknown string encoding %d", n)
}

// lzfLengths reads an LZF string's compressed and uncompressed lengths,
// both at most limit.
func (r *reader) lzfLengths(limit uint64) (clen, ulen uint64, err error) {
	if clen, err = r.plainLength(); err != nil {
		return 0, 0, err
	}
	if ulen, err = r.plainLength(); err != nil {
		return 0, 0, err
	}
	if clen > limit || ulen > limit {
		return 0, 0, r.errorf(ErrTooLarge, "compressed string of %d bytes (%d uncompressed), more than %d", clen, ulen, limit)
	}
	return clen, ulen, nil
}

// decodedString reads a string of at most limit bytes as its plain bytes
// (an integer encoding in decimal, LZF uncompressed) into dst, replacing
// its contents.
func (r *reader) decodedString(limit uint64, dst *bytes.Buffer) error {
	dst.Reset()
	n, encoded, err := r.length()
	if err != nil {
		return err
	}
	if !encoded {
		if n > limit {
			return r.errorf(ErrTooLarge, "string of %d bytes, more than %d", n, limit)
		}
		return r.bulk(n, dst)
	}
	var v int64
	switch n {
	case encInt8:
		p, err := r.fixed(1)
		if err != nil {
			return err
		}
		v = int64(int8(p[0]))
	case encInt16:
		p, err := r.fixed(2)
		if err != nil {
			return err
		}
		v = int64(int16(binary.LittleEndian.Uint16(p)))
	case encInt32:
		p, err := r.fixed(4)
		if err != nil {
			return err
		}
		v = int64(int32(binary.LittleEndian.Uint32(p)))
	case encLZF:
		clen, ulen, err := r.lzfLengths(limit)
		if err != nil {
			return err
		}
		var in bytes.Buffer
		if err := r.bulk(clen, &in); err != nil {
			return err
		}
		out, err := lzfDecompress(in.Bytes(), int(ulen))
		if err != nil {
			return r.errorf(ErrCorrupt, "%v", err)
		}
		dst.Write(out)
		return nil
	default:
		return r.errorf(ErrCorrupt, "unknown string encoding %d", n)
	}
	dst.WriteString(strconv.FormatInt(v, 10))
	return nil
}
