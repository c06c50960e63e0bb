// Package s3server runs a real S3-compatible store for tests: SeaweedFS's
// weed server, built by make tools into bin/, on free loopback ports with
// its data in the test's temporary directory, one bucket created and one
// access key allowed, killed when the test ends.
package s3server

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
	"github.com/multi-operator/multi-operator/pkg/objectstore"
	"github.com/multi-operator/multi-operator/pkg/pki"
)

const (
	// BinaryEnv names the weed binary when set; the Makefile exports it.
	BinaryEnv = "SEAWEEDFS"
	// Region is the region the store answers for.
	Region = "us-east-1"
	// readyWithin bounds how long the store may take to serve S3 requests.
	readyWithin = 90 * time.Second
	// portsNeeded: master, volume, filer and S3, each with its gRPC port.
	portsNeeded = 8
)

// Options configure a server.
type Options struct {
	// TLS makes the S3 endpoint serve HTTPS only, with a certificate for
	// localhost from a CA made for the test (Server.CA).
	TLS bool
	// Bucket is the bucket to create; "backups" when empty.
	Bucket string
	// Host is the IP address the store listens on; loopback when empty.
	// The e2e suite gives the real node's address on its bridge, so that
	// pods reach the store and its traffic still never leaves the machine.
	Host string
}

// Server is one running SeaweedFS with its S3 gateway.
type Server struct {
	// Endpoint is the S3 gateway's host:port on loopback.
	Endpoint string
	// Bucket exists and is empty at start.
	Bucket string
	// AccessKey and SecretKey are the one identity the store accepts.
	AccessKey, SecretKey string
	// CA is the PEM CA certificate that signed the endpoint's certificate
	// with Options.TLS, else nil.
	CA []byte
	// TLS says the endpoint speaks HTTPS.
	TLS bool

	dir   string
	ip    string
	ports []int
	cmd   *exec.Cmd
	done  chan struct{}
	stop  sync.Once
}

// Start runs a server for the test and waits until its bucket exists.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	weed := reporoottest.RequireToolBinary(t, root, BinaryEnv, "seaweedfs", "weed")
	s := &Server{Bucket: opts.Bucket, AccessKey: "backup-writer", SecretKey: "s3cr3t-" + strconv.FormatInt(time.Now().UnixNano(), 36), TLS: opts.TLS, dir: tempDir(t), ip: opts.Host}
	if s.Bucket == "" {
		s.Bucket = "backups"
	}
	if s.ip == "" {
		s.ip = "127.0.0.1"
	} else if net.ParseIP(s.ip) == nil {
		t.Fatalf("s3server: Host %q is not an IP address", s.ip)
	}
	args, err := s.prepare()
	if err != nil {
		t.Fatalf("preparing SeaweedFS: %v", err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		ports, err := freePorts(s.ip, portsNeeded)
		if err != nil {
			t.Fatalf("finding free ports: %v", err)
		}
		s.ports = ports
		if lastErr = s.run(weed, append(args, portArgs(ports)...)); lastErr != nil {
			continue
		}
		s.Endpoint = net.JoinHostPort(s.host(), strconv.Itoa(ports[6]))
		if lastErr = s.waitReady(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
		s.Stop()
		s.stop = sync.Once{}
	}
	t.Fatalf("starting SeaweedFS: %v\n%s", lastErr, s.logTail())
	return nil
}

// tempDir is a fresh directory for the store, removed after the test. Not
// t.TempDir: its name follows the test's, and weed splits its -dir and
// -mdir flags at commas, which a subtest's name may hold.
func tempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "s3server-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// host is the endpoint's host: on loopback with TLS, localhost, which the
// certificate names; else the address (which it names too).
func (s *Server) host() string {
	if s.TLS && s.ip == "127.0.0.1" {
		return "localhost"
	}
	return s.ip
}

// prepare writes the identities (and the certificate) and returns the
// arguments apart from the ports.
func (s *Server) prepare() ([]string, error) {
	identities := map[string]any{"identities": []map[string]any{{
		"name":        "backup-writer",
		"credentials": []map[string]string{{"accessKey": s.AccessKey, "secretKey": s.SecretKey}},
		"actions":     []string{"Admin", "Read", "Write", "List", "Tagging"},
	}}}
	raw, err := json.Marshal(identities)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(s.dir, "s3.json")
	if err := os.WriteFile(conf, raw, 0o600); err != nil {
		return nil, err
	}
	data, logs := filepath.Join(s.dir, "data"), filepath.Join(s.dir, "logs")
	for _, d := range []string{data, logs} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	// -logdir keeps glog's files out of the system temp folder; telemetry
	// off, so that nothing leaves the machine.
	args := []string{"-logdir=" + logs, "server",
		"-dir=" + data, "-ip=" + s.ip, "-ip.bind=" + s.ip,
		"-master.telemetry=false", "-master.volumeSizeLimitMB=512", "-volume.max=16",
		"-s3", "-s3.config=" + conf, "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.autoCreateBucket=false", "-s3.iam=false"}
	if s.TLS {
		now := time.Now()
		ca, err := pki.NewCA("s3server test CA", now, 24*time.Hour)
		if err != nil {
			return nil, err
		}
		leaf, err := pki.Sign(ca, pki.Leaf{CommonName: "localhost", DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP(s.ip)},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, now, 24*time.Hour)
		if err != nil {
			return nil, err
		}
		crt, key := filepath.Join(s.dir, "tls.crt"), filepath.Join(s.dir, "tls.key")
		if err := os.WriteFile(crt, leaf.CertPEM, 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(key, leaf.KeyPEM, 0o600); err != nil {
			return nil, err
		}
		s.CA = ca.CertPEM
		args = append(args, "-s3.cert.file="+crt, "-s3.key.file="+key)
	}
	return args, nil
}

func portArgs(p []int) []string {
	return []string{
		"-master.port=" + strconv.Itoa(p[0]), "-master.port.grpc=" + strconv.Itoa(p[1]),
		"-volume.port=" + strconv.Itoa(p[2]), "-volume.port.grpc=" + strconv.Itoa(p[3]),
		"-filer.port=" + strconv.Itoa(p[4]), "-filer.port.grpc=" + strconv.Itoa(p[5]),
		"-s3.port=" + strconv.Itoa(p[6]), "-s3.port.grpc=" + strconv.Itoa(p[7]),
	}
}

func (s *Server) run(weed string, args []string) error {
	out, err := os.OpenFile(filepath.Join(s.dir, "weed.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	s.cmd = exec.Command(weed, args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		_ = out.Close()
		return err
	}
	s.done = make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		_ = out.Close()
		close(s.done)
	}()
	return nil
}

// waitReady creates the bucket, then writes and removes an object,
// retrying until the S3 gateway, the filer and a volume all answer, or the
// bound passes, or the process exits. The bucket alone needs no volume: a
// store whose volume server did not come up would fail only the test's
// first upload, after the client's retries.
func (s *Server) waitReady() error {
	client, tr, err := s.newClient()
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	deadline := time.Now().Add(readyWithin)
	bucket := false
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if !bucket {
			err = client.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{Region: Region})
			bucket = err == nil
		}
		if bucket {
			err = probe(ctx, client, s.Bucket)
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("weed exited: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bucket %s not ready for objects within %s: %w", s.Bucket, readyWithin, err)
		}
	}
}

// StoreConfig is the configuration of a pkg/objectstore client of this
// store under prefix, with the server's one identity and, with TLS, its CA.
func (s *Server) StoreConfig(prefix string) objectstore.Config {
	return objectstore.Config{
		Endpoint: s.Endpoint, Bucket: s.Bucket, Prefix: prefix, Region: Region,
		AccessKey: s.AccessKey, SecretKey: s.SecretKey, CABundle: s.CA, Insecure: !s.TLS,
	}
}

// probe writes an object into bucket and removes it, leaving the bucket
// empty.
func probe(ctx context.Context, client *minio.Client, bucket string) error {
	const name = "s3server-probe"
	if _, err := client.PutObject(ctx, bucket, name, strings.NewReader("probe"), 5, minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("writing an object: %w", err)
	}
	return client.RemoveObject(ctx, bucket, name, minio.RemoveObjectOptions{})
}

// Client returns a client of the store with the server's credentials, for
// tests that act on objects directly (such as overwriting one).
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	client, tr, err := s.newClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return client
}

func (s *Server) newClient() (*minio.Client, *http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // loopback only
	if s.TLS {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(s.CA) {
			return nil, nil, errors.New("no CA certificate")
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	c, err := minio.New(s.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure:    s.TLS,
		Region:    Region,
		Transport: tr,
	})
	return c, tr, err
}

// Signal sends sig to the server's process: SIGSTOP freezes the store,
// which then accepts connections and answers nothing, as a store that
// hangs mid-upload does; SIGCONT resumes it.
func (s *Server) Signal(sig os.Signal) error {
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("s3server: not started")
	}
	return s.cmd.Process.Signal(sig)
}

// Pause freezes the store (SIGSTOP): it accepts connections and answers
// nothing, with the requests it received held. The returned func, which
// the test's end also runs, resumes it.
func (s *Server) Pause(t testing.TB) (resume func()) {
	t.Helper()
	if err := s.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("pausing the store: %v", err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { _ = s.Signal(syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}

// Stop kills the server and waits for it to exit; the test's temporary
// directory goes with the test.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.cmd == nil || s.cmd.Process == nil {
			return
		}
		_ = s.cmd.Process.Kill()
		<-s.done
		// weed listens on Unix sockets at fixed paths in /tmp as well,
		// named by port, which a killed process leaves behind.
		for _, p := range s.ports {
			found, _ := filepath.Glob(fmt.Sprintf("/tmp/seaweedfs-*-%d.sock", p))
			for _, f := range found {
				_ = os.Remove(f)
			}
		}
	})
}

// logTail is the end of weed's output, for a failure message.
func (s *Server) logTail() string {
	raw, _ := os.ReadFile(filepath.Join(s.dir, "weed.log"))
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// freePorts returns n distinct free ports of ip, all held open until every
// one is chosen so that none is chosen twice.
func freePorts(ip string, n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return nil, err
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
