// Package rdbtest gives the tests of pkg/rdb and of what builds on it
// standalone redis-server processes with several databases, a dataset with
// every value type and encoding, and the checks that a copy holds it all.
package rdbtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/multi-operator/multi-operator/pkg/rdb"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
)

// DBs are the databases Fill writes to.
var DBs = []int{0, 3, 15}

// Start starts a standalone redis-server (not in cluster mode, so that it
// has databases) that compresses long strings in its snapshots, with opts.
func Start(t testing.TB, opts redistest.Options) *redistest.Server {
	t.Helper()
	opts.Args = append([]string{"--cluster-enabled", "no", "--rdbcompression", "yes", "--rdbchecksum", "yes"}, opts.Args...)
	return redistest.StartWith(t, "127.0.0.1", 0, opts)
}

// Client returns a client of db on s, as the default user with
// s.Options.Password, closed when the test ends.
func Client(t testing.TB, s *redistest.Server, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: s.Addr(), Protocol: 2, DisableIdentity: true, DB: db,
		Password: s.Options.Password, TLSConfig: tlsConfig(s),
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// FunctionCode is the function library Fill loads.
const FunctionCode = "#!lua name=rdbtest\nredis.register_function('rdbtest_one', function(keys, args) return 1 end)"

// Fill writes, into each of DBs, values of every type in each of their
// encodings (small ones packed, large ones in their real structures),
// integers and long compressible strings and names, keys with expiries,
// and a stream with consumer groups and pending entries; and loads
// FunctionCode.
func Fill(t testing.TB, s *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	if err := Client(t, s, 0).FunctionLoadReplace(ctx, FunctionCode).Err(); err != nil {
		t.Fatalf("FUNCTION LOAD: %v", err)
	}
	for _, db := range DBs {
		c := Client(t, s, db)
		p := c.Pipeline()
		pre := fmt.Sprintf("db%d:", db)
		p.Set(ctx, pre+"str", "hello", 0)
		p.Set(ctx, pre+"int8", "7", 0)
		p.Set(ctx, pre+"int16", "-1234", 0)
		p.Set(ctx, pre+"int32", "2147483647", 0)
		p.Set(ctx, pre+"int64", "9223372036854775807", 0)
		p.Set(ctx, pre+"lzf", strings.Repeat("compressible ", 500), 0)
		p.Set(ctx, "12345", "an integer key", 0)
		p.Set(ctx, pre+strings.Repeat("long-key-", 30), "a compressed key", 0)
		p.Set(ctx, pre+"binary", string([]byte{0, 1, 2, 0xff, '\r', '\n'}), 0)
		p.Set(ctx, pre+"ttl:str", "expires", time.Hour)
		p.RPush(ctx, pre+"list:small", "a", "b", "1", "2")
		p.RPush(ctx, pre+"list:big", seq("element-", 3000)...)
		p.RPush(ctx, pre+"list:bigelems", strings.Repeat("x", 10000), strings.Repeat("y", 20000))
		p.SAdd(ctx, pre+"set:intset", 1, 2, 3, 100000, -5)
		p.SAdd(ctx, pre+"set:small", "a", "b", "c")
		p.SAdd(ctx, pre+"set:big", seq("member-", 1000)...)
		p.SAdd(ctx, pre+"set:bigints", ints(1000)...)
		p.ZAdd(ctx, pre+"zset:small", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2.5, Member: "b"})
		zs := []redis.Z{{Score: 1e300, Member: "huge"}}
		for i := range 500 {
			zs = append(zs, redis.Z{Score: float64(i) / 3, Member: "m" + strconv.Itoa(i)})
		}
		p.ZAdd(ctx, pre+"zset:big", zs...)
		p.HSet(ctx, pre+"hash:small", "f1", "v1", "f2", "2")
		p.HSet(ctx, pre+"hash:big", append(seq("field-", 1000), "long", strings.Repeat("v", 100))...)
		p.HSet(ctx, pre+"ttl:hash", "f", "v")
		p.PExpire(ctx, pre+"ttl:hash", 90*time.Minute)
		for i := range 200 {
			p.XAdd(ctx, &redis.XAddArgs{Stream: pre + "stream", Values: []any{"n", i, "payload", strings.Repeat("p", i%50)}})
		}
		p.XGroupCreate(ctx, pre+"stream", "g1", "0")
		p.XGroupCreate(ctx, pre+"stream", "g2", "$")
		p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "alice", Streams: []string{pre + "stream", ">"}, Count: 10})
		p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "bob", Streams: []string{pre + "stream", ">"}, Count: 5})
		p.XAdd(ctx, &redis.XAddArgs{Stream: pre + "stream:empty", Values: []any{"a", "b"}})
		p.XTrimMaxLen(ctx, pre+"stream:empty", 0)
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("filling db %d: %v", db, err)
		}
	}
}

func seq(prefix string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func ints(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i * 7
	}
	return out
}

// Save makes s write its snapshot with SAVE and returns the file.
func Save(t testing.TB, s *redistest.Server) []byte {
	t.Helper()
	ctx := context.Background()
	c := Client(t, s, 0)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	cfg, err := c.ConfigGet(ctx, "dir").Result()
	if err != nil {
		t.Fatal(err)
	}
	name, err := c.ConfigGet(ctx, "dbfilename").Result()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(cfg["dir"], name["dbfilename"]))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Keys returns every key of db on s.
func Keys(t testing.TB, s *redistest.Server, db int) []string {
	t.Helper()
	keys, err := Client(t, s, db).Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// ExpectSame fails the test unless to holds the keys of DBs that from
// holds, each with the same DUMP payload and, within a second, the same
// time to live; and the same function libraries.
func ExpectSame(t testing.TB, from, to *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	for _, db := range DBs {
		src, dst := Client(t, from, db), Client(t, to, db)
		keys := Keys(t, from, db)
		if n := dst.DBSize(ctx).Val(); n != int64(len(keys)) {
			t.Errorf("db %d: %d keys, want %d", db, n, len(keys))
		}
		for _, k := range keys {
			want, err := src.Dump(ctx, k).Result()
			if err != nil {
				t.Fatalf("DUMP %q: %v", k, err)
			}
			got, err := dst.Dump(ctx, k).Result()
			if err != nil {
				t.Errorf("db %d: DUMP %q of the copy: %v", db, k, err)
				continue
			}
			if got != want && !sameContents(ctx, src, dst, k) {
				t.Errorf("db %d: %q differs in the copy", db, k)
			}
			wantTTL, gotTTL := src.PTTL(ctx, k).Val(), dst.PTTL(ctx, k).Val()
			if (wantTTL < 0) != (gotTTL < 0) || (wantTTL-gotTTL).Abs() > time.Second {
				t.Errorf("db %d: %q lives %v in the copy, want %v", db, k, gotTTL, wantTTL)
			}
		}
	}
	want := Client(t, from, 0).FunctionDump(ctx).Val()
	if got := Client(t, to, 0).FunctionDump(ctx).Val(); got != want {
		t.Errorf("function libraries differ in the copy")
	}
}

// tlsConfig is the client side of s's TLS, nil without.
func tlsConfig(s *redistest.Server) *tls.Config {
	if s.Options.TLS == nil {
		return nil
	}
	return s.Options.TLS.ClientConfig()
}

// Restore parses the RDB file r holds and loads it into to: each key with
// RESTORE ... ABSTTL REPLACE into its database, each function library with
// FUNCTION LOAD REPLACE. It returns the number of keys, or the parser's
// error.
func Restore(t testing.TB, r io.Reader, to *redistest.Server) (int, error) {
	t.Helper()
	ctx := context.Background()
	clients := map[int]*redis.Client{}
	n := 0
	err := rdb.NewParser(r, rdb.Options{}).Each(func(e rdb.Entry) error {
		switch e := e.(type) {
		case *rdb.Key:
			c := clients[e.DB]
			if c == nil {
				c = Client(t, to, e.DB)
				clients[e.DB] = c
			}
			ttl := int64(0)
			if e.Expires {
				ttl = e.ExpireAtMs
			}
			if err := c.Do(ctx, "RESTORE", e.Key, ttl, e.Payload, "ABSTTL", "REPLACE").Err(); err != nil {
				t.Fatalf("RESTORE %q (type %d) into db %d: %v", e.Key, e.Type, e.DB, err)
			}
			n++
		case *rdb.FunctionLibrary:
			if err := Client(t, to, 0).FunctionLoadReplace(ctx, string(e.Code)).Err(); err != nil {
				t.Fatalf("FUNCTION LOAD: %v", err)
			}
		}
		return nil
	})
	return n, err
}

// sameContents tells whether k has the same encoding and contents on both
// clients: sets and hashes in hash tables dump in an order each server
// chooses.
func sameContents(ctx context.Context, a, b *redis.Client, k string) bool {
	if a.ObjectEncoding(ctx, k).Val() != b.ObjectEncoding(ctx, k).Val() {
		return false
	}
	switch a.Type(ctx, k).Val() {
	case "set":
		x, y := a.SMembers(ctx, k).Val(), b.SMembers(ctx, k).Val()
		slices.Sort(x)
		slices.Sort(y)
		return len(x) > 0 && slices.Equal(x, y)
	case "hash":
		x, y := a.HGetAll(ctx, k).Val(), b.HGetAll(ctx, k).Val()
		return len(x) > 0 && maps.Equal(x, y)
	}
	return false
}
