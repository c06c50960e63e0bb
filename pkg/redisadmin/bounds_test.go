package redisadmin

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// silentNodes listens on n loopback ports that accept connections and
// read what is sent but never answer, as a node whose Redis a tenant
// replaced might. It returns a topology of one-node shards and a resolver
// of them.
func silentNodes(t *testing.T, n int) (Topology, Resolver) {
	t.Helper()
	addrs := map[string]string{}
	var names []string
	for i := range n {
		name := fmt.Sprintf("silent-%d", i)
		names = append(names, name)
		addrs[name] = redistest.ListenSilently(t, "127.0.0.1:0")
	}
	return masters(names...), func(_ context.Context, name string) (string, error) { return addrs[name], nil }
}

// Nodes that accept connections but never answer cost one read timeout
// together, not one each: they are reached in parallel.
func TestSilentNodesCostOneTimeoutNotOneEach(t *testing.T) {
	t.Parallel()
	const nodes = 8
	// The read timeout of a node's commands is MigrateTimeout plus a margin.
	opts := Options{DialTimeout: time.Second, MigrateTimeout: time.Second}
	readTimeout := opts.MigrateTimeout + 5*time.Second
	topo, resolve := silentNodes(t, nodes)
	a := New(resolve, opts)
	for _, run := range []struct {
		name string
		f    func() error
	}{
		{"Observe", func() error { _, err := a.Observe(context.Background(), topo); return err }},
		{"Reconcile", func() error { _, err := a.Reconcile(context.Background(), topo); return err }},
		{"ReconcileAccess", func() error {
			res, err := a.ReconcileAccess(context.Background(), topo.Nodes(), Access{})
			if err == nil && len(res.Unreachable) == nodes {
				err = &UnreachableError{Nodes: res.Unreachable}
			}
			return err
		}},
	} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			start := time.Now()
			err := run.f()
			took := time.Since(start)
			var u *UnreachableError
			g.Expect(errors.As(err, &u)).To(BeTrue(), "got %v", err)
			g.Expect(u.Nodes).To(HaveLen(nodes))
			g.Expect(took).To(BeNumerically("<", 2*readTimeout),
				"%d silent nodes took %v; one at a time they take %v", nodes, took, nodes*readTimeout)
		})
	}
}

// RunTimeout ends a run against silent nodes before their read timeout.
func TestRunTimeoutBoundsTheRun(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	topo, resolve := silentNodes(t, 3)
	runTimeout := time.Second
	a := New(resolve, Options{RunTimeout: runTimeout})
	start := time.Now()
	_, err := a.Reconcile(context.Background(), topo)
	took := time.Since(start)
	g.Expect(IsUnreachable(err)).To(BeTrue(), "got %v", err)
	g.Expect(took).To(BeNumerically("<", runTimeout+2*time.Second),
		"the default read timeout is %v", Options{}.withDefaults().MigrateTimeout+5*time.Second)
}

// A node whose address refuses connections is dialled once per attempt:
// the client's own dial retries, each after a pause, would hold the
// worker for all of them, for every command the run sends.
func TestRefusedNodeIsDialledOnce(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	addrs := map[string]string{}
	var names []string
	for i := range 4 {
		name := fmt.Sprintf("refusing-%d", i)
		names = append(names, name)
		addrs[name] = redistest.RefusedAddr(t)
	}
	a := New(func(_ context.Context, name string) (string, error) { return addrs[name], nil }, Options{})
	start := time.Now()
	res, err := a.ReconcileAccess(context.Background(), names, Access{})
	took := time.Since(start)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Unreachable).To(HaveLen(len(names)))
	// go-redis pauses 100ms between its own dial retries.
	g.Expect(took).To(BeNumerically("<", 300*time.Millisecond), "four refusing nodes took %v", took)
}
