package events

import (
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	clientevents "k8s.io/client-go/tools/events"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{name: "short", in: "node-1 unreachable", max: 64, want: "node-1 unreachable"},
		{name: "exactly the limit", in: strings.Repeat("a", 64), max: 64, want: strings.Repeat("a", 64)},
		{name: "one byte over", in: strings.Repeat("a", 65), max: 64,
			want: strings.Repeat("a", 39) + " ... [26 more characters]"},
		{name: "long", in: strings.Repeat("x", 5000), max: 1024,
			want: strings.Repeat("x", 997) + " ... [4003 more characters]"},
		// "é" is two bytes, "€" three and "😀" four: where the limit falls
		// inside one, the cut moves back before it.
		{name: "two-byte runes", in: strings.Repeat("é", 100), max: 64,
			want: strings.Repeat("é", 19) + " ... [81 more characters]"},
		{name: "three-byte runes", in: strings.Repeat("€", 100), max: 64,
			want: strings.Repeat("€", 12) + " ... [88 more characters]"},
		{name: "four-byte runes", in: strings.Repeat("😀", 100), max: 64,
			want: strings.Repeat("😀", 9) + " ... [91 more characters]"},
		{name: "limit below the suffix", in: strings.Repeat("😀", 10), max: 10, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := Truncate(tc.in, tc.max)
			g.Expect(got).To(Equal(tc.want))
			g.Expect(len(got)).To(BeNumerically("<=", tc.max))
			g.Expect(utf8.ValidString(got)).To(BeTrue(), "a character was cut in half")
		})
	}
}

func TestRecorderCapsTheNote(t *testing.T) {
	for _, tc := range []struct {
		name string
		note string
	}{
		{name: "ascii", note: strings.Repeat("node-1: i/o timeout; ", 500)},
		{name: "multi-byte", note: strings.Repeat("nœud-1 injoignable 😀; ", 500)},
		{name: "short", note: "scaled to 3 shards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			fake := clientevents.NewFakeRecorder(1)
			NewRecorder(recorderOf{fake}).Warning(&corev1.Pod{}, "Unreachable", ActionReconcile, "%s", tc.note)
			got := strings.TrimPrefix(<-fake.Events, "Warning Unreachable ")
			g.Expect(len(got)).To(BeNumerically("<=", MaxNoteBytes))
			g.Expect(utf8.ValidString(got)).To(BeTrue())
			g.Expect(got).To(Equal(Truncate(tc.note, MaxNoteBytes)))
			if len(tc.note) <= MaxNoteBytes {
				g.Expect(got).To(Equal(tc.note))
			}
		})
	}
}

// recorderOf gives client-go's fake the annotated method controller-runtime's
// recorder interface asks for.
type recorderOf struct{ *clientevents.FakeRecorder }
