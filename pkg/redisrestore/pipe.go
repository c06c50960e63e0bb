package redisrestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// replyBuffer is the reader's buffer, which also bounds a reply line: the
// master may be a tenant's process.
const replyBuffer = 64 << 10

// pipe is one master's connection. A writer sends batch after batch while
// a reader takes their replies, as redis-cli --pipe does, so that the
// master always has commands to read and never waits for a round trip.
type pipe struct {
	// i is the pipe's index in restorer.pipes.
	i    int
	addr string
	conn net.Conn
	br   *bufio.Reader
	// stop undoes the context's hook that closes conn.
	stop                      func() bool
	readTimeout, writeTimeout time.Duration
	// batches are full batches from the files, sent the written ones
	// waiting for their replies: its capacity bounds what is unanswered.
	batches, sent chan *batch
}

// dial opens a pipe to the master client reaches, with its dialer (and
// so its TLS) and its credentials.
func dial(ctx context.Context, client *redis.Client, i, inFlight int) (*pipe, error) {
	o := client.Options()
	conn, err := o.Dialer(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", o.Addr, err)
	}
	p := &pipe{
		i: i, addr: o.Addr, conn: conn, br: bufio.NewReaderSize(conn, replyBuffer),
		readTimeout: o.ReadTimeout, writeTimeout: o.WriteTimeout,
		batches: make(chan *batch), sent: make(chan *batch, inFlight-1),
	}
	// Closing the connection is how the context's end interrupts a read
	// or a write.
	p.stop = context.AfterFunc(ctx, func() { _ = conn.Close() })
	if err := p.auth(ctx, o); err != nil {
		p.close()
		return nil, fmt.Errorf("AUTH on %s: %w", o.Addr, err)
	}
	return p, nil
}

func (p *pipe) close() {
	p.stop()
	_ = p.conn.Close()
}

// auth logs in as the client does, when it has credentials.
func (p *pipe) auth(ctx context.Context, o *redis.Options) error {
	user, pass := o.Username, o.Password
	switch {
	case o.StreamingCredentialsProvider != nil:
		return errors.New("a streaming credentials provider is not supported; give the client a username and password")
	case o.CredentialsProviderContext != nil:
		var err error
		if user, pass, err = o.CredentialsProviderContext(ctx); err != nil {
			return err
		}
	case o.CredentialsProvider != nil:
		user, pass = o.CredentialsProvider()
	}
	if pass == "" {
		return nil
	}
	if user == "" {
		// As go-redis logs in: the default user accepts any password
		// when it has none.
		user = "default"
	}
	var b batch
	b.buf = append(b.buf, "*3\r\n$4\r\nAUTH\r\n"...)
	b.bulk([]byte(user))
	b.bulk([]byte(pass))
	if err := p.write(b.buf); err != nil {
		return err
	}
	p.deadline()
	return p.reply()
}

// write writes a batch's commands.
func (p *pipe) write(buf []byte) error {
	if p.writeTimeout > 0 {
		if err := p.conn.SetWriteDeadline(time.Now().Add(p.writeTimeout)); err != nil {
			return err
		}
	}
	_, err := p.conn.Write(buf)
	return err
}

// deadline gives the replies that follow the client's read timeout.
func (p *pipe) deadline() {
	if p.readTimeout > 0 {
		_ = p.conn.SetReadDeadline(time.Now().Add(p.readTimeout))
	}
}

// replyError is an error reply, such as OOM or MOVED.
type replyError string

func (e replyError) Error() string { return string(e) }

// redirect tells a key that another master serves now.
func (e replyError) redirect() bool {
	return strings.HasPrefix(string(e), "MOVED ") || strings.HasPrefix(string(e), "ASK ")
}

// reply reads a status reply: nil for +OK, a replyError for an error.
func (p *pipe) reply() error {
	line, err := p.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("a reply longer than %d bytes", replyBuffer)
	}
	if err != nil {
		return err
	}
	switch line[0] {
	case '+':
		return nil
	case '-':
		return replyError(strings.TrimRight(string(line[1:]), "\r\n"))
	}
	return fmt.Errorf("a reply that is no status: %q", line[:min(len(line), 64)])
}

// write sends p's batches until the files are read or the restore
// failed.
func (r *restorer) write(ctx context.Context, p *pipe) {
	defer close(p.sent)
	for b := range p.batches {
		if err := p.write(b.buf); err != nil {
			r.fail(fmt.Errorf("RESTORE on %s: %w", p.addr, err))
			return
		}
		select {
		case p.sent <- b:
		case <-ctx.Done():
			return
		}
	}
}

// read checks the replies of p's batches. A key whose slot moved since
// the cluster client read the layout is sent again through the cluster
// client, which follows the redirect.
func (r *restorer) read(ctx context.Context, p *pipe) {
	for b := range p.sent {
		p.deadline()
		for i := range b.cmds {
			err := p.reply()
			if re, ok := err.(replyError); ok && re.redirect() {
				err = r.c.Do(ctx, b.args(i)...).Err()
			}
			if err != nil {
				r.fail(fmt.Errorf("RESTORE on %s: %w", p.addr, err))
				return
			}
		}
		r.restored.Add(int64(len(b.cmds)))
		r.recycle(b)
	}
}
