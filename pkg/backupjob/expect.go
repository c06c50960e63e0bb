package backupjob

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/spf13/pflag"

	"github.com/multi-operator/multi-operator/pkg/redisbackup"
)

// Expected is what a backup's RedisClusterBackup status recorded when its
// own run completed, which a restore holds the backup's manifest to
// before it loads a key. The manifest comes from the tenant's store, where
// anyone with the store's credentials may rewrite it: a manifest of fewer
// shards would restore fewer keys, each file still matching its (rewritten)
// record. The status is written only by the operator, so the restore
// trusts it, not the manifest: every file the status names is pinned by
// its SHA-256, and the rest by the shard and key counts.
type Expected struct {
	// Keys is the backup's total of keys (status.totals.keys).
	Keys int64
	// Shards is its number of shard files (status.totals.shards).
	Shards int
	// Files are the first shard files, in the manifest's order
	// (status.shards): all of them unless the status left some out to fit.
	Files []ExpectedFile
}

// ExpectedFile is one shard file a backup's status records.
type ExpectedFile struct {
	// Name is the file's name below the backup's folder.
	Name string
	// SHA256 is the hex SHA-256 of its stored bytes.
	SHA256 string
}

// Flag names of Expected.
const (
	flagExpectKeys   = "expect-keys"
	flagExpectShards = "expect-shards"
	flagExpectFile   = "expect-file"
)

// maxExpectedFiles bounds --expect-file: a cluster has at most 100 shards.
const maxExpectedFiles = 100

// args is e as the command line bind reads.
func (e Expected) args() []string {
	args := []string{fmt.Sprintf("--%s=%d", flagExpectKeys, e.Keys), fmt.Sprintf("--%s=%d", flagExpectShards, e.Shards)}
	for _, f := range e.Files {
		args = append(args, "--"+flagExpectFile+"="+f.Name+":"+f.SHA256)
	}
	return args
}

// expectedFiles is --expect-file's value: name:sha256, repeated.
type expectedFiles struct{ files *[]ExpectedFile }

func (v expectedFiles) String() string {
	parts := make([]string, len(*v.files))
	for i, f := range *v.files {
		parts[i] = f.Name + ":" + f.SHA256
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (v expectedFiles) Set(s string) error {
	name, sum, ok := strings.Cut(s, ":")
	if !ok || name == "" || strings.Contains(name, "/") || len(name) > 64 {
		return fmt.Errorf("%q is not <file name>:<sha256>", s)
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 {
		return fmt.Errorf("%q: %q is not a hex SHA-256", s, sum)
	}
	if len(*v.files) == maxExpectedFiles {
		return fmt.Errorf("more than %d files", maxExpectedFiles)
	}
	*v.files = append(*v.files, ExpectedFile{Name: name, SHA256: strings.ToLower(sum)})
	return nil
}

func (v expectedFiles) Type() string { return "name:sha256" }

// bind defines e's flags on fs.
func (e *Expected) bind(fs *pflag.FlagSet) {
	fs.Int64Var(&e.Keys, flagExpectKeys, -1, "The backup's total of keys, as its RedisClusterBackup's status recorded it; required.")
	fs.IntVar(&e.Shards, flagExpectShards, 0, "The backup's number of shard files, as its status recorded it; required.")
	fs.Var(expectedFiles{&e.Files}, flagExpectFile, "A shard file the status records, as <name>:<sha256>, in the manifest's order; repeated.")
}

// validate says what is missing or contradictory.
func (e Expected) validate() error {
	var errs []error
	if e.Keys < 0 {
		errs = append(errs, fmt.Errorf("--%s is required", flagExpectKeys))
	}
	if e.Shards < 1 {
		errs = append(errs, fmt.Errorf("--%s is required", flagExpectShards))
	}
	if len(e.Files) > e.Shards {
		errs = append(errs, fmt.Errorf("%d --%s for %d shards", len(e.Files), flagExpectFile, e.Shards))
	}
	return errors.Join(errs...)
}

// check reports where the manifest of the backup in folder disagrees
// with e: its shard count, its total of keys, or a file e names (by name
// and SHA-256, in order). Only the first differing file is named: the
// message must stay short.
func (e Expected) check(m *redisbackup.Manifest, folder string) error {
	var diffs []string
	if len(m.Shards) != e.Shards {
		diffs = append(diffs, fmt.Sprintf("it lists %d shard files, the status %d", len(m.Shards), e.Shards))
	}
	var keys int64
	for _, s := range m.Shards {
		if s.Keys < 0 {
			diffs = append(diffs, fmt.Sprintf("it gives %s a negative number of keys", path.Base(s.File.Name)))
			break
		}
		keys += s.Keys
	}
	if keys != e.Keys {
		diffs = append(diffs, fmt.Sprintf("it holds %d keys, the status %d", keys, e.Keys))
	}
	for i, f := range e.Files {
		if i >= len(m.Shards) {
			break
		}
		got := m.Shards[i].File
		if got.Name != path.Join(folder, f.Name) || !strings.EqualFold(got.SHA256, f.SHA256) {
			diffs = append(diffs, fmt.Sprintf("its shard file %d is %s of SHA-256 %s, the status says %s of SHA-256 %s",
				i, path.Base(got.Name), got.SHA256, f.Name, f.SHA256))
			break
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("the backup's %s disagrees with its RedisClusterBackup's status, which the restore trusts: %s",
		redisbackup.ManifestName, strings.Join(diffs, "; "))
}
