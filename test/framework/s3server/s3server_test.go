package s3server

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// The store runs inside a subtest whose name holds a comma, which weed's
// directory flags would split at.
func TestServesTheBucketOnLoopbackAndStops(t *testing.T) {
	t.Run("named with a comma, and spaces", servesTheBucketOnLoopbackAndStops)
}

func servesTheBucketOnLoopbackAndStops(t *testing.T) {
	s := Start(t, Options{Bucket: "bucket-1"})
	host, _, err := net.SplitHostPort(s.Endpoint)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("endpoint %q is not on loopback", s.Endpoint)
	}
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.PutObject(ctx, "bucket-1", "k", strings.NewReader("v"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := c.GetObject(ctx, "bucket-1", "k", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := io.ReadAll(o); err != nil || string(data) != "v" {
		t.Fatalf("read %q, %v", data, err)
	}
	s.Stop()
	if _, err := net.DialTimeout("tcp", s.Endpoint, time.Second); err == nil {
		t.Fatal("the endpoint still accepts connections after Stop")
	}
}

// TestServesHTTPSOnAnotherAddress checks what the e2e suite relies on: the
// store listens on the address given, and its certificate names that
// address, so that a client dialling the IP verifies it against the CA.
func TestServesHTTPSOnAnotherAddress(t *testing.T) {
	s := Start(t, Options{TLS: true, Host: "127.0.0.2"})
	if host, _, _ := net.SplitHostPort(s.Endpoint); host != "127.0.0.2" {
		t.Fatalf("endpoint %q is not on 127.0.0.2", s.Endpoint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Client(t).PutObject(ctx, s.Bucket, "k", strings.NewReader("v"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatalf("an HTTPS request to the address, checked against the CA: %v", err)
	}
}
