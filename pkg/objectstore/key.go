package objectstore

import (
	"fmt"
	"strings"
)

// MaxNameLength bounds a name (or sub-prefix) below Config.Prefix, so that
// a tenant-controlled name cannot make keys longer than a store accepts
// (S3 allows 1024 bytes for the whole key).
const MaxNameLength = 256

// validName reports why name cannot be used under the prefix: only ASCII
// letters, digits and ". _ -" in "/"-separated segments, none empty, "." or
// "..", so that every key stays under the prefix on every store, whatever
// the store does with dots, slashes or escapes.
func validName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("name of %d bytes, longer than %d", len(name), MaxNameLength)
	}
	for i := 0; i < len(name); i++ {
		if !safeByte(name[i]) {
			return fmt.Errorf("name %q has %q, outside [A-Za-z0-9._/-]", name, name[i])
		}
	}
	for _, seg := range strings.Split(name, "/") {
		switch seg {
		case "":
			return fmt.Errorf("name %q has an empty segment (a leading, trailing or double /)", name)
		case ".", "..":
			return fmt.Errorf("name %q has a %q segment", name, seg)
		}
	}
	return nil
}

// validSubprefix is validName for a sub-prefix, which may also end with "/"
// to select one folder rather than every name that starts alike.
func validSubprefix(sub string) error {
	return validName(strings.TrimSuffix(sub, "/"))
}

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '/'
}

// normalizePrefix checks the configured prefix by the rules of names and
// makes it end with "/" (empty stays empty: the whole bucket).
func normalizePrefix(prefix string) (string, error) {
	p := strings.TrimSuffix(prefix, "/")
	if p == "" {
		return "", nil
	}
	if err := validName(p); err != nil {
		return "", fmt.Errorf("prefix: %w", err)
	}
	return p + "/", nil
}
