package backupreport_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/backupreport"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
)

func manifest(shards int) *redisbackup.Manifest {
	m := &redisbackup.Manifest{Version: redisbackup.ManifestVersion}
	per := redisadmin.NumSlots / shards
	for i := range shards {
		to := (i+1)*per - 1
		if i == shards-1 {
			to = redisadmin.NumSlots - 1
		}
		m.Shards = append(m.Shards, redisbackup.ShardResult{
			Slots: []redisadmin.SlotRange{{From: i * per, To: to}},
			File:  redisbackup.Stored{Name: fmt.Sprintf("ns/cache/b1/shard-%03d.rdb", i), Size: int64(1000 + i), SHA256: strings.Repeat("ab", 32)},
			Keys:  int64(10 + i),
		})
	}
	return m
}

// A complete backup's result names every file, with its slots, counts and
// checksum, and reads back as written.
func TestResultRoundTrip(t *testing.T) {
	g := NewWithT(t)
	r := backupreport.FromManifest(manifest(3))
	g.Expect(r.Complete).To(BeTrue())
	g.Expect(r.Keys).To(Equal(int64(10 + 11 + 12)))
	g.Expect(r.Bytes).To(Equal(int64(3003)))
	g.Expect(r.Files[0]).To(Equal(backupreport.File{Name: "shard-000.rdb", Slots: "0-5460", Keys: 10, Bytes: 1000, SHA256: strings.Repeat("ab", 32)}))
	got, err := backupreport.Decode(r.Encode())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(r))

	failed := backupreport.Failed("ClusterChanged", errors.New("shard 1: a key of slot 7"))
	got, err = backupreport.ReadLast(append([]byte("log line\n{\"not\":\"this\"}\n"), append(failed.Encode(), '\n')...))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(failed))
}

func TestSlotString(t *testing.T) {
	g := NewWithT(t)
	g.Expect(backupreport.SlotString([]redisadmin.SlotRange{{From: 0, To: 5460}, {From: 5462, To: 5462}})).To(Equal("0-5460,5462"))
	g.Expect(backupreport.SlotString(nil)).To(Equal(""))
}

// The largest cluster's result fits a termination message: the last
// files are left out and counted, and a long message is cut.
func TestEncodeFitsATerminationMessage(t *testing.T) {
	for _, shards := range []int{1, 10, 25, 100} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			g := NewWithT(t)
			r := backupreport.FromManifest(manifest(shards))
			r.Message = strings.Repeat("é", 2000)
			b := r.Encode()
			g.Expect(len(b)).To(BeNumerically("<=", backupreport.MaxBytes))
			got, err := backupreport.Decode(b)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(len(got.Files) + got.Omitted).To(Equal(shards))
			g.Expect(got.Files).NotTo(BeEmpty())
			g.Expect(got.Files[0]).To(Equal(r.Files[0]), "the first files are kept")
			g.Expect(len(got.Message)).To(BeNumerically("<=", backupreport.MaxMessage))
			if shards <= 10 {
				g.Expect(got.Omitted).To(BeZero())
			}
		})
	}
}

// What a pod says is refused unless it is a result within bounds.
func TestDecodeRefusesWhatEncodeNeverWrites(t *testing.T) {
	sha := strings.Repeat("0", 64)
	for _, tc := range []struct{ name, in, err string }{
		{"not JSON", "Backup done!", "does not parse"},
		{"too large", `{"complete":true,"message":"` + strings.Repeat("x", 5000) + `"}`, "more than 4096"},
		{"an unknown field", `{"complete":true,"extra":1}`, "unknown field"},
		{"two values", `{"complete":false,"reason":"X"} {}`, "followed by more data"},
		{"complete with a reason", `{"complete":true,"reason":"StoreFailed"}`, "complete result with a failure reason"},
		{"failed without a reason", `{"complete":false}`, "without a reason"},
		{"a reason with spaces", `{"complete":false,"reason":"Store Failed"}`, "is not a reason"},
		{"files that do not add up", `{"complete":true,"shards":2,"files":[{"f":"shard-000.rdb","s":"0-16383","k":1,"b":1,"h":"` + sha + `"}]}`, "omits 0 of 2"},
		{"a file outside the folder", `{"complete":true,"shards":1,"files":[{"f":"../x.rdb","s":"0","k":1,"b":1,"h":"` + sha + `"}]}`, "not a shard file's record"},
		{"a bad checksum", `{"complete":true,"shards":1,"files":[{"f":"shard-000.rdb","s":"0","k":1,"b":1,"h":"xyz"}]}`, "not a shard file's record"},
		{"negative keys", `{"complete":true,"keys":-1}`, "negative count"},
		{"too many shards", `{"complete":true,"shards":101,"omitted":101}`, "more than 100 shards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := backupreport.Decode([]byte(tc.in))
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.err)))
		})
	}
}
