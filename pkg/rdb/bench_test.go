package rdb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/rdb/rdbtest"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// benchKeys is how many keys the benchmarks' snapshot holds: small
// strings, a third with a time to live, as a cache holds.
const benchKeys = 100000

var (
	benchOnce sync.Once
	benchFile []byte
)

// snapshotOfSmallKeys is a real server's snapshot of benchKeys keys, made
// once per run.
func snapshotOfSmallKeys(b *testing.B) []byte {
	benchOnce.Do(func() {
		s := rdbtest.Start(b, redistest.Options{})
		c := rdbtest.Client(b, s, 0)
		ctx := context.Background()
		p := c.Pipeline()
		for i := range benchKeys {
			var ttl time.Duration
			if i%3 == 0 {
				ttl = 24 * time.Hour
			}
			p.Set(ctx, fmt.Sprintf("k:%d", i), fmt.Sprintf("v%d", i), ttl)
			if p.Len() == 1000 {
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		benchFile = rdbtest.Save(b, s)
	})
	return benchFile
}

// BenchmarkParse is the parser's cost per file of small keys, with each
// key's payload made (what a restore needs) and without (what a backup's
// count needs).
func BenchmarkParse(b *testing.B) {
	file := snapshotOfSmallKeys(b)
	for _, tc := range []struct {
		name string
		opts rdb.Options
	}{
		{"payloads", rdb.Options{}},
		{"keys-only", rdb.Options{KeysOnly: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				err := rdb.NewParser(bytes.NewReader(file), tc.opts).Each(func(e rdb.Entry) error {
					if _, ok := e.(*rdb.Key); ok {
						n++
					}
					return nil
				})
				if err != nil && !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				if n != benchKeys {
					b.Fatalf("%d keys, want %d", n, benchKeys)
				}
			}
		})
	}
}
