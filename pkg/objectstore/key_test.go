package objectstore

import (
	"errors"
	"strings"
	"testing"
)

func TestNamesCannotLeaveThePrefix(t *testing.T) {
	s, err := New(Config{Endpoint: "127.0.0.1:1", Bucket: "b", Prefix: "tenant-a/cluster-1", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  string // empty: refused
	}{
		{"backup-1/shard-0.rdb", "tenant-a/cluster-1/backup-1/shard-0.rdb"},
		{"a", "tenant-a/cluster-1/a"},
		{"v1.2_x-y", "tenant-a/cluster-1/v1.2_x-y"},
		{"..", ""},
		{"../cluster-2/x", ""},
		{"a/../../b", ""},
		{"a/..", ""},
		{"./a", ""},
		{"a/./b", ""},
		{"/etc/passwd", ""},
		{"a/", ""},
		{"a//b", ""},
		{"", ""},
		{`a\..\b`, ""},
		{"a%2F..%2Fb", ""},
		{"a b", ""},
		{"a\x00b", ""},
		{"a\nb", ""},
		{"é", ""},
		{"a?b", ""},
		{"a#b", ""},
		{"a*", ""},
		{strings.Repeat("a", MaxNameLength), "tenant-a/cluster-1/" + strings.Repeat("a", MaxNameLength)},
		{strings.Repeat("a", MaxNameLength+1), ""},
	} {
		key, err := s.key(tc.name)
		if tc.key == "" {
			if err == nil {
				t.Errorf("name %q: accepted as %q, want refused", tc.name, key)
			}
			continue
		}
		if err != nil || key != tc.key {
			t.Errorf("name %q: got %q, %v; want %q", tc.name, key, err, tc.key)
		}
	}
}

func TestConfiguredPrefixIsCheckedAndEndsWithSlash(t *testing.T) {
	for _, tc := range []struct {
		prefix, want string
		ok           bool
	}{
		{"", "", true},
		{"backups", "backups/", true},
		{"backups/", "backups/", true},
		{"a/b", "a/b/", true},
		{"../a", "", false},
		{"/a", "", false},
		{"a//b", "", false},
	} {
		got, err := normalizePrefix(tc.prefix)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("prefix %q: got %q, %v; want %q, ok=%v", tc.prefix, got, err, tc.want, tc.ok)
		}
	}
}

func TestSubprefixMayEndWithSlashOnly(t *testing.T) {
	for sub, ok := range map[string]bool{"backup-1/": true, "backup-1": true, "b/c/": true, "../": false, "a//": false, "/": false, "a/../": false} {
		if err := validSubprefix(sub); (err == nil) != ok {
			t.Errorf("subprefix %q: %v, want ok=%v", sub, err, ok)
		}
	}
}

// FuzzKey checks that whatever a tenant sends, an accepted name makes a
// key under the prefix with no segment that a store could resolve upward.
func FuzzKey(f *testing.F) {
	for _, seed := range []string{"a", "../a", "a/../b", "a/b", "..", "./", "a\\b", "%2e%2e"} {
		f.Add(seed)
	}
	s, err := New(Config{Endpoint: "127.0.0.1:1", Bucket: "b", Prefix: "p", Insecure: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		key, err := s.key(name)
		if err != nil {
			return
		}
		if !strings.HasPrefix(key, "p/") || len(name) > MaxNameLength {
			t.Fatalf("name %q gave key %q", name, key)
		}
		for _, seg := range strings.Split(strings.TrimPrefix(key, "p/"), "/") {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\%?#") {
				t.Fatalf("name %q gave key %q with segment %q", name, key, seg)
			}
		}
	})
}

func TestErrorsNeverHoldTheSecretOrToken(t *testing.T) {
	s, err := New(Config{Endpoint: "127.0.0.1:1", Bucket: "b", AccessKey: "ak", SecretKey: "s3cr3t-value", SessionToken: "tok3n-value", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("store said: bad signature for s3cr3t-value with token tok3n-value")
	err = s.wrap(cause, "uploading %s", "p/x")
	msg := err.Error()
	if strings.Contains(msg, "s3cr3t-value") || strings.Contains(msg, "tok3n-value") {
		t.Fatalf("error %q holds a secret", msg)
	}
	if !strings.Contains(msg, "uploading p/x in bucket b") || !errors.Is(err, cause) {
		t.Fatalf("error %q does not say what failed or lost its cause", msg)
	}
}
