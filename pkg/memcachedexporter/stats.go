// Package memcachedexporter is the Memcached exporter sidecar: it asks the
// memcached server beside it for `stats` and `stats settings` on every
// scrape and serves the answers as Prometheus metrics, with the names and
// labels of prometheus/memcached_exporter so that its dashboards and
// alerts apply. The server is run by the tenant, so every reply is read
// under a deadline and within bounds of lines, line length and bytes.
package memcachedexporter

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Limits bound one reply of memcached. A reply past any of them is an
// error, and the rest of it is not read.
type Limits struct {
	// Lines is the most STAT lines a reply may have.
	Lines int
	// LineBytes is the longest line, its CRLF included.
	LineBytes int
	// ReplyBytes is the most bytes of a reply.
	ReplyBytes int
}

// DefaultLimits leave room for the replies of memcached 1.4 to 1.6, whose
// `stats` has about a hundred lines of a few dozen bytes each.
var DefaultLimits = Limits{Lines: 512, LineBytes: 256, ReplyBytes: 32 << 10}

// SlabsLimits bound `stats slabs`, whose lines grow with the slab classes
// in use: memcached has at most 63 classes of under twenty lines each.
var SlabsLimits = Limits{Lines: 2048, LineBytes: 256, ReplyBytes: 96 << 10}

// Stats is one reply: statistic name to value.
type Stats map[string]string

// Errors of a reply that is not a well-formed stats reply.
var (
	// ErrTooLong is a reply past its Limits.
	ErrTooLong = errors.New("memcached reply past its bounds")
	// ErrMalformed is a line that is not "STAT <name> <value>" nor "END".
	ErrMalformed = errors.New("malformed memcached stats reply")
)

// maxNameBytes bounds a statistic's name; memcached's longest are under 40.
const maxNameBytes = 64

// ParseStats reads one stats reply from r, up to its END line, within
// limits. It may buffer bytes past END; a caller sends the next command
// only after the reply, so a well-behaved server sends none.
func ParseStats(r io.Reader, limits Limits) (Stats, error) {
	lr := &io.LimitedReader{R: r, N: int64(limits.ReplyBytes)}
	br := bufio.NewReaderSize(lr, max(limits.LineBytes, 16))
	stats := Stats{}
	for lines := 0; ; lines++ {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull) || len(line) > limits.LineBytes:
			return nil, fmt.Errorf("%w: a line longer than %d bytes", ErrTooLong, limits.LineBytes)
		case errors.Is(err, io.EOF) && lr.N == 0:
			return nil, fmt.Errorf("%w: no END within %d bytes", ErrTooLong, limits.ReplyBytes)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%w: the reply ended before END", ErrMalformed)
		case err != nil:
			return nil, fmt.Errorf("reading memcached stats: %w", err)
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if string(line) == "END" {
			return stats, nil
		}
		if lines >= limits.Lines {
			return nil, fmt.Errorf("%w: more than %d lines", ErrTooLong, limits.Lines)
		}
		name, value, err := parseLine(line)
		if err != nil {
			return nil, err
		}
		if _, dup := stats[name]; dup {
			return nil, fmt.Errorf("%w: %q twice", ErrMalformed, name)
		}
		stats[name] = value
	}
}

// parseLine splits "STAT <name> <value>". A name is lower-case letters,
// digits, '_' and ':'; a value is printable ASCII without blanks (memcached
// writes none, and the values end up in label values and logs).
func parseLine(line []byte) (name, value string, err error) {
	rest, ok := bytes.CutPrefix(line, []byte("STAT "))
	if !ok {
		if bytes.HasPrefix(line, []byte("ERROR")) || bytes.HasPrefix(line, []byte("SERVER_ERROR")) || bytes.HasPrefix(line, []byte("CLIENT_ERROR")) {
			return "", "", fmt.Errorf("%w: the server answered an error", ErrMalformed)
		}
		return "", "", fmt.Errorf("%w: a line that is not STAT nor END", ErrMalformed)
	}
	n, v, ok := bytes.Cut(rest, []byte(" "))
	if !ok || len(n) == 0 || len(n) > maxNameBytes || len(v) == 0 {
		return "", "", fmt.Errorf("%w: a STAT line without a name and a value", ErrMalformed)
	}
	for _, c := range n {
		if !nameByte(c) {
			return "", "", fmt.Errorf("%w: a statistic name with %q", ErrMalformed, c)
		}
	}
	for _, c := range v {
		if c <= ' ' || c > '~' {
			return "", "", fmt.Errorf("%w: a value with byte %#x", ErrMalformed, c)
		}
	}
	return string(n), string(v), nil
}

// nameByte says whether c may be part of a statistic's name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == ':'
}
