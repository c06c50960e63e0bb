package redisadmin

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// ReplyLimits bound what the operator reads from a node. A tenant chooses
// the image its nodes run, so a node may declare a reply of any length,
// and go-redis allocates what a reply's header declares before reading
// it. The limits apply to everything a connection reads between two of
// its writes: one command's reply, or one pipeline's replies.
type ReplyLimits struct {
	// Line bounds a header or a simple reply (a status, an error, a
	// number), which go-redis reads whole into memory.
	Line int
	// Bytes bounds the bytes read, counting each bulk string at its
	// declared length.
	Bytes int64
	// Elements bounds the elements that arrays, sets and maps declare,
	// for each of which go-redis allocates a slot up front.
	Elements int64
}

// DefaultReplyLimits leave ample room for what the operator asks: CLUSTER
// NODES of the largest cluster the API admits, INFO, one pipeline of
// GETKEYSINSLOT, and short CONFIG and ACL values. Sizes are in
// docs/security.md.
var DefaultReplyLimits = ReplyLimits{Line: 64 << 10, Bytes: 8 << 20, Elements: 1 << 16}

// ReplyTooLargeError is a reply the operator refused to read: the node
// declared more than ReplyLimits allow. The connection is closed.
type ReplyTooLargeError struct {
	// What says which limit the reply exceeded.
	What string
}

// Error explains that the node's reply exceeded the operator's limits.
func (e *ReplyTooLargeError) Error() string {
	return "the node's reply exceeds what the operator reads: " + e.What
}

// guardDialer returns a dialer that wraps each connection dial makes in a
// replyGuard with limits.
func guardDialer(dial func(context.Context, string, string) (net.Conn, error), limits ReplyLimits) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &replyGuard{Conn: c, scan: replyScanner{limits: limits}}, nil
	}
}

// replyGuard checks what a connection reads before go-redis sees it. A
// chunk that would break a limit is never handed on, so go-redis never
// reads the header that would make it allocate.
type replyGuard struct {
	net.Conn
	mu   sync.Mutex
	scan replyScanner
}

// Write starts a new exchange: the limits apply to the replies that
// follow it.
func (g *replyGuard) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.scan.newExchange()
	g.mu.Unlock()
	return g.Conn.Write(p)
}

// Read hands on what the node sent when it keeps within the limits.
func (g *replyGuard) Read(p []byte) (int, error) {
	g.mu.Lock()
	if err := g.scan.err; err != nil {
		g.mu.Unlock()
		return 0, err
	}
	g.mu.Unlock()
	n, err := g.Conn.Read(p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if scanErr := g.scan.feed(p[:n]); scanErr != nil {
		_ = g.Close()
		return 0, scanErr
	}
	return n, err
}

// replyScanner follows the RESP stream a node sends, one chunk at a time,
// and checks each header against its limits. It needs no stack: every
// element starts with a header line, and only bulk strings carry a
// payload, of the length their header declares.
type replyScanner struct {
	limits ReplyLimits
	// inPayload is true inside a bulk string; payload counts what is left
	// of it, with its CRLF.
	inPayload bool
	payload   int64
	// line is the length of the header line read so far; kind is its
	// first byte, and number the digits after it.
	line     int
	kind     byte
	number   int64
	negative bool
	// bytes and elements are spent since the last write.
	bytes, elements int64
	// err, once set, stays: the stream cannot be followed past it.
	err error
}

// newExchange resets the budget: the client sent another command.
func (s *replyScanner) newExchange() { s.bytes, s.elements = 0, 0 }

// feed checks the next chunk of the stream.
func (s *replyScanner) feed(p []byte) error {
	if s.err != nil {
		return s.err
	}
	for i := 0; i < len(p); {
		if s.inPayload {
			take := min(int64(len(p)-i), s.payload)
			s.payload -= take
			i += int(take)
			if s.payload == 0 {
				s.inPayload = false
			}
			continue
		}
		c := p[i]
		i++
		s.bytes++
		if s.bytes > s.limits.Bytes {
			return s.fail("more than %d bytes in one reply", s.limits.Bytes)
		}
		if s.line++; s.line > s.limits.Line {
			return s.fail("a line longer than %d bytes", s.limits.Line)
		}
		switch {
		case s.line == 1:
			s.kind, s.number, s.negative = c, 0, false
		case c == '\n':
			if err := s.endLine(); err != nil {
				return err
			}
			s.line = 0
		case s.line == 2 && c == '-':
			s.negative = true
		case c >= '0' && c <= '9' && s.number < 1<<40:
			s.number = s.number*10 + int64(c-'0')
		}
	}
	return nil
}

// endLine acts on a complete header line.
func (s *replyScanner) endLine() error {
	if s.negative {
		// A null bulk string or array: nothing follows.
		return nil
	}
	switch s.kind {
	case '$', '!', '=':
		if s.bytes+s.number+2 > s.limits.Bytes {
			return s.fail("a bulk string of %d bytes, over the limit of %d bytes per reply", s.number, s.limits.Bytes)
		}
		s.bytes += s.number + 2
		s.inPayload, s.payload = true, s.number+2
	case '*', '~', '>', '%', '|':
		n := s.number
		if s.kind == '%' || s.kind == '|' {
			n *= 2
		}
		if s.elements += n; s.elements > s.limits.Elements {
			return s.fail("%d elements, over the limit of %d per reply", s.elements, s.limits.Elements)
		}
	}
	return nil
}

func (s *replyScanner) fail(format string, args ...any) error {
	s.err = &ReplyTooLargeError{What: fmt.Sprintf(format, args...)}
	return s.err
}
