// Package rdb reads Redis RDB files as a stream, as a node's snapshot
// arrives: for each key its database, name, absolute expiry and its value as
// a DUMP payload that RESTORE accepts, and each function library's code.
//
// Values are not decoded: the parser walks their encodings only to learn
// where they end, and hands on the bytes as the file holds them. The file
// comes from a node a tenant controls, so every length is checked against
// Options before anything is read or allocated for it, memory grows only
// with bytes that arrived, and the file's checksum is verified at its end.
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

// MaxVersion is the newest RDB version the parser reads, Redis 7.2's.
const MaxVersion = 11

// Defaults of Options.
const (
	// DefaultMaxKeyBytes bounds a key name. Redis allows far longer ones,
	// but a key of more than 1 MiB is a mistake or an attack, and each is
	// held whole.
	DefaultMaxKeyBytes = 1 << 20
	// DefaultMaxValueBytes bounds a value's serialized size, Redis's
	// proto-max-bulk-len: RESTORE could not take a larger payload anyway.
	DefaultMaxValueBytes = 512 << 20
	// DefaultMaxElements bounds the elements (or listpacks, consumer
	// groups, pending entries) of one value, Redis's own limit of a list.
	DefaultMaxElements = 1<<32 - 1
)

// Options bound what the parser accepts; zero fields take the defaults.
type Options struct {
	// MaxKeyBytes bounds a key's name, an AUX field's name and value, and
	// a stream's consumer group and consumer names.
	MaxKeyBytes int64
	// MaxValueBytes bounds a value's DUMP payload and a function library's
	// code.
	MaxValueBytes int64
	// MaxElements bounds every count inside a value.
	MaxElements uint64
	// AllowNoChecksum accepts a file whose checksum is 0, what Redis writes
	// with rdbchecksum no; by default such a file is refused, since nothing
	// then tells it arrived whole.
	AllowNoChecksum bool
	// KeysOnly walks values without making their payloads: a Key's
	// Payload is nil. The file is checked as fully; a caller that needs
	// keys and expiries only, such as a backup's count, saves the copy and
	// the checksum of every value.
	KeysOnly bool
}

func (o Options) withDefaults() Options {
	if o.MaxKeyBytes <= 0 {
		o.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.MaxElements == 0 {
		o.MaxElements = DefaultMaxElements
	}
	return o
}

// Errors a FormatError wraps, for errors.Is.
var (
	// ErrCorrupt is input that is not a valid RDB file.
	ErrCorrupt = errors.New("corrupt RDB")
	// ErrTooLarge is a length or count beyond Options.
	ErrTooLarge = errors.New("beyond the parser's limits")
	// ErrUnsupported is valid input the parser cannot carry over, such as a
	// module's data.
	ErrUnsupported = errors.New("unsupported RDB content")
	// ErrChecksum is a file whose checksum does not match its contents.
	ErrChecksum = errors.New("RDB checksum mismatch")
)

// FormatError is why the input was refused, and where.
type FormatError struct {
	// Offset is the number of bytes read when the problem was found.
	Offset int64
	// Err is one of ErrCorrupt, ErrTooLarge, ErrUnsupported, ErrChecksum
	// or the reader's error (io.ErrUnexpectedEOF for a truncated file).
	Err error
	// Msg says what was wrong.
	Msg string
}

// Error implements error.
func (e *FormatError) Error() string {
	return fmt.Sprintf("RDB at offset %d: %s: %v", e.Offset, e.Msg, e.Err)
}

// Unwrap returns Err.
func (e *FormatError) Unwrap() error { return e.Err }

// Entry is what Next returns: a *Key, a *FunctionLibrary or an *Aux.
type Entry interface{ entry() }

// Key is one key and its value.
type Key struct {
	// DB is the database the key is in.
	DB int
	// Key is the key's name.
	Key []byte
	// Expires tells whether the key has an expiry, ExpireAtMs.
	Expires bool
	// ExpireAtMs is the key's absolute expiry, Unix time in milliseconds,
	// what RESTORE takes with ABSTTL.
	ExpireAtMs int64
	// Type is the value's RDB type byte, the payload's first byte.
	Type byte
	// Payload is the value as DUMP returns it and RESTORE takes it: the
	// type, the value's bytes as the file holds them, the file's RDB
	// version (2 bytes, little-endian) and the CRC-64 of all that.
	Payload []byte
}

// FunctionLibrary is one library of Redis functions, for FUNCTION LOAD.
type FunctionLibrary struct {
	// Code is the library's source, starting with its #! line.
	Code []byte
}

// Aux is one of the file's auxiliary fields, such as redis-ver or
// repl-id.
type Aux struct {
	// Key and Value are the field's name and value.
	Key, Value []byte
}

func (*Key) entry()             {}
func (*FunctionLibrary) entry() {}
func (*Aux) entry()             {}

// Opcodes (rdb.h).
const (
	opFunction2     = 0xf5
	opFunctionPreGA = 0xf6
	opModuleAux     = 0xf7
	opIdle          = 0xf8
	opFreq          = 0xf9
	opAux           = 0xfa
	opResizeDB      = 0xfb
	opExpireTimeMs  = 0xfc
	opExpireTime    = 0xfd
	opSelectDB      = 0xfe
	opEOF           = 0xff
)

// Value types (rdb.h).
const (
	typeString          = 0
	typeList            = 1
	typeSet             = 2
	typeZSet            = 3
	typeHash            = 4
	typeZSet2           = 5
	typeModule          = 6
	typeModule2         = 7
	typeHashZipmap      = 9
	typeListZiplist     = 10
	typeSetIntset       = 11
	typeZSetZiplist     = 12
	typeHashZiplist     = 13
	typeListQuicklist   = 14
	typeStreamListpacks = 15
	typeHashListpack    = 16
	typeZSetListpack    = 17
	typeListQuicklist2  = 18
	typeStream2         = 19
	typeSetListpack     = 20
	typeStream3         = 21
)

// Parser reads one RDB file.
type Parser struct {
	r       *reader
	opts    Options
	version int
	started bool
	done    bool
	err     error
	db      int

	key     Key
	keyBuf  bytes.Buffer
	payload bytes.Buffer
	aux     Aux
	auxVal  bytes.Buffer
}

// NewParser returns a parser of the RDB file r holds. It reads r through a
// buffer and no further than the file's checksum.
func NewParser(r io.Reader, opts Options) *Parser {
	return &Parser{r: newReader(r), opts: opts.withDefaults()}
}

// Version is the file's RDB version, known after the first Next.
func (p *Parser) Version() int { return p.version }

// Offset is the number of bytes read so far.
func (p *Parser) Offset() int64 { return p.r.off }

// Next returns the next key, function library or AUX field. What it returns
// is valid until the next call. At the end of the file, once its checksum
// matched, it returns io.EOF; after any other error it returns that error
// again.
func (p *Parser) Next() (Entry, error) {
	if p.err != nil {
		return nil, p.err
	}
	e, err := p.next()
	if err != nil {
		p.err = err
	}
	return e, err
}

// Each calls fn with every entry up to the end of the file, and returns
// nil once the checksum matched, or the first error of the parser or of
// fn. An entry is valid only during its call.
func (p *Parser) Each(fn func(Entry) error) error {
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

func (p *Parser) next() (Entry, error) {
	if p.done {
		return nil, io.EOF
	}
	if !p.started {
		if err := p.header(); err != nil {
			return nil, err
		}
		p.started = true
	}
	r := p.r
	var (
		expires  bool
		expireAt int64
	)
	for {
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		switch op {
		case opEOF:
			return nil, p.end()
		case opSelectDB:
			db, err := r.plainLength()
			if err != nil {
				return nil, err
			}
			if db > 1<<31-1 {
				return nil, r.errorf(ErrCorrupt, "database %d", db)
			}
			p.db = int(db)
		case opResizeDB:
			if _, err := r.plainLength(); err != nil {
				return nil, err
			}
			if _, err := r.plainLength(); err != nil {
				return nil, err
			}
		case opExpireTime:
			b, err := r.fixed(4)
			if err != nil {
				return nil, err
			}
			expires, expireAt = true, int64(int32(binary.LittleEndian.Uint32(b)))*1000
		case opExpireTimeMs:
			b, err := r.fixed(8)
			if err != nil {
				return nil, err
			}
			expires, expireAt = true, int64(binary.LittleEndian.Uint64(b))
		case opFreq:
			if _, err := r.byte(); err != nil {
				return nil, err
			}
		case opIdle:
			if _, err := r.plainLength(); err != nil {
				return nil, err
			}
		case opAux:
			if err := r.decodedString(uint64(p.opts.MaxKeyBytes), &p.keyBuf); err != nil {
				return nil, err
			}
			if err := r.decodedString(uint64(p.opts.MaxKeyBytes), &p.auxVal); err != nil {
				return nil, err
			}
			p.aux = Aux{Key: p.keyBuf.Bytes(), Value: p.auxVal.Bytes()}
			return &p.aux, nil
		case opFunction2:
			if err := r.decodedString(uint64(p.opts.MaxValueBytes), &p.payload); err != nil {
				return nil, err
			}
			return &FunctionLibrary{Code: p.payload.Bytes()}, nil
		case opFunctionPreGA:
			return nil, r.errorf(ErrUnsupported, "functions of a Redis 7.0 release candidate")
		case opModuleAux:
			return nil, r.errorf(ErrUnsupported, "a module's auxiliary data: modules cannot be carried over")
		default:
			return p.value(op, expires, expireAt)
		}
	}
}

func (p *Parser) header() error {
	b, err := p.r.fixed(9)
	if err != nil {
		return err
	}
	if string(b[:5]) != "REDIS" {
		return p.r.errorf(ErrCorrupt, "not an RDB file")
	}
	v, err := strconv.Atoi(string(b[5:]))
	if err != nil || v < 1 {
		return p.r.errorf(ErrCorrupt, "RDB version %q", b[5:])
	}
	if v > MaxVersion {
		return p.r.errorf(ErrUnsupported, "RDB version %d, newer than %d", v, MaxVersion)
	}
	p.version = v
	return nil
}

// end checks the checksum after the EOF opcode.
func (p *Parser) end() error {
	p.done = true
	if p.version < 5 {
		return io.EOF
	}
	want := p.r.sum()
	b, err := p.r.fixed(8)
	if err != nil {
		return err
	}
	got := binary.LittleEndian.Uint64(b)
	switch {
	case got == want:
		return io.EOF
	case got == 0 && p.opts.AllowNoChecksum:
		return io.EOF
	case got == 0:
		return p.r.errorf(ErrChecksum, "the file has no checksum (rdbchecksum no)")
	}
	return p.r.errorf(ErrChecksum, "file says %#x, contents give %#x", got, want)
}

// value reads a key and its value of type t.
func (p *Parser) value(t byte, expires bool, expireAt int64) (Entry, error) {
	r := p.r
	if err := r.decodedString(uint64(p.opts.MaxKeyBytes), &p.keyBuf); err != nil {
		return nil, err
	}
	if p.opts.KeysOnly {
		// Nothing is held, so the value's size is checked once walked: a
		// value RESTORE could not take is refused as it is with payloads.
		start := r.off
		if err := p.walk(t); err != nil {
			return nil, err
		}
		// As with payloads: the type byte, the value, and 10 bytes of
		// version and checksum.
		if size := 1 + r.off - start; size > p.opts.MaxValueBytes-10 {
			return nil, r.errorf(ErrTooLarge, "value is larger than %d bytes", p.opts.MaxValueBytes-10)
		}
		p.key = Key{DB: p.db, Key: p.keyBuf.Bytes(), Expires: expires, ExpireAtMs: expireAt, Type: t}
		return &p.key, nil
	}
	// The payload is bounded by MaxValueBytes with its 11 bytes of type,
	// version and checksum.
	if p.payload.Cap() > chunk*32 {
		p.payload = bytes.Buffer{}
	}
	p.payload.Reset()
	p.payload.WriteByte(t)
	r.startRecording(&p.payload, p.opts.MaxValueBytes-10)
	err := p.walk(t)
	if stopErr := r.stopRecording(); err == nil {
		err = stopErr
	}
	if err != nil {
		return nil, err
	}
	var foot [2]byte
	binary.LittleEndian.PutUint16(foot[:], uint16(p.version))
	p.payload.Write(foot[:])
	var sum [8]byte
	binary.LittleEndian.PutUint64(sum[:], crc64jones.Checksum(p.payload.Bytes()))
	p.payload.Write(sum[:])
	p.key = Key{DB: p.db, Key: p.keyBuf.Bytes(), Expires: expires, ExpireAtMs: expireAt, Type: t, Payload: p.payload.Bytes()}
	return &p.key, nil
}

// walk passes over a value of type t, which the reader records.
func (p *Parser) walk(t byte) error {
	r := p.r
	maxStr := uint64(p.opts.MaxValueBytes)
	maxN := p.opts.MaxElements
	strings := func(per int) error {
		n, err := r.count(maxN)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			for range per {
				if err := r.skipString(maxStr); err != nil {
					return err
				}
			}
		}
		return nil
	}
	switch t {
	case typeString, typeHashZipmap, typeListZiplist, typeSetIntset, typeZSetZiplist,
		typeHashZiplist, typeHashListpack, typeZSetListpack, typeSetListpack:
		return r.skipString(maxStr)
	case typeList, typeSet, typeListQuicklist:
		return strings(1)
	case typeHash:
		return strings(2)
	case typeZSet, typeZSet2:
		n, err := r.count(maxN)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			if err := r.skipString(maxStr); err != nil {
				return err
			}
			if t == typeZSet2 {
				if _, err := r.fixed(8); err != nil {
					return err
				}
				continue
			}
			// A score as text: its length, or 253-255 for nan and infinities.
			l, err := r.byte()
			if err != nil {
				return err
			}
			if l < 253 {
				if err := r.bulk(uint64(l), nil); err != nil {
					return err
				}
			}
		}
		return nil
	case typeListQuicklist2:
		n, err := r.count(maxN)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			// Each node: its container (plain or packed), then its data.
			if _, err := r.plainLength(); err != nil {
				return err
			}
			if err := r.skipString(maxStr); err != nil {
				return err
			}
		}
		return nil
	case typeStreamListpacks, typeStream2, typeStream3:
		return p.stream(t)
	case typeModule, typeModule2:
		return r.errorf(ErrUnsupported, "a module's value: modules cannot be carried over")
	}
	return r.errorf(ErrCorrupt, "unknown value type %d", t)
}

// stream passes over a stream of type t (rdbLoadObject's layout).
func (p *Parser) stream(t byte) error {
	r := p.r
	maxN := p.opts.MaxElements
	lens := func(n int) error {
		for ; n > 0; n-- {
			if _, err := r.plainLength(); err != nil {
				return err
			}
		}
		return nil
	}
	n, err := r.count(maxN)
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		// The node's master ID, 16 bytes, then its listpack.
		if err := r.skipString(16); err != nil {
			return err
		}
		if err := r.skipString(uint64(p.opts.MaxValueBytes)); err != nil {
			return err
		}
	}
	// Length and last ID; from v2 the first ID, the largest deleted ID and
	// the number of entries ever added.
	fields := 3
	if t >= typeStream2 {
		fields += 5
	}
	if err := lens(fields); err != nil {
		return err
	}
	groups, err := r.count(maxN)
	if err != nil {
		return err
	}
	for ; groups > 0; groups-- {
		if err := r.skipString(uint64(p.opts.MaxKeyBytes)); err != nil {
			return err
		}
		// Last delivered ID; from v2 the entries read.
		fields := 2
		if t >= typeStream2 {
			fields++
		}
		if err := lens(fields); err != nil {
			return err
		}
		pending, err := r.count(maxN)
		if err != nil {
			return err
		}
		for ; pending > 0; pending-- {
			// Entry ID and delivery time, then the delivery count.
			if _, err := r.fixed(16 + 8); err != nil {
				return err
			}
			if err := lens(1); err != nil {
				return err
			}
		}
		consumers, err := r.count(maxN)
		if err != nil {
			return err
		}
		for ; consumers > 0; consumers-- {
			if err := r.skipString(uint64(p.opts.MaxKeyBytes)); err != nil {
				return err
			}
			// Seen time; from v3 the active time.
			times := 8
			if t >= typeStream3 {
				times += 8
			}
			if _, err := r.fixed(times); err != nil {
				return err
			}
			owned, err := r.count(maxN)
			if err != nil {
				return err
			}
			for ; owned > 0; owned-- {
				if _, err := r.fixed(16); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
