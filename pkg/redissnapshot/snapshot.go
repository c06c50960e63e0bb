// Package redissnapshot takes a Redis node's snapshot over the network with
// the replication protocol, as redis-cli --rdb does: it asks for a full
// resynchronization, streams the RDB file the node sends to a writer, and
// hangs up instead of staying on as a replica. No pod exec nor volume is
// needed, and a replica can serve it as well as a master.
//
// The node may be a tenant's process: the transfer is bounded in size, in
// total time and in time without progress, and every line read is short.
package redissnapshot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults of Options.
const (
	// DefaultIdleTimeout is how long the node may send nothing at all;
	// while it forks and saves it sends a newline every second.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxBytes bounds the snapshot when Options.MaxBytes is 0.
	DefaultMaxBytes = 64 << 30
)

// maxLine bounds a reply line (+FULLRESYNC, $<length>, an error).
const maxLine = 1024

// chunk is the transfer's buffer size: the memory a snapshot takes.
const chunk = 32 << 10

// markLen is the length of the end mark of a diskless transfer.
const markLen = 40

// Options configure a snapshot.
type Options struct {
	// TLS, when set, makes the connection speak TLS with this config.
	TLS *tls.Config
	// Username and Password authenticate with AUTH; the default user when
	// Username is empty, none when both are. The user needs the SYNC and
	// PSYNC commands (and REPLCONF).
	Username, Password string
	// IdleTimeout bounds each wait for the node; DefaultIdleTimeout when 0.
	// The context bounds the whole transfer.
	IdleTimeout time.Duration
	// MaxBytes bounds the RDB file; DefaultMaxBytes when 0.
	MaxBytes int64
	// Dialer dials the node; a zero net.Dialer when nil.
	Dialer *net.Dialer
}

// Result tells which state of the node the snapshot holds.
type Result struct {
	// ReplID and Offset are the node's replication ID and offset at the
	// snapshot, from +FULLRESYNC; empty and -1 when the node only spoke
	// SYNC.
	ReplID string
	Offset int64
	// Bytes is the RDB file's size.
	Bytes int64
	// Diskless tells the node streamed the file as it wrote it (an end
	// mark rather than a length ahead).
	Diskless bool
}

var (
	// ErrProtocol is a node that does not speak the replication protocol
	// as Redis does.
	ErrProtocol = errors.New("replication protocol violated")
	// ErrTooLarge is a snapshot beyond Options.MaxBytes.
	ErrTooLarge = errors.New("snapshot larger than allowed")
	// ErrRefused is an error reply from the node, such as a wrong password
	// or a user without PSYNC.
	ErrRefused = errors.New("node refused")
)

// Take connects to the node at addr, has it send its snapshot and writes
// the RDB file, exactly, to w. It returns when the file is complete, or
// with an error when the context ends, the node stays silent for
// IdleTimeout, sends more than MaxBytes or breaks the protocol. What was
// written to w before an error is a prefix of a file, to discard.
func Take(ctx context.Context, addr string, w io.Writer, opts Options) (Result, error) {
	res := Result{Offset: -1}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	dialer := opts.Dialer
	if dialer == nil {
		dialer = &net.Dialer{}
	}
	dctx, cancel := context.WithTimeout(ctx, opts.IdleTimeout)
	raw, err := dialer.DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return res, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	// Closing the connection is how a cancelled context interrupts a read.
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	defer stop()
	defer func() { _ = raw.Close() }()
	conn := raw
	if opts.TLS != nil {
		cfg := opts.TLS.Clone()
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(raw, cfg)
		_ = tc.SetDeadline(deadline(ctx, opts.IdleTimeout))
		if err := tc.HandshakeContext(ctx); err != nil {
			return res, fmt.Errorf("TLS with %s: %w", addr, ctxErr(ctx, err))
		}
		conn = tc
	}
	s := &session{conn: conn, ctx: ctx, idle: opts.IdleTimeout}
	s.br = bufio.NewReaderSize(readerFunc(s.read), chunk)
	res, err = s.take(w, opts)
	return res, ctxErr(ctx, err)
}

// ctxErr prefers the context's error, the reason a read failed once the
// connection was closed for it.
func ctxErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	// A read that timed out at the context's deadline may return before
	// the context says it ended.
	if end, ok := ctx.Deadline(); ok && !time.Now().Before(end) && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

func deadline(ctx context.Context, idle time.Duration) time.Time {
	d := time.Now().Add(idle)
	if end, ok := ctx.Deadline(); ok && end.Before(d) {
		return end
	}
	return d
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

type session struct {
	conn net.Conn
	br   *bufio.Reader
	ctx  context.Context
	idle time.Duration
}

// read reads from the connection, giving up after the idle timeout.
func (s *session) read(p []byte) (int, error) {
	if err := s.conn.SetReadDeadline(deadline(s.ctx, s.idle)); err != nil {
		return 0, err
	}
	return s.conn.Read(p)
}

// send writes a command as a RESP array.
func (s *session) send(args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := s.conn.SetWriteDeadline(deadline(s.ctx, s.idle)); err != nil {
		return err
	}
	_, err := io.WriteString(s.conn, b.String())
	return err
}

// line reads a reply line, skipping the empty ones a node sends to show it
// is alive while it prepares the snapshot.
func (s *session) line() (string, error) {
	for {
		l, err := s.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || len(l) > maxLine {
			return "", fmt.Errorf("%w: a reply line longer than %d bytes", ErrProtocol, maxLine)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if t := strings.TrimRight(string(l), "\r\n"); t != "" {
			return t, nil
		}
	}
}

// reply reads a status reply, turning an error reply into ErrRefused.
func (s *session) reply(what string) (string, error) {
	l, err := s.line()
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if strings.HasPrefix(l, "-") {
		return "", fmt.Errorf("%s: %w: %s", what, ErrRefused, l[1:])
	}
	return l, nil
}

func (s *session) take(w io.Writer, opts Options) (Result, error) {
	res := Result{Offset: -1}
	if opts.Username != "" || opts.Password != "" {
		args := []string{"AUTH", opts.Password}
		if opts.Username != "" {
			args = []string{"AUTH", opts.Username, opts.Password}
		}
		if err := s.send(args...); err != nil {
			return res, err
		}
		if _, err := s.reply("AUTH"); err != nil {
			return res, err
		}
	}
	// Announcing the end mark lets a node with repl-diskless-sync stream
	// without writing to its disk; an old node may refuse, and then sends
	// a length.
	if err := s.send("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return res, err
	}
	if _, err := s.reply("REPLCONF"); err != nil && !errors.Is(err, ErrRefused) {
		return res, err
	}
	// A snapshot is all a backup takes: rdb-only (Redis 7.0 and later, as
	// redis-cli --rdb asks) keeps the node from queueing its writes for
	// this connection meanwhile, which on a busy node would grow its memory
	// and end in the replica output buffer limit cutting the snapshot off.
	// An older node refuses it and queues them as for any replica.
	if err := s.send("REPLCONF", "rdb-only", "1"); err != nil {
		return res, err
	}
	if _, err := s.reply("REPLCONF"); err != nil && !errors.Is(err, ErrRefused) {
		return res, err
	}
	if err := s.send("PSYNC", "?", "-1"); err != nil {
		return res, err
	}
	l, err := s.reply("PSYNC")
	switch {
	case errors.Is(err, ErrRefused) && strings.Contains(strings.ToLower(err.Error()), "unknown command"):
		// A node without PSYNC: SYNC answers with the file directly.
		if err := s.send("SYNC"); err != nil {
			return res, err
		}
		if l, err = s.reply("SYNC"); err != nil {
			return res, err
		}
	case err != nil:
		return res, err
	case strings.HasPrefix(l, "+FULLRESYNC "):
		f := strings.Fields(l)
		if len(f) != 3 || len(f[1]) != 40 {
			return res, fmt.Errorf("%w: %q", ErrProtocol, l)
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return res, fmt.Errorf("%w: %q", ErrProtocol, l)
		}
		res.ReplID, res.Offset = f[1], off
		if l, err = s.reply("the snapshot's length"); err != nil {
			return res, err
		}
	default:
		return res, fmt.Errorf("%w: PSYNC answered %q", ErrProtocol, l)
	}
	if !strings.HasPrefix(l, "$") {
		return res, fmt.Errorf("%w: %q where the snapshot's length belongs", ErrProtocol, l)
	}
	if mark, ok := strings.CutPrefix(l, "$EOF:"); ok {
		if len(mark) != markLen {
			return res, fmt.Errorf("%w: end mark of %d bytes", ErrProtocol, len(mark))
		}
		res.Diskless = true
		res.Bytes, err = s.untilMark(w, []byte(mark), opts.MaxBytes)
		return res, err
	}
	n, err := strconv.ParseInt(l[1:], 10, 64)
	if err != nil || n < 0 {
		return res, fmt.Errorf("%w: snapshot length %q", ErrProtocol, l[1:])
	}
	if n > opts.MaxBytes {
		return res, fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, n, opts.MaxBytes)
	}
	copied, err := io.CopyBuffer(w, io.LimitReader(s.br, n), make([]byte, chunk))
	res.Bytes = copied
	if err == nil && copied < n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return res, fmt.Errorf("after %d of %d bytes: %w", copied, n, err)
	}
	return res, nil
}

// untilMark copies to w what precedes mark, holding back the bytes that
// may be the mark's beginning.
func (s *session) untilMark(w io.Writer, mark []byte, limit int64) (int64, error) {
	buf := make([]byte, chunk+markLen)
	held, total := 0, int64(0)
	for {
		n, err := s.br.Read(buf[held:])
		data := buf[:held+n]
		// The mark ends the transfer: the node sends nothing after it
		// until it is acknowledged, so only the end of what arrived is
		// compared, as a Redis replica does, not every position in it.
		if len(data) >= markLen && bytes.Equal(data[len(data)-markLen:], mark) {
			out := len(data) - markLen
			if total+int64(out) > limit {
				return total, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
			}
			_, werr := w.Write(data[:out])
			return total + int64(out), werr
		}
		if out := len(data) - markLen; out > 0 {
			if total+int64(out) > limit {
				return total, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
			}
			if _, werr := w.Write(data[:out]); werr != nil {
				return total, werr
			}
			total += int64(out)
			held = copy(buf, data[out:])
		} else {
			held = len(data)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return total, fmt.Errorf("after %d bytes, before the end mark: %w", total, err)
		}
	}
}
