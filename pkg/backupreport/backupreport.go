// Package backupreport is what a backup Job tells the operator: its
// result, written by `manager backup` as its container's termination
// message and read back from the pod's status by the RedisClusterBackup
// controller.
//
// The kubelet keeps at most MaxBytes of a termination message, so a
// result is encoded to fit: the files of the last shards are left out
// (Omitted counts them; manifest.json lists every one) and the message is
// shortened. The reader treats the bytes as untrusted: a result that does
// not parse, or breaks a bound, is refused.
package backupreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisbackup"
)

// MaxBytes is the largest termination message the kubelet keeps of one
// container.
const MaxBytes = 4096

// MaxMessage bounds Result.Message.
const MaxMessage = 1024

// MaxFiles bounds Result.Files: a RedisCluster has at most 100 shards.
const MaxFiles = 100

// Result is the outcome of one backup run.
type Result struct {
	// Complete says every shard's file was stored and verified, and the
	// manifest written last.
	Complete bool `json:"complete"`
	// Reason is why the backup failed, a reason of the API package.
	Reason string `json:"reason,omitempty"`
	// Message says what failed, or what was stored.
	Message string `json:"message,omitempty"`
	// Keys, Bytes and Shards are the backup's totals.
	Keys   int64 `json:"keys,omitempty"`
	Bytes  int64 `json:"bytes,omitempty"`
	Shards int   `json:"shards,omitempty"`
	// Files are the shards' files, in order; the last Omitted are left out.
	Files []File `json:"files,omitempty"`
	// Omitted is how many files Files leaves out to fit.
	Omitted int `json:"omitted,omitempty"`
}

// File is one shard's file, with short field names: the result must fit
// a termination message.
type File struct {
	// Name is its name below the backup's folder.
	Name string `json:"f"`
	// Slots are its slot ranges, such as 0-5460,5462.
	Slots string `json:"s"`
	// Keys is how many keys it holds.
	Keys int64 `json:"k"`
	// Bytes is its size.
	Bytes int64 `json:"b"`
	// SHA256 is the hex SHA-256 of its bytes.
	SHA256 string `json:"h"`
}

// FromManifest is the result of a backup that completed with m.
func FromManifest(m *redisbackup.Manifest) Result {
	r := Result{Complete: true, Shards: len(m.Shards), Keys: m.Keys()}
	for _, s := range m.Shards {
		r.Bytes += s.File.Size
		name := s.File.Name
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		r.Files = append(r.Files, File{Name: name, Slots: SlotString(s.Slots), Keys: s.Keys, Bytes: s.File.Size, SHA256: s.File.SHA256})
	}
	r.Message = fmt.Sprintf("stored and verified %d keys in %d shard files", r.Keys, r.Shards)
	return r
}

// Failed is the result of a backup that failed for reason.
func Failed(reason string, err error) Result {
	return Result{Reason: reason, Message: err.Error()}
}

// SlotString writes ranges as 0-5460,5462.
func SlotString(ranges []redisadmin.SlotRange) string {
	parts := make([]string, 0, len(ranges))
	for _, r := range ranges {
		if r.From == r.To {
			parts = append(parts, strconv.Itoa(r.From))
		} else {
			parts = append(parts, strconv.Itoa(r.From)+"-"+strconv.Itoa(r.To))
		}
	}
	return strings.Join(parts, ",")
}

// Encode writes r as one line of JSON of at most MaxBytes: the message cut
// to MaxMessage, then files left out from the end until it fits.
func (r Result) Encode() []byte {
	r.Message = events.Truncate(r.Message, MaxMessage)
	if len(r.Files) > MaxFiles {
		r.Omitted += len(r.Files) - MaxFiles
		r.Files = r.Files[:MaxFiles]
	}
	for {
		b, _ := json.Marshal(r) // only strings and numbers: cannot fail
		if len(b) <= MaxBytes || len(r.Files) == 0 {
			return b
		}
		r.Files = r.Files[:len(r.Files)-1]
		r.Omitted++
	}
}

var (
	fileName = regexp.MustCompile(`^shard-[0-9]{3}\.rdb$`)
	slotList = regexp.MustCompile(`^[0-9]{1,5}(-[0-9]{1,5})?(,[0-9]{1,5}(-[0-9]{1,5})?)*$`)
	sha256   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	reason   = regexp.MustCompile(`^[A-Z][A-Za-z]{0,63}$`)
)

// Decode reads a result that Encode wrote, refusing anything larger than
// MaxBytes, with unknown fields, or outside the bounds: the bytes come
// from a pod.
func Decode(b []byte) (Result, error) {
	var r Result
	if len(b) > MaxBytes {
		return r, fmt.Errorf("a result of %d bytes, more than %d", len(b), MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Result{}, fmt.Errorf("the result does not parse: %w", err)
	}
	if dec.More() {
		return Result{}, errors.New("the result is followed by more data")
	}
	if err := r.validate(); err != nil {
		return Result{}, err
	}
	return r, nil
}

func (r Result) validate() error {
	switch {
	case len(r.Message) > MaxMessage || !utf8.ValidString(r.Message):
		return errors.New("the result's message is too long or not UTF-8")
	case r.Reason != "" && !reason.MatchString(r.Reason):
		return fmt.Errorf("the result's reason %q is not a reason", r.Reason)
	case r.Complete && r.Reason != "":
		return errors.New("a complete result with a failure reason")
	case !r.Complete && r.Reason == "":
		return errors.New("a failed result without a reason")
	case r.Keys < 0 || r.Bytes < 0 || r.Shards < 0 || r.Omitted < 0:
		return errors.New("a negative count in the result")
	case r.Shards > MaxFiles || len(r.Files) > MaxFiles:
		return fmt.Errorf("more than %d shards in the result", MaxFiles)
	case r.Complete && len(r.Files)+r.Omitted != r.Shards:
		return fmt.Errorf("the result lists %d files and omits %d of %d shards", len(r.Files), r.Omitted, r.Shards)
	}
	for i, f := range r.Files {
		if !fileName.MatchString(f.Name) || !slotList.MatchString(f.Slots) || !sha256.MatchString(f.SHA256) || f.Keys < 0 || f.Bytes < 0 {
			return fmt.Errorf("file %d of the result is not a shard file's record", i)
		}
	}
	return nil
}

// ReadLast returns the result in the last line of out that holds one, as
// `manager backup` prints it last on stdout.
func ReadLast(out []byte) (Result, error) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return Decode(lines[len(lines)-1])
}
