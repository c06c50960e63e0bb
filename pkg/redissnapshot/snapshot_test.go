package redissnapshot_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/rdb/rdbtest"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/pkg/redissnapshot"
)

// take snapshots s and checks the result names the state s is in.
func take(t *testing.T, s *redistest.Server, opts redissnapshot.Options) ([]byte, redissnapshot.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var buf bytes.Buffer
	res, err := redissnapshot.Take(ctx, s.Addr(), &buf, opts)
	if err != nil {
		t.Fatalf("snapshot of %s: %v\n%s", s.Addr(), err, s.Log())
	}
	if res.Bytes != int64(buf.Len()) {
		t.Errorf("result says %d bytes, %d written", res.Bytes, buf.Len())
	}
	info := rdbtest.Client(t, s, 0).Info(ctx, "replication").Val()
	if !strings.Contains(info, "master_replid:"+res.ReplID+"\r\n") || res.Offset < 0 {
		t.Errorf("replication ID %q offset %d, not the node's:\n%s", res.ReplID, res.Offset, info)
	}
	// The snapshot's connection is gone: the node has no replica left.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info := rdbtest.Client(t, s, 0).Info(ctx, "replication").Val()
		if strings.Contains(info, "connected_slaves:0\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node still has a replica after the snapshot:\n%s", info)
		}
	}
	return buf.Bytes(), res
}

// TestSyncFallback takes a snapshot from a node without PSYNC, which
// answers SYNC with the file and no replication ID (and refuses rdb-only).
func TestSyncFallback(t *testing.T) {
	addr := fakeNode(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "+OK\r\n-ERR Unrecognized REPLCONF option: rdb-only\r\n-ERR unknown command 'PSYNC'\r\n\n\n$9\r\nREDIS0010+FULLRESYNC")
		time.Sleep(10 * time.Second)
	})
	var buf bytes.Buffer
	res, err := redissnapshot.Take(context.Background(), addr, &buf, redissnapshot.Options{IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != "REDIS0010" || res != (redissnapshot.Result{Offset: -1, Bytes: 9}) {
		t.Errorf("%q, %+v", buf.String(), res)
	}
}

// TestEndMarkInPieces takes a diskless snapshot whose end mark arrives in
// two parts, the first with the file's last bytes: the file ends where the
// whole mark does, and nothing of the mark is in it.
func TestEndMarkInPieces(t *testing.T) {
	mark := strings.Repeat("0123456789", 4)
	addr := fakeNode(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "+OK\r\n+OK\r\n+FULLRESYNC "+replID+" 7\r\n$EOF:"+mark+"\r\nREDIS0010"+mark[:15])
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(c, mark[15:])
		time.Sleep(10 * time.Second)
	})
	var buf bytes.Buffer
	res, err := redissnapshot.Take(context.Background(), addr, &buf, redissnapshot.Options{IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != "REDIS0010" || res.Bytes != 9 || !res.Diskless {
		t.Errorf("%q, %+v", buf.String(), res)
	}
}

// TestSnapshotHoldsEveryKey takes snapshots streamed (diskless) and written
// to disk first, over TLS too, and loads each into an empty server: it
// holds every key, value, expiry and function of the node.
func TestSnapshotHoldsEveryKey(t *testing.T) {
	cert := redistest.NewCA(t).Issue(t)
	for _, tc := range []struct {
		name     string
		opts     redistest.Options
		diskless bool
	}{
		{"diskless", redistest.Options{Args: []string{"--repl-diskless-sync", "yes"}}, true},
		{"disk", redistest.Options{Args: []string{"--repl-diskless-sync", "no"}}, false},
		{"TLS", redistest.Options{TLS: &cert}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := rdbtest.Start(t, tc.opts), rdbtest.Start(t, redistest.Options{})
			rdbtest.Fill(t, from)
			var opts redissnapshot.Options
			if tc.opts.TLS != nil {
				opts.TLS = tc.opts.TLS.ClientConfig()
			}
			file, res := take(t, from, opts)
			if res.Diskless != tc.diskless {
				t.Errorf("diskless %v, want %v", res.Diskless, tc.diskless)
			}
			if _, err := rdbtest.Restore(t, bytes.NewReader(file), to); err != nil {
				t.Fatal(err)
			}
			rdbtest.ExpectSame(t, from, to)
		})
	}
}

// TestSnapshotOfAReplica takes the snapshot from a replica, as a backup
// does to spare the master: it holds the master's keys.
func TestSnapshotOfAReplica(t *testing.T) {
	master, replica := rdbtest.Start(t, redistest.Options{}), rdbtest.Start(t, redistest.Options{})
	rdbtest.Fill(t, master)
	ctx := context.Background()
	c := rdbtest.Client(t, replica, 0)
	if err := c.Do(ctx, "REPLICAOF", master.Host, master.Port).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(c.Info(ctx, "replication").Val(), "master_link_status:up"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not catch up:\n%s", replica.Log())
		}
	}
	file, _ := take(t, replica, redissnapshot.Options{})
	to := rdbtest.Start(t, redistest.Options{})
	if _, err := rdbtest.Restore(t, bytes.NewReader(file), to); err != nil {
		t.Fatal(err)
	}
	rdbtest.ExpectSame(t, master, to)
}

// TestSnapshotAuthenticates takes a snapshot as an ACL user allowed only
// the replication commands, and is refused with a wrong password or a user
// without them.
func TestSnapshotAuthenticates(t *testing.T) {
	s := rdbtest.Start(t, redistest.Options{Password: "admin-pw", Config: "requirepass admin-pw\n" +
		"user backup on >backup-pw +psync +sync +replconf\n" +
		"user reader on >reader-pw +@read\n"})
	rdbtest.Fill(t, s)
	file, _ := take(t, s, redissnapshot.Options{Username: "backup", Password: "backup-pw"})
	if n, err := rdbtest.Restore(t, bytes.NewReader(file), rdbtest.Start(t, redistest.Options{})); err != nil || n == 0 {
		t.Errorf("restoring the snapshot: %d keys, %v", n, err)
	}
	for _, opts := range []redissnapshot.Options{
		{Username: "backup", Password: "wrong"},
		{Username: "reader", Password: "reader-pw"},
		{},
	} {
		_, err := redissnapshot.Take(context.Background(), s.Addr(), io.Discard, opts)
		if !errors.Is(err, redissnapshot.ErrRefused) {
			t.Errorf("as %q: %v, want ErrRefused", opts.Username, err)
		}
	}
}

// fakeNode serves each connection with serve, after draining what the
// client sends: a node that speaks the protocol badly.
func fakeNode(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }()
			go func() { defer func() { _ = c.Close() }(); serve(c) }()
		}
	}()
	return l.Addr().String()
}

const replID = "0123456789012345678901234567890123456789"

// TestHostileNodes checks that a node that never ends, lies about lengths,
// sends garbage or stalls ends the snapshot with an error within the
// limits.
func TestHostileNodes(t *testing.T) {
	preamble := "+OK\r\n+OK\r\n+FULLRESYNC " + replID + " 7\r\n"
	forever := func(head, unit string) func(net.Conn) {
		return func(c net.Conn) {
			if _, err := io.WriteString(c, head); err != nil {
				return
			}
			for {
				if _, err := io.WriteString(c, unit); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	send := func(s string) func(net.Conn) {
		return func(c net.Conn) {
			_, _ = io.WriteString(c, s)
			time.Sleep(10 * time.Second) // then stall
		}
	}
	for _, tc := range []struct {
		name  string
		serve func(net.Conn)
		want  error
	}{
		{"keepalives forever", forever(preamble, "\n"), context.DeadlineExceeded},
		{"endless diskless file", forever(preamble+"$EOF:"+strings.Repeat("m", 40)+"\r\n", strings.Repeat("x", 4096)), redissnapshot.ErrTooLarge},
		{"huge length", send(preamble + "$99999999999999\r\n"), redissnapshot.ErrTooLarge},
		{"endless line", forever("", strings.Repeat("garbage", 1000)), redissnapshot.ErrProtocol},
		{"garbage reply", send("+OK\r\n+OK\r\n:12\r\n"), redissnapshot.ErrProtocol},
		{"bad FULLRESYNC", send("+OK\r\n+OK\r\n+FULLRESYNC x y\r\n"), redissnapshot.ErrProtocol},
		{"short end mark", send(preamble + "$EOF:abc\r\n"), redissnapshot.ErrProtocol},
		{"stall mid-transfer", send(preamble + "$1000\r\nREDIS0010"), os.ErrDeadlineExceeded},
		{"stall before the mark", send(preamble + "$EOF:" + replID + "\r\nREDIS0010"), os.ErrDeadlineExceeded},
		{"hang up mid-transfer", func(c net.Conn) {
			_, _ = io.WriteString(c, preamble+"$1000\r\nREDIS0010")
			time.Sleep(100 * time.Millisecond) // for the commands to arrive
		}, io.ErrUnexpectedEOF},
		{"silent", func(net.Conn) { time.Sleep(10 * time.Second) }, os.ErrDeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeNode(t, tc.serve)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			_, err := redissnapshot.Take(ctx, addr, io.Discard, redissnapshot.Options{IdleTimeout: 300 * time.Millisecond, MaxBytes: 1 << 20})
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestSnapshotStreamsInFixedMemory streams a snapshot of many keys through
// the parser: what the process allocates stays far below the file's size.
func TestSnapshotStreamsInFixedMemory(t *testing.T) {
	s := rdbtest.Start(t, redistest.Options{Args: []string{"--enable-debug-command", "yes", "--rdbcompression", "no"}})
	ctx := context.Background()
	const keys = 200000
	if err := rdbtest.Client(t, s, 0).Do(ctx, "DEBUG", "POPULATE", keys, "key", 100).Err(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	pr, pw := io.Pipe()
	var res redissnapshot.Result
	done := make(chan error, 1)
	go func() {
		var err error
		res, err = redissnapshot.Take(ctx, s.Addr(), pw, redissnapshot.Options{})
		pw.CloseWithError(err)
		done <- err
	}()
	n := 0
	if err := rdb.NewParser(pr, rdb.Options{}).Each(func(e rdb.Entry) error {
		if _, ok := e.(*rdb.Key); ok {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n != keys {
		t.Errorf("%d keys, want %d", n, keys)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes of snapshot, %d allocated", res.Bytes, allocated)
	if res.Bytes < 16<<20 || allocated > 8<<20 {
		t.Errorf("allocated %d bytes for a snapshot of %d", allocated, res.Bytes)
	}
}

// TestWritesDuringASnapshotAreNotQueuedForIt writes to a node while its
// snapshot is held up: asked for the snapshot only (rdb-only), the node
// queues none of those writes for the connection, so a busy node's memory
// does not grow with a slow backup.
func TestWritesDuringASnapshotAreNotQueuedForIt(t *testing.T) {
	s := rdbtest.Start(t, redistest.Options{Args: []string{"--enable-debug-command", "yes"}})
	c := rdbtest.Client(t, s, 0)
	ctx := context.Background()
	if err := c.Do(ctx, "DEBUG", "POPULATE", 50000, "key", 100).Err(); err != nil {
		t.Fatal(err)
	}
	held := &heldWriter{release: make(chan struct{}), first: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := redissnapshot.Take(ctx, s.Addr(), held, redissnapshot.Options{})
		done <- err
	}()
	<-held.first
	value := strings.Repeat("v", 64<<10)
	for i := range 200 {
		if err := c.Set(ctx, "written-meanwhile-"+strconv.Itoa(i), value, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	info := c.Info(ctx, "memory").Val()
	close(held.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	queued := infoField(t, info, "mem_clients_slaves")
	t.Logf("mem_clients_slaves %d with 12.5 MiB written during the snapshot", queued)
	if queued > 4<<20 {
		t.Errorf("the node queued %d bytes for the snapshot's connection", queued)
	}
}

// heldWriter blocks its writes, after the first, until release.
type heldWriter struct {
	release, first chan struct{}
	n              int
}

func (h *heldWriter) Write(p []byte) (int, error) {
	if h.n++; h.n == 1 {
		close(h.first)
	} else {
		<-h.release
	}
	return len(p), nil
}

// infoField is an integer field of an INFO reply.
func infoField(t *testing.T, info, name string) int64 {
	t.Helper()
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in INFO:\n%s", name, info)
	return 0
}
