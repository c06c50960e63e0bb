// Package redistest runs real redis-server processes in cluster mode for
// tests: each on a loopback address, with its cluster config and data in the
// test's temporary directory, killed when the test ends.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Binary is the redis-server executable looked up on PATH.
const Binary = "redis-server"

// Require skips the test when redis-server is not installed, except under
// CI (CI=true), where a missing redis-server is a broken setup and fails.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath(Binary); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not on PATH; CI must install it (Debian package redis-server)", Binary)
		}
		t.Skipf("%s is not on PATH; install the redis-server package to run this test", Binary)
	}
}

// Server is one redis-server process.
type Server struct {
	// Host is the IP address it listens on.
	Host string
	// Port is its client port; the cluster bus is Port+10000.
	Port int

	t    testing.TB
	dir  string
	conf string
	cmd  *exec.Cmd
	done chan struct{}
}

// Addr returns host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Start starts n servers on 127.0.0.1, each on a free port.
func Start(t testing.TB, n int) []*Server {
	t.Helper()
	Require(t)
	out := make([]*Server, n)
	for i := range out {
		out[i] = StartAt(t, "127.0.0.1", 0)
	}
	return out
}

// StartAt starts a server on host:port, or on a free port of host when port
// is 0. Its cluster config is <tmpdir>/nodes-<port>.conf.
func StartAt(t testing.TB, host string, port int) *Server {
	t.Helper()
	Require(t)
	s := &Server{Host: host, t: t, dir: t.TempDir()}
	s.start(port)
	t.Cleanup(s.Stop)
	return s
}

// start runs the process, retrying on another free port when the chosen
// one was taken meanwhile.
func (s *Server) start(port int) {
	s.t.Helper()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		p := port
		if p == 0 {
			var err error
			if p, err = freePort(s.Host); err != nil {
				s.t.Fatalf("finding a free port: %v", err)
			}
		}
		if s.conf == "" || port == 0 {
			s.conf = filepath.Join(s.dir, fmt.Sprintf("nodes-%d.conf", p))
		}
		s.Port = p
		if lastErr = s.run(); lastErr == nil {
			return
		}
		if port != 0 {
			break
		}
	}
	s.t.Fatalf("starting redis-server on %s: %v", s.Addr(), lastErr)
}

func (s *Server) run() error {
	log := filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.Port))
	cmd := exec.Command(Binary,
		"--bind", s.Host,
		"--port", strconv.Itoa(s.Port),
		"--cluster-enabled", "yes",
		"--cluster-config-file", s.conf,
		"--cluster-announce-ip", s.Host,
		"--cluster-node-timeout", "5000",
		"--save", "",
		"--appendonly", "no",
		"--repl-diskless-sync-delay", "0",
		"--dir", s.dir,
		"--logfile", log,
		"--protected-mode", "no",
	)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c := redis.NewClient(&redis.Options{
		Addr: s.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	// The client only pings; closing it releases its connections, and a
	// failure to do so changes nothing for the server.
	defer func() { _ = c.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			out, _ := os.ReadFile(log)
			return fmt.Errorf("redis-server exited: %s", out)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			s.cmd, s.done = cmd, done
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("no answer within 10s: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the process, as a crash would; it may be called more than once.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart stops the server and starts it again on port (a free one when 0)
// with the same cluster config, so it keeps its node ID: a pod that came
// back with a new address.
func (s *Server) Restart(port int) {
	s.t.Helper()
	s.Stop()
	old := s.conf
	raw, err := os.ReadFile(old)
	if err != nil {
		s.t.Fatalf("reading %s: %v", old, err)
	}
	if port == 0 {
		if port, err = freePort(s.Host); err != nil {
			s.t.Fatalf("finding a free port: %v", err)
		}
	}
	s.conf = filepath.Join(s.dir, fmt.Sprintf("nodes-%d.conf", port))
	if err := os.WriteFile(s.conf, raw, 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.start(port)
}

// Client returns a plain client of the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: s.Addr(), Protocol: 2, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// ClusterClient returns a cluster client seeded with servers, closed when
// the test ends. It follows MOVED and ASK redirections.
func ClusterClient(t testing.TB, servers ...*Server) *redis.ClusterClient {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr()
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: addrs, Protocol: 2, DisableIdentity: true, MaxRedirects: 16,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// freePort returns a port of host that is free, and whose cluster bus port
// (port+10000) is free too.
func freePort(host string) (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port+10000)))
		if err != nil {
			continue
		}
		_ = bus.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port pair on %s", host)
}
