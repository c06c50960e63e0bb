// Package crc64jones computes CRC-64/Jones, the checksum Redis appends to RDB
// files and DUMP payloads: reflected, polynomial 0xad93d23594c935a9, initial
// value 0, no final xor.
//
// It has tables of its own, eight bytes at a time, rather than hash/crc64's:
// for a table other than its two built-in ones, hash/crc64 builds its
// eight-byte tables again on every long update and falls back to a byte at
// a time on short ones, and a parser updates the checksum very often.
package crc64jones

import "encoding/binary"

// reversed is the polynomial bit-reversed, as a reflected CRC shifts it.
const reversed = 0x95ac9329ac4bc9b5

// tables[0] is the CRC of each byte value; tables[k] that of the byte
// followed by k zero bytes, for eight bytes at a time.
var tables = func() (t [8][256]uint64) {
	for b := range 256 {
		crc := uint64(b)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ reversed
			} else {
				crc >>= 1
			}
		}
		t[0][b] = crc
	}
	for b := range 256 {
		for k := 1; k < 8; k++ {
			prev := t[k-1][b]
			t[k][b] = t[0][byte(prev)] ^ prev>>8
		}
	}
	return t
}()

// Update returns the checksum crc extended by p; start from 0.
func Update(crc uint64, p []byte) uint64 {
	t := &tables
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][byte(crc>>24)] ^
			t[3][byte(crc>>32)] ^ t[2][byte(crc>>40)] ^ t[1][byte(crc>>48)] ^ t[0][byte(crc>>56)]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}

// Checksum returns the checksum of p.
func Checksum(p []byte) uint64 { return Update(0, p) }
