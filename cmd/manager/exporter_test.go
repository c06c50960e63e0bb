package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

func TestMemcachedExporterSubcommand(t *testing.T) {
	g := NewWithT(t)
	listen, memcached := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{memcachedExporterCommand, "--listen", listen, "--address", memcached, "--timeout", "500ms"}, &stderr)
	}()
	var body []byte
	g.Eventually(func() error {
		resp, err := http.Get("http://" + listen + "/metrics")
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err = io.ReadAll(resp.Body)
		return err
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(string(body)).To(ContainSubstring("memcached_up 0"), "nothing listens on the memcached address")
	cancel()
	g.Eventually(code, 10*time.Second).Should(Receive(Equal(0)))
}

func TestMemcachedExporterBadFlags(t *testing.T) {
	g := NewWithT(t)
	var stderr bytes.Buffer
	g.Expect(run(context.Background(), []string{memcachedExporterCommand, "--timeout", "0s"}, &stderr)).To(Equal(2))
	g.Expect(run(context.Background(), []string{memcachedExporterCommand, "--nope"}, &stderr)).To(Equal(2))
}
