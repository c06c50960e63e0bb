package rdb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/rdb/rdbtest"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// TestRestoresEveryKeyOfARealSnapshot parses a real server's snapshot of
// every type and encoding, checks each payload is what DUMP returns for the
// key, loads them all into an empty server with RESTORE and finds both
// servers holding the same keys, values, expiries and functions.
func TestRestoresEveryKeyOfARealSnapshot(t *testing.T) {
	from, to := rdbtest.Start(t, redistest.Options{}), rdbtest.Start(t, redistest.Options{})
	rdbtest.Fill(t, from)
	file := rdbtest.Save(t, from)

	ctx := context.Background()
	p := rdb.NewParser(bytes.NewReader(file), rdb.Options{})
	keys, types, functions := map[int]int{}, map[byte]bool{}, 0
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := e.(type) {
		case *rdb.Key:
			keys[e.DB]++
			types[e.Type] = true
			dump, err := rdbtest.Client(t, from, e.DB).Dump(ctx, string(e.Key)).Result()
			if err != nil {
				t.Fatalf("DUMP %q: %v", e.Key, err)
			}
			if dump != string(e.Payload) {
				t.Errorf("db %d: payload of %q (type %d) is not what DUMP returns", e.DB, e.Key, e.Type)
			}
			ttl := rdbtest.Client(t, from, e.DB).PTTL(ctx, string(e.Key)).Val()
			if e.Expires != (ttl > 0) {
				t.Errorf("db %d: %q expires %v in the file, PTTL %v", e.DB, e.Key, e.Expires, ttl)
			}
			if e.Expires && (time.Until(time.UnixMilli(e.ExpireAtMs))-ttl).Abs() > 5*time.Second {
				t.Errorf("db %d: %q expires at %v, PTTL %v", e.DB, e.Key, time.UnixMilli(e.ExpireAtMs), ttl)
			}
		case *rdb.FunctionLibrary:
			functions++
			if string(e.Code) != rdbtest.FunctionCode {
				t.Errorf("function library %q, want %q", e.Code, rdbtest.FunctionCode)
			}
		}
	}
	if p.Offset() != int64(len(file)) {
		t.Errorf("read %d bytes of %d", p.Offset(), len(file))
	}
	for _, db := range rdbtest.DBs {
		if want := len(rdbtest.Keys(t, from, db)); keys[db] != want {
			t.Errorf("db %d: %d keys parsed, the server has %d", db, keys[db], want)
		}
	}
	if functions != 1 {
		t.Errorf("%d function libraries, want 1", functions)
	}
	// Redis 7.0 writes these: string, set, zset2, hash, intset, quicklist2,
	// stream v2, and the listpack hash and zset.
	for _, typ := range []byte{0, 2, 5, 4, 11, 18, 19, 16, 17} {
		if !types[typ] {
			t.Errorf("no value of type %d in the file; the dataset misses an encoding", typ)
		}
	}

	if _, err := rdbtest.Restore(t, bytes.NewReader(file), to); err != nil {
		t.Fatal(err)
	}
	rdbtest.ExpectSame(t, from, to)
}

// TestWriteTestdata writes the fuzz seeds and the corruption tests' files
// into testdata/ from a real server when RDB_WRITE_TESTDATA=1. Tiny
// encoding thresholds make small values take every real structure, so the
// files stay small.
func TestWriteTestdata(t *testing.T) {
	if os.Getenv("RDB_WRITE_TESTDATA") != "1" {
		t.Skip("set RDB_WRITE_TESTDATA=1 to write testdata/")
	}
	s := rdbtest.Start(t, redistest.Options{Args: []string{
		"--list-max-listpack-size", "2", "--hash-max-listpack-entries", "2",
		"--zset-max-listpack-entries", "2", "--set-max-intset-entries", "2"}})
	write := func(name string) {
		raw := rdbtest.Save(t, s)
		if err := os.WriteFile(filepath.Join("testdata", name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	write("empty.rdb")
	if err := rdbtest.Client(t, s, 0).FunctionLoad(ctx, rdbtest.FunctionCode).Err(); err != nil {
		t.Fatal(err)
	}
	for _, db := range []int{0, 2} {
		c := rdbtest.Client(t, s, db)
		p := c.Pipeline()
		p.Set(ctx, "s", "v", 0)
		p.Set(ctx, "i", "-300", 0)
		p.Set(ctx, "lzf", strings.Repeat("ab", 40), 0)
		p.Set(ctx, strings.Repeat("key", 10), "1", time.Hour)
		p.RPush(ctx, "l1", "a")
		p.RPush(ctx, "l", "a", "b", "c", "d", "e")
		p.SAdd(ctx, "si", 1, 2)
		p.SAdd(ctx, "s1", 1, 2, 3)
		p.SAdd(ctx, "ss", "a", "b", "c")
		p.ZAdd(ctx, "z1", redis.Z{Score: 1, Member: "a"})
		p.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"})
		p.HSet(ctx, "h1", "f", "v")
		p.HSet(ctx, "h", "f", "v", "g", "w", "x", "y")
		for i := range 3 {
			p.XAdd(ctx, &redis.XAddArgs{Stream: "x", Values: []any{"n", i}})
		}
		p.XGroupCreate(ctx, "x", "g", "0")
		p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"x", ">"}, Count: 2})
		p.PExpire(ctx, "h", time.Hour)
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write("types.rdb")
	if err := rdbtest.Client(t, s, 0).ConfigSet(ctx, "rdbcompression", "no").Err(); err != nil {
		t.Fatal(err)
	}
	write("uncompressed.rdb")
	fmt.Println("wrote testdata/")
}
