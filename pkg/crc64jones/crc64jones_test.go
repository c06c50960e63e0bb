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
