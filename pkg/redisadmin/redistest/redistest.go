// Package redistest runs real redis-server processes in cluster mode for
// tests: each on a loopback address, with its cluster config and data in the
// test's temporary directory, killed when the test ends.
package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Binary is the redis-server executable looked up on PATH.
const Binary = "redis-server"

// Require skips the test when redis-server is not installed, except under
// CI (CI=true) or `make test` once it has installed every package
// (REQUIRE_TEST_DEPS=1), where a missing redis-server is a broken setup and
// fails.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath(Binary); err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("REQUIRE_TEST_DEPS") == "1" {
			t.Fatalf("%s is not on PATH; CI must install it (Debian package redis-server)", Binary)
		}
		t.Skipf("%s is not on PATH; install the redis-server package to run this test", Binary)
	}
}

// Options configure a server beyond the cluster-mode defaults.
type Options struct {
	// Config is redis.conf text, such as the users and masterauth, that the
	// server reads from a file at start, as a pod reads its mounted Secret.
	Config string
	// Password is the default user's password, with which Client and
	// ClusterClient authenticate.
	Password string
	// TLS, when set, makes the server serve TLS only, on the client port,
	// the cluster bus and replication, with this certificate.
	TLS *Certificate
	// BusTLS, when set without TLS, keeps the client port plain and makes
	// the cluster bus and replication speak TLS with this certificate,
	// requiring one its CA signed from every peer, as a RedisCluster's
	// node without spec.tls does. The bus stays at Port+10000.
	BusTLS *Certificate
	// BusTLSPort is the TLS port with BusTLS; a free one when 0.
	BusTLSPort int
	// Args are more command-line arguments, such as --maxmemory-policy lru.
	Args []string
	// Persist keeps the data across Restart, as a pod's volume does: every
	// write goes to the append-only file before it is acknowledged.
	Persist bool
}

// Server is one redis-server process.
type Server struct {
	// Host is the IP address it listens on.
	Host string
	// Port is its client port; the cluster bus is Port+10000.
	Port int
	// TLSPort is the port its peers replicate from with Options.BusTLS.
	TLSPort int
	// Options are what it was started with; Restart applies changes.
	Options Options

	t    testing.TB
	dir  string
	conf string
	cmd  *exec.Cmd
	done chan struct{}

	// polling is PollingClient's client, and pollingKey what it connects
	// with.
	pollingMu  sync.Mutex
	polling    *redis.Client
	pollingKey string
}

// TLSDir is where the server reads tls.crt, tls.key and ca.crt, the
// layout of a mounted cert-manager Secret.
func (s *Server) TLSDir() string { return filepath.Join(s.dir, "tls") }

// BusTLSDir is where the server reads Options.BusTLS.
func (s *Server) BusTLSDir() string { return filepath.Join(s.dir, "bus") }

// ConfigFile is the file with Options.Config.
func (s *Server) ConfigFile() string { return filepath.Join(s.dir, "access.conf") }

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
	return StartWith(t, host, port, Options{})
}

// StartWith is StartAt with options.
func StartWith(t testing.TB, host string, port int, opts Options) *Server {
	t.Helper()
	Require(t)
	s := &Server{Host: host, Options: opts, t: t, dir: t.TempDir()}
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
		if s.TLSPort = s.Options.BusTLSPort; s.Options.BusTLS != nil && s.TLSPort == 0 {
			var err error
			if s.TLSPort, err = freePort(s.Host); err != nil {
				s.t.Fatalf("finding a free port: %v", err)
			}
		}
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
	if err := os.WriteFile(s.ConfigFile(), []byte(s.Options.Config), 0o600); err != nil {
		return err
	}
	plainPort := strconv.Itoa(s.Port)
	if s.Options.TLS != nil {
		plainPort = "0" // none: the port speaks TLS
	}
	args := []string{s.ConfigFile(),
		"--bind", s.Host,
		"--port", plainPort,
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
	}
	if s.Options.Persist {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	}
	switch {
	case s.Options.TLS != nil:
		tls, err := tlsArgs(*s.Options.TLS, s.TLSDir(), s.Port, "optional")
		if err != nil {
			return err
		}
		args = append(args, tls...)
	case s.Options.BusTLS != nil:
		tls, err := tlsArgs(*s.Options.BusTLS, s.BusTLSDir(), s.TLSPort, "yes")
		if err != nil {
			return err
		}
		// With a TLS bus the bus port would follow the TLS port.
		args = append(args, append(tls, "--cluster-port", strconv.Itoa(s.Port+10000))...)
	}
	cmd := exec.Command(Binary, append(args, s.Options.Args...)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c := redis.NewClient(&redis.Options{
		Addr: s.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		TLSConfig:                s.tlsConfig(),
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
		// NOAUTH is an answer too: the server is up and wants a password.
		var answer redis.Error
		if err == nil || errors.As(err, &answer) {
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

// tlsArgs write cert into dir and make the bus and replication speak TLS
// with it, with the TLS port port and tls-auth-clients authClients.
func tlsArgs(cert Certificate, dir string, port int, authClients string) ([]string, error) {
	if err := cert.WriteFiles(dir); err != nil {
		return nil, err
	}
	return []string{"--tls-port", strconv.Itoa(port),
		"--tls-cluster", "yes", "--tls-replication", "yes", "--tls-auth-clients", authClients,
		"--tls-cert-file", filepath.Join(dir, "tls.crt"),
		"--tls-key-file", filepath.Join(dir, "tls.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt")}, nil
}

// Log returns what the server logged, for a failing test to show.
func (s *Server) Log() string {
	raw, _ := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.Port)))
	return string(raw)
}

// PID is the process's ID, to tell a restart from a reload.
func (s *Server) PID() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
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

// tlsConfig trusts the server's CA, or is nil without TLS.
func (s *Server) tlsConfig() *tls.Config {
	if s.Options.TLS == nil {
		return nil
	}
	return s.Options.TLS.ClientConfig()
}

// PollingClient returns Client's client, made again only when the address
// or the password changed: for loops that read the server's state many
// times, where a client per call would hold a connection each until the
// test ends. Its connection may outlive a change of the server's
// passwords, so it cannot tell whether a password is accepted.
func (s *Server) PollingClient() *redis.Client {
	key := s.Addr() + "\x00" + s.Options.Password
	s.pollingMu.Lock()
	defer s.pollingMu.Unlock()
	if s.polling == nil || s.pollingKey != key {
		if s.polling != nil {
			_ = s.polling.Close()
		}
		s.polling, s.pollingKey = s.Client(), key
	}
	return s.polling
}

// Client returns a client of the server that logs in as the default user
// with Options.Password (and speaks TLS when the server does), closed when
// the test ends.
func (s *Server) Client() *redis.Client {
	return s.ClientAs("", s.Options.Password)
}

// ClientAs returns a client that logs in as username with password (the
// default user without a password when both are empty).
func (s *Server) ClientAs(username, password string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: s.Addr(), Protocol: 2, DisableIdentity: true,
		Username: username, Password: password, TLSConfig: s.tlsConfig(),
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// ClusterClient returns a cluster client seeded with servers, logged in
// with the first server's Options.Password, closed when the test ends. It
// follows MOVED and ASK redirections.
func ClusterClient(t testing.TB, servers ...*Server) *redis.ClusterClient {
	return ClusterClientWith(t, redis.ClusterOptions{Password: servers[0].Options.Password}, servers...)
}

// ClusterClientWith is ClusterClient with other options; their Addrs are
// the servers', and TLS follows the first server's.
func ClusterClientWith(t testing.TB, o redis.ClusterOptions, servers ...*Server) *redis.ClusterClient {
	for _, s := range servers {
		o.Addrs = append(o.Addrs, s.Addr())
	}
	o.Protocol, o.DisableIdentity = 2, true
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 16
	}
	if o.TLSConfig == nil {
		o.TLSConfig = servers[0].tlsConfig()
	}
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	c := redis.NewClusterClient(&o)
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
