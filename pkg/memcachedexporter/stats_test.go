package memcachedexporter

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestParseStats(t *testing.T) {
	small := Limits{Lines: 3, LineBytes: 32, ReplyBytes: 128}
	for _, tc := range []struct {
		name, reply string
		want        Stats
		err         error
	}{
		{"ok", "STAT pid 12\r\nSTAT version 1.6.21\r\nEND\r\n", Stats{"pid": "12", "version": "1.6.21"}, nil},
		{"bare newlines", "STAT a 1\nEND\n", Stats{"a": "1"}, nil},
		{"empty", "END\r\n", Stats{}, nil},
		{"lines at the bound", "STAT a 1\r\nSTAT b 2\r\nSTAT c 3\r\nEND\r\n", Stats{"a": "1", "b": "2", "c": "3"}, nil},
		{"too many lines", "STAT a 1\r\nSTAT b 2\r\nSTAT c 3\r\nSTAT d 4\r\nEND\r\n", nil, ErrTooLong},
		{"long line", "STAT a " + strings.Repeat("1", 40) + "\r\nEND\r\n", nil, ErrTooLong},
		{"no END", "STAT a 1\r\n", nil, ErrMalformed},
		{"error", "ERROR\r\n", nil, ErrMalformed},
		{"server error", "SERVER_ERROR out of memory\r\n", nil, ErrMalformed},
		{"not STAT", "VALUE k 0 1\r\nEND\r\n", nil, ErrMalformed},
		{"no value", "STAT a\r\nEND\r\n", nil, ErrMalformed},
		{"empty value", "STAT a \r\nEND\r\n", nil, ErrMalformed},
		{"blank in value", "STAT a 1 2\r\nEND\r\n", nil, ErrMalformed},
		{"control byte", "STAT a 1\x1b\r\nEND\r\n", nil, ErrMalformed},
		{"upper-case name", "STAT A 1\r\nEND\r\n", nil, ErrMalformed},
		{"twice", "STAT a 1\r\nSTAT a 2\r\nEND\r\n", nil, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStats(strings.NewReader(tc.reply), small)
			if !errors.Is(err, tc.err) || tc.err == nil && err != nil {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if tc.err == nil && !equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReplyBytes: a reply of short, valid lines stops at the reply's byte
// bound, whatever the line bound.
func TestReplyBytes(t *testing.T) {
	var reply strings.Builder
	for i := range 20 {
		fmt.Fprintf(&reply, "STAT s%d 1\r\n", i)
	}
	reply.WriteString("END\r\n")
	_, err := ParseStats(strings.NewReader(reply.String()), Limits{Lines: 100, LineBytes: 32, ReplyBytes: 64})
	if !errors.Is(err, ErrTooLong) {
		t.Fatalf("error %v, want ErrTooLong", err)
	}
	if _, err := ParseStats(strings.NewReader(reply.String()), Limits{Lines: 100, LineBytes: 32, ReplyBytes: 1024}); err != nil {
		t.Fatalf("the same reply within bounds: %v", err)
	}
}

func equal(a, b Stats) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// endless is a reply of distinct statistics that never ends, counting
// what is read from it.
type endless struct {
	read, lines int
	pending     []byte
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.pending) == 0 {
			e.pending = fmt.Appendf(nil, "STAT s%d 1\r\n", e.lines)
			e.lines++
		}
		c := copy(p[n:], e.pending)
		e.pending = e.pending[c:]
		n += c
	}
	e.read += n
	return n, nil
}

// TestEndlessReplyIsCutOff: a reply that never ends is read no further
// than the reply's byte bound, whichever bound stops it.
func TestEndlessReplyIsCutOff(t *testing.T) {
	for _, limits := range []Limits{DefaultLimits, {Lines: 1 << 20, LineBytes: 64, ReplyBytes: 4096}} {
		r := &endless{}
		_, err := ParseStats(r, limits)
		if !errors.Is(err, ErrTooLong) {
			t.Fatalf("error %v, want ErrTooLong", err)
		}
		if r.read > limits.ReplyBytes {
			t.Fatalf("read %d bytes of an endless reply, bound %d", r.read, limits.ReplyBytes)
		}
	}
}

// fakeServer answers every connection with reply, repeated forever when
// endless, and counts the bytes the peer took.
func fakeServer(t *testing.T, reply string, endless bool) (addr string, written func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	total := make(chan int, 100)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = conn.Close() }()
				buf := make([]byte, 64)
				if _, err := conn.Read(buf); err != nil {
					return
				}
				n := 0
				for {
					_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
					w, err := io.WriteString(conn, reply)
					n += w
					if err != nil || !endless {
						break
					}
				}
				if !endless {
					time.Sleep(10 * time.Second) // never END: the read deadline must end it
				}
				total <- n
			}()
		}
	}()
	return ln.Addr().String(), func() int { return <-total }
}

func TestCollectorBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reply   string
		endless bool
	}{
		{"endless lines", "STAT curr_items 1\r\n", true},
		{"one endless line", "STAT curr_items 1111111111", true},
		{"endless distinct bytes", strings.Repeat("x", 4096), true},
		{"silent after a line", "STAT curr_items 1\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, written := fakeServer(t, tc.reply, tc.endless)
			col := NewCollector(addr, 500*time.Millisecond, slog.New(slog.DiscardHandler))
			start := time.Now()
			if n := testutil.CollectAndCount(col); n != 1 {
				t.Errorf("%d metrics, want memcached_up alone", n)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("the scrape took %v, timeout 500ms", took)
			}
			if up := value(t, col, "memcached_up"); up != 0 {
				t.Errorf("memcached_up = %v", up)
			}
			if tc.endless {
				// The server's writes stop once the exporter closed the
				// connection: what it wrote is the bound plus the sockets'
				// buffers, not an ever-growing reply.
				if n := written(); n > 16<<20 {
					t.Errorf("the server wrote %d bytes before the exporter hung up", n)
				}
			}
		})
	}
}

func TestConvertRejectsNonNumbers(t *testing.T) {
	for _, s := range []Stats{
		{"curr_items": "-1"},
		{"curr_items": "1e9"},
		{"cmd_set": "x"},
		{"version": strings.Repeat("1", 40)},
		{"version": "1.6\"}"},
	} {
		if _, err := convert(s, Stats{}, Stats{}); !errors.Is(err, ErrMalformed) {
			t.Errorf("convert(%v): %v, want ErrMalformed", s, err)
		}
	}
	if _, err := convert(Stats{}, Stats{"maxconns": "many"}, Stats{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("maxconns many: %v", err)
	}
	if _, err := convert(Stats{}, Stats{}, Stats{"total_malloced": "-"}); !errors.Is(err, ErrMalformed) {
		t.Errorf("total_malloced -: %v", err)
	}
}

// FuzzParseStats: whatever a server sends, the parser returns within its
// bounds, and what it accepts has only bounded, well-formed names and
// values, which convert turns into metrics or an error without panicking.
func FuzzParseStats(f *testing.F) {
	for _, seed := range []string{
		"STAT pid 1\r\nSTAT version 1.6.21\r\nSTAT cmd_set 3\r\nSTAT cas_hits 1\r\nEND\r\n",
		"END\r\n", "ERROR\r\n", "STAT a\r\n", "STAT curr_items 18446744073709551615\r\nEND\r\n",
	} {
		f.Add([]byte(seed))
	}
	limits := Limits{Lines: 16, LineBytes: 64, ReplyBytes: 512}
	f.Fuzz(func(t *testing.T, reply []byte) {
		stats, err := ParseStats(strings.NewReader(string(reply)), limits)
		if err != nil {
			return
		}
		if len(stats) > limits.Lines {
			t.Fatalf("%d statistics, bound %d", len(stats), limits.Lines)
		}
		for k, v := range stats {
			if len(k)+len(v) > limits.LineBytes || strings.ContainsAny(k+v, " \r\n\t") {
				t.Fatalf("accepted %q = %q", k, v)
			}
		}
		_, _ = convert(stats, stats, stats)
	})
}
