package crc64jones

import "testing"

func TestChecksum(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0},
		// Redis's own test vector (src/crc64.c); real DUMP payloads check
		// the rest in pkg/rdb.
		{"123456789", 0xe9c6d914c4b8d9ca},
	} {
		if got := Checksum([]byte(tc.in)); got != tc.want {
			t.Errorf("Checksum(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
		// Fed in two parts, the checksum is the same.
		if len(tc.in) > 3 {
			if got := Update(Checksum([]byte(tc.in[:3])), []byte(tc.in[3:])); got != tc.want {
				t.Errorf("Update in parts of %q = %#x, want %#x", tc.in, got, tc.want)
			}
		}
	}
}

// bitwise is CRC-64/Jones one bit at a time, from its definition: what the
// table-driven paths, short and long, must agree with.
func bitwise(p []byte) uint64 {
	const poly = 0x95ac9329ac4bc9b5
	var crc uint64
	for _, b := range p {
		crc ^= uint64(b)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// TestEveryLengthAndSplit feeds every length to a few hundred bytes, whole
// and split at many points, so that the eight-byte steps and the byte steps
// after them meet at every alignment, and a long input too.
func TestEveryLengthAndSplit(t *testing.T) {
	p := make([]byte, 300)
	for i := range p {
		p[i] = byte(i*131 + 7)
	}
	for n := range len(p) {
		want := bitwise(p[:n])
		if got := Checksum(p[:n]); got != want {
			t.Fatalf("Checksum of %d bytes = %#x, want %#x", n, got, want)
		}
		for i := 0; i <= n; i += 13 {
			if got := Update(Checksum(p[:i]), p[i:n]); got != want {
				t.Fatalf("Update of %d bytes split at %d = %#x, want %#x", n, i, got, want)
			}
		}
	}
}

func TestLongInput(t *testing.T) {
	p := make([]byte, 1<<20+5)
	for i := range p {
		p[i] = byte(i*7919 + i>>8)
	}
	if got, want := Checksum(p), bitwise(p); got != want {
		t.Errorf("Checksum of %d bytes = %#x, want %#x", len(p), got, want)
	}
}
