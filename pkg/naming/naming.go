// Package naming derives names of child objects that stay valid however long
// the owner's name is.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxLabelValueLength is the longest name that may also appear as a label
// value (a Job's name does, in its pods' job-name label).
const MaxLabelValueLength = 63

// HashLength is the number of hex digits Hash returns.
const HashLength = 10

// Hash returns a short, stable hex digest of parts.
func Hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		// The length prefix keeps ("ab","c") and ("a","bc") apart.
		h.Write([]byte{byte(len(p) >> 24), byte(len(p) >> 16), byte(len(p) >> 8), byte(len(p))})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:HashLength]
}

// WithSuffix returns base + "-" + suffix, shortening base so that the result
// has at most maxLength characters and still is a valid DNS label: a name
// cut in the middle never ends in '-' or '.'.
func WithSuffix(base, suffix string, maxLength int) string {
	room := maxLength - len(suffix) - 1
	if room < 1 {
		return suffix[:min(len(suffix), maxLength)]
	}
	if len(base) > room {
		base = strings.TrimRight(base[:room], "-.")
	}
	return base + "-" + suffix
}

// LabelValue returns name when it is a valid label value (at most 63
// characters), and otherwise a shortened name with a hash of the whole, so
// that long names still give distinct, valid label values.
func LabelValue(name string) string {
	if len(name) <= MaxLabelValueLength {
		return name
	}
	return WithSuffix(name, Hash(name), MaxLabelValueLength)
}
