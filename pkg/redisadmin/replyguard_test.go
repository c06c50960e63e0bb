package redisadmin

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

var smallLimits = ReplyLimits{Line: 16, Bytes: 64, Elements: 8}

// scanAll feeds stream to a scanner in chunks of size, starting a new
// exchange before each element of exchanges.
func scanAll(limits ReplyLimits, size int, exchanges ...string) error {
	s := replyScanner{limits: limits}
	for _, stream := range exchanges {
		s.newExchange()
		for i := 0; i < len(stream); i += size {
			if err := s.feed([]byte(stream[i:min(i+size, len(stream))])); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestReplyScanner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		exchanges []string
		refused   string
	}{
		{name: "status", exchanges: []string{"+OK\r\n"}},
		{name: "bulk string within the limit", exchanges: []string{"$5\r\nhello\r\n"}},
		{name: "null bulk string and array", exchanges: []string{"$-1\r\n*-1\r\n"}},
		{name: "a payload that looks like a header is not read as one",
			exchanges: []string{"$12\r\n*99999999999\r\n"}},
		{name: "bulk string declared over the limit", exchanges: []string{"$100\r\n"}, refused: "bulk string of 100 bytes"},
		{name: "huge declared length", exchanges: []string{"$9999999999999\r\n"}, refused: "bulk string"},
		{name: "RESP3 blob error over the limit", exchanges: []string{"!100\r\n"}, refused: "bulk string of 100"},
		{name: "array within the limit", exchanges: []string{"*2\r\n:1\r\n:2\r\n"}},
		{name: "array declared over the limit", exchanges: []string{"*9\r\n"}, refused: "9 elements"},
		{name: "nested arrays add up", exchanges: []string{"*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*4\r\n"}, refused: "9 elements"},
		{name: "a map counts keys and values", exchanges: []string{"%5\r\n"}, refused: "10 elements"},
		{name: "an error line over the limit", exchanges: []string{"-ERR " + strings.Repeat("x", 20) + "\r\n"}, refused: "line longer than 16"},
		{name: "many small replies over the byte limit", exchanges: []string{strings.Repeat(":1\r\n", 17)}, refused: "more than 64 bytes"},
		{name: "the budget is per exchange", exchanges: []string{strings.Repeat(":1\r\n", 16), strings.Repeat(":1\r\n", 16)}},
		{name: "bulk strings of one exchange add up", exchanges: []string{"$30\r\n" + strings.Repeat("a", 30) + "\r\n$30\r\n"}, refused: "bulk string of 30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			for _, size := range []int{1, 2, 3, 7, 1 << 20} {
				err := scanAll(smallLimits, size, tc.exchanges...)
				if tc.refused == "" {
					g.Expect(err).NotTo(HaveOccurred(), "chunks of %d", size)
					continue
				}
				var tooLarge *ReplyTooLargeError
				g.Expect(errors.As(err, &tooLarge)).To(BeTrue(), "chunks of %d: got %v", size, err)
				g.Expect(err.Error()).To(ContainSubstring(tc.refused), "chunks of %d", size)
			}
		})
	}
}

// The scanner's verdict on a stream does not depend on how the stream
// arrives, and a stream it passes declares no more than the limits.
func FuzzReplyScanner(f *testing.F) {
	for _, seed := range []string{"+OK\r\n", "$5\r\nhello\r\n", "*2\r\n$1\r\na\r\n:3\r\n", "$-1\r\n", "%1\r\n+a\r\n+b\r\n", "$100\r\n"} {
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, stream string, size uint8) {
		whole := scanAll(smallLimits, len(stream)+1, stream)
		chunked := scanAll(smallLimits, int(size)+1, stream)
		if (whole == nil) != (chunked == nil) {
			t.Fatalf("whole: %v, in chunks of %d: %v", whole, int(size)+1, chunked)
		}
		if whole == nil && len(stream) > int(smallLimits.Bytes) {
			t.Fatalf("passed %d bytes, over the limit of %d", len(stream), smallLimits.Bytes)
		}
	})
}

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A node that holds a huge masterauth, as a tenant may set with CONFIG
// SET, is reported, and the operator never allocates its value. Not
// parallel: it measures the process's allocations.
func TestOversizedReplyIsRefusedWithoutAllocatingIt(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 1)
	const huge = 32 << 20
	ctx := context.Background()
	g.Expect(f.servers["node-0"].Client().ConfigSet(ctx, "masterauth", strings.Repeat("m", huge)).Err()).To(Succeed())
	runtime.GC()
	var err error
	allocated := allocatedBy(func() {
		_, err = f.admin(Options{}).ReconcileAccess(ctx, f.names, f.access)
	})
	var tooLarge *ReplyTooLargeError
	g.Expect(errors.As(err, &tooLarge)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("CONFIG GET masterauth on node-0"))
	g.Expect(allocated).To(BeNumerically("<", DefaultReplyLimits.Bytes),
		"the run allocated %d bytes; the value is %d", allocated, huge)

	// The node is fine again once its value is: nothing was left behind.
	g.Expect(f.servers["node-0"].Client().ConfigSet(ctx, "masterauth", f.access.Passwords[0]).Err()).To(Succeed())
	_, err = f.admin(Options{}).ReconcileAccess(ctx, f.names, f.access)
	g.Expect(err).NotTo(HaveOccurred())
}

// A key name too long to list stops the migration of its slot with the
// reason, and the other keys stay where they are, readable.
func TestOversizedKeyNameStopsItsSlotsMigration(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, 3)
	a := f.admin(Options{ReplyLimits: ReplyLimits{Line: 64 << 10, Bytes: 1 << 20, Elements: 1 << 16}})
	converge(t, a, masters("node-0", "node-1"))
	c := f.cluster("node-0", "node-1")
	redistest.WriteKeys(g, c)
	ctx := context.Background()
	// Each source gives away its highest slots: node-1's last ones move.
	tag := ""
	for i := 0; tag == ""; i++ {
		candidate := fmt.Sprintf("{t%d}", i)
		slot, err := c.ClusterKeySlot(ctx, candidate).Result()
		g.Expect(err).NotTo(HaveOccurred())
		if slot >= NumSlots-1000 {
			tag = candidate
		}
	}
	g.Expect(c.Set(ctx, tag+strings.Repeat("k", 2<<20), "v", 0).Err()).To(Succeed())

	var err error
	for range 10 {
		if _, err = a.Reconcile(ctx, masters("node-0", "node-1", "node-2")); err != nil {
			break
		}
	}
	var tooLarge *ReplyTooLargeError
	g.Expect(errors.As(err, &tooLarge)).To(BeTrue(), "got %v", err)
	redistest.ExpectKeys(g, f.cluster(f.names...))
}
