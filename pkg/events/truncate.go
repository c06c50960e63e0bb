package events

import (
	"strconv"
	"unicode/utf8"
)

// MaxNoteBytes is the longest note the events.k8s.io API accepts (1 KiB,
// counted in bytes); a longer one makes the API server refuse the event.
const MaxNoteBytes = 1024

// Truncate returns s when it is at most maxBytes long, and otherwise its
// start followed by a suffix saying how many characters were left out, the
// whole at most maxBytes long. It cuts between runes, never inside a UTF-8
// character.
func Truncate(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	// The suffix for every character left out is the longest it can be, so
	// the cut made for it leaves room for the real one.
	cut := maxBytes - len(truncatedSuffix(utf8.RuneCountInString(s)))
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	out := s[:cut] + truncatedSuffix(utf8.RuneCountInString(s[cut:]))
	if len(out) > maxBytes {
		// Too small a limit for any suffix: the start alone.
		return s[:cut]
	}
	return out
}

func truncatedSuffix(omitted int) string {
	return " ... [" + strconv.Itoa(omitted) + " more characters]"
}
